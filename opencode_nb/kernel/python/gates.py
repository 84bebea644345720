"""Where the model's code may run without touching the person's data: in a fork of the kernel, or in a worker.

A fork copies the whole process but only the thread that called it. Every lock another thread held at that
instant stays held in the copy, with nobody left to release it. So the fork is refused when:

- It would not be made from the kernel's main thread.
- The code names, imports or reaches by a `to_x`/`from_x` method a library in `FORK_UNSAFE`, or names a
  variable that is one, holds one, or (a function defined in the notebook) uses one. Read from the syntax,
  this is only the fast refusal that can name the culprit; the next two rules cover what it misses.
- A library's pool has run in the kernel, whatever the code says: a frame kept inside another object, or
  `sys.modules['pol' + 'ars']`, reaches it unnamed. Measured: once polars' compute pool ran (OS threads
  `polars-0`, `polars-1`, …) every child using polars hung (group_by 10 out of 10, even `to_arrow()`);
  polars only imported, and a fresh import in the child, worked 30 times out of 30 (the child starts a
  pool of its own). Likewise dask's threaded scheduler once its pool has a thread: the copy hands its
  tasks to an idle thread the fork did not copy (5 hangs out of 5).
- A library of `FORK_UNSAFE` whose state cannot be read (a distributed client, torch, duckdb…) is loaded
  and the code can reach modules by a computed name (`reaches_modules`: `sys`, `importlib`, `getattr`,
  `eval`, private attributes, `%run`…). That list is no proof (a library's own import helper gets
  through); what slips by waits in the copy until its deadline, and the kernel is unaffected.
- A Python thread other than the kernel's own (IOPub, heartbeat, control, shell channel, history saver, the
  threads watching fds 1/2: present in every measured fork, 300 out of 300 succeeded) is running rather
  than waiting: it may be inside BLAS (the kernel itself hung in OpenBLAS's fork handler) or a library's
  lock. A thread waiting on a lock, a queue, a selector, a child process or `time.sleep` holds none. An
  idle dask cluster's threads wait so, but its event loop wakes now and then (1% of the time), so the
  threads are looked at up to `THREAD_LOOKS` times, 2 ms apart, and the fork may go ahead after a look
  that finds them all waiting. That look is one instant: a thread that wakes between it and the fork is
  the residual race; `run_forked` forks in the same step of the event loop as the caller's check.

Objects holding connections (a dask Client, a Spark session, sqlite, sockets, open files) cannot be sent to a
worker at all: `worker_refusal` names them and says that live mode, with the person's approval, can use them.

Which variables "the code names" is read from its syntax after IPython's own transformation (`%magic` and
`!shell` lines), so a name only reached through `globals()["x"]` or `eval` is not seen: the fork sees it
anyway, a worker answers NameError.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import itertools
import linecache
import os
import re
import select
import sys
import threading
import time
import types
from collections.abc import Collection, Iterator, Mapping
from typing import Any

FORK_UNSAFE: dict[str, str] = {
    "polars": "polars, whose thread pool deadlocks in a fork",
    "duckdb": "duckdb, which runs its own thread pool",
    "torch": "torch, whose thread pools and CUDA context do not survive a fork",
    "tensorflow": "tensorflow, whose thread pools do not survive a fork",
    "jax": "jax, whose runtime threads do not survive a fork",
    "cupy": "cupy, whose CUDA context does not survive a fork",
    "cudf": "cudf, whose CUDA context does not survive a fork",
    "numba": "numba, whose threading layers are not fork-safe",
    "ray": "ray, whose runtime threads and connections do not survive a fork",
    "pyspark": "pyspark, whose session talks to a JVM over a connection the fork cannot share",
    "distributed": "a dask distributed client, whose event loop runs on a thread the fork does not copy",
    "xgboost": "xgboost, whose OpenMP thread pool is not fork-safe",
    "lightgbm": "lightgbm, whose OpenMP thread pool is not fork-safe",
    "dask": "dask, whose scheduler reuses a thread pool the fork does not copy (the copy waits for it forever)",
    "concurrent": "a thread pool (concurrent.futures), whose threads the fork does not copy",
    "multiprocessing": "a multiprocessing pool, whose handler threads the fork does not copy",
}
"""Top-level packages whose use in a forked child can hang or break it, and why (said to the model)."""

STATE_READ = frozenset({"polars", "dask", "concurrent", "multiprocessing"})
"""Libraries of FORK_UNSAFE not refused for being loaded: polars and dask are safe in a copy until their pool
has run (`started_pools` reads that), and every kernel loads the other two; an executor of theirs is only
reached through an object the code names."""

POLARS_POOL_THREAD = re.compile(r"polars-\d+")
"""The OS name of a thread of polars' compute pool; its async runtime (`tokio-rt-worker`) and its cleanup
thread exist from import on, and a copy made while only they ran worked."""

REACH_CALLS = ("__import__", "eval", "exec", "compile", "getattr", "globals", "vars", "locals")
REACH_MODULES = frozenset({"sys", "builtins", "importlib", "pkgutil", "runpy", "gc", "inspect", "ctypes", "operator",
                           "pickle", "marshal", "shelve", "copyreg", "dill", "cloudpickle", "joblib"})
REACH_ATTRIBUTES = frozenset({"modules", "import_module", "read_pickle"})
CODE_MAGICS = frozenset({"run", "rerun", "recall", "load", "macro", "load_ext", "reload_ext", "aimport"})
"""Builtins, modules, attributes (besides every `_private` one) and magics by which code reaches a module it
never names: through `sys.modules`, an import of a computed name, an object's internals, or a file it runs."""
REACH_NAMES = frozenset({*REACH_CALLS, *REACH_MODULES, "__builtins__", "get_ipython"})

KERNEL_THREAD_NAMES = frozenset({"IOPub", "Heartbeat", "Control", "Shell channel", "IPythonHistorySavingThread"})
KERNEL_THREAD_PATTERN = re.compile(r"subshell-.*|.*\(_watch_pipe_fd\)")
"""ipykernel's subshells, and the threads that forward what is written to fds 1 and 2 to the cell."""
KERNEL_THREAD_MODULES = ("ipykernel.", "IPython.", "zmq.", "jupyter_client.")
"""Thread classes defined there belong to the kernel (ParentPollerUnix carries no name of its own)."""

IDLE_FRAMES = frozenset({
    ("threading.py", "wait"),                       # Event.wait, Condition.wait, queue.Queue.get, join
    ("threading.py", "_wait_for_tstate_lock"),
    ("queue.py", "get"),
    ("selectors.py", "select"),                     # an event loop waiting for I/O (tornado, dask, asyncio)
    ("concurrent/futures/thread.py", "_worker"),    # a pool worker between tasks, in work_queue.get()
})
"""(end of file path, function): a thread whose innermost Python frame is one of these is blocked waiting,
and holds no lock a library could need. A pool worker running a C function has `run` innermost instead."""
WAITING_CALLS = tuple(getattr(module, name) for module, name in (
    (time, "sleep"), (os, "waitpid"), (os, "wait"), (os, "waitid"), (select, "select")) if hasattr(module, name))
"""C functions that only wait: a thread inside one (a profiler between samples, `Process.join`, asyncio's
child watcher) holds no lock. They have no frame of their own; `_calling` reads them from the caller's."""
THREAD_LOOKS = 5
THREAD_LOOK_GAP_S = 0.002
"""A refusal for busy threads costs up to 10 ms; an idle dask cluster's event loop, busy in 1 look out of 100
when looked at once, was never found busy 5 looks in a row in 1,000 checks."""

MAGIC_CALLS = frozenset({"run_line_magic", "run_cell_magic"})
IMPORT_CALLS = frozenset({"__import__", "import_module"})
SCAN_ITEMS = 100
"""How many items of a container named by the code are looked at (the rest is assumed alike)."""


# ---------------------------------------------------------------------------------------------- the code


def parse(code: str) -> ast.Module | None:
    """The code's syntax tree after IPython's transformation; None when it does not parse."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        source = TransformerManager().transform_cell(code)
    except Exception:  # IPython missing, or its transformer choked: read the code as plain Python
        source = code
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def names_used(code: str) -> set[str]:
    """Every name the code reads, including inside its functions and the code of its `%magic` lines.

    Code that does not parse gives every identifier in it: for a gate, too many names is the safe side.
    """
    tree = parse(code)
    if tree is None:
        return set(re.findall(r"[A-Za-z_]\w*", code))
    return _names_in(tree)


def _magic(node: ast.AST) -> tuple[str, str] | None:
    """(name, code) of IPython's `get_ipython().run_line_magic("timeit", "df.mean()")`, which `%timeit` became."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MAGIC_CALLS
            and len(node.args) >= 2):
        return None
    name, text = (a.value if isinstance(a, ast.Constant) else None for a in (node.args[0], node.args[-1]))
    return (name, text) if isinstance(name, str) and isinstance(text, str) else None


def _shell_method(node: ast.AST) -> tuple[ast.Name, str] | None:
    """The `get_ipython` name and the method of a `get_ipython().method(...)` call."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call)
            and isinstance(node.func.value.func, ast.Name) and node.func.value.func.id == "get_ipython"):
        return node.func.value.func, node.func.attr
    return None


def _names_in(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif (magic := _magic(node)) is not None:
            try:  # `%timeit df.mean()` carries its code as a string
                names |= _names_in(ast.parse(magic[1]))
            except SyntaxError:
                names |= set(re.findall(r"[A-Za-z_]\w*", magic[1]))
    return names


def _called_name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _libraries_in_syntax(tree: ast.AST) -> Iterator[str]:
    """Top-level packages the code imports, or reaches by an import string or a `to_x()`/`from_x()` method."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module.split(".")[0]
        elif isinstance(node, ast.Call) and _called_name(node.func) in IMPORT_CALLS and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield first.value.split(".")[0]
        elif isinstance(node, ast.Attribute) and node.attr.startswith(("to_", "from_")):
            yield node.attr.partition("_")[2]


def _reach_in_syntax(tree: ast.AST) -> str | None:
    """The first way the code could reach a module it does not name, as it is written there."""
    harmless: set[int] = set()  # the `get_ipython` of a `%magic` that runs no other code, or of a `!shell` line
    for node in ast.walk(tree):
        magic = _magic(node)
        if magic is not None:
            if magic[0] in CODE_MAGICS:
                return f"%{magic[0]}"
            try:
                inner = _reach_in_syntax(ast.parse(magic[1]))
            except SyntaxError:
                inner = next(iter(set(re.findall(r"[A-Za-z_]\w*", magic[1])) & REACH_NAMES), None)
            if inner is not None:
                return inner
        shell = _shell_method(node)
        if shell is not None and (magic is not None or shell[1] in ("system", "getoutput")):
            harmless.add(id(shell[0]))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in REACH_NAMES and id(node) not in harmless:
            return node.id
        if isinstance(node, ast.Attribute) and (node.attr.startswith("_") or node.attr in REACH_ATTRIBUTES):
            return f".{node.attr}"
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            reached = [m for m in modules if m.split(".")[0] in REACH_MODULES]
            if reached:
                return f"import {reached[0]}"
    return None


# ---------------------------------------------------------------------------------------------- values


def library_of(value: Any) -> str:
    """The top-level package a value comes from: a module's own, a function's or a class's, else its type's."""
    if isinstance(value, types.ModuleType):
        return value.__name__.split(".")[0]
    if isinstance(value, type | types.FunctionType | types.BuiltinFunctionType):
        return str(getattr(value, "__module__", None) or "").split(".")[0]
    if isinstance(value, types.MethodType):
        return library_of(value.__self__)
    return type(value).__module__.split(".")[0]


def _members(value: Any) -> list[Any]:
    """A few items of a plain container, to look one level inside it."""
    if isinstance(value, dict):
        return [v for _, v in zip(range(SCAN_ITEMS), value.values(), strict=False)]
    if isinstance(value, list | tuple | set | frozenset):
        return [v for _, v in zip(range(SCAN_ITEMS), value, strict=False)]
    return []


def _globals_used(function: types.FunctionType) -> list[Any]:
    """What a function defined in the notebook reads from its module: a helper that calls polars is polars."""
    found: list[Any] = []
    for code in _codes(function):
        found.extend(function.__globals__[n] for n in code.co_names if n in function.__globals__)
    return found


def _codes(function: types.FunctionType) -> Iterator[types.CodeType]:
    codes = [function.__code__]
    while codes:
        code = codes.pop()
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        yield code


def _inside(value: Any) -> list[Any]:
    """What the gates look at behind a value: a container's items, or what a notebook function reads."""
    if isinstance(value, types.FunctionType) and value.__module__ == "__main__":
        return _globals_used(value)
    return _members(value)


def _unsafe_library(value: Any, depth: int = 0) -> str | None:
    root = library_of(value)
    if root in FORK_UNSAFE:
        return root
    if depth > 0:
        return None
    return next((r for member in _inside(value) if (r := _unsafe_library(member, depth + 1)) is not None), None)


def _reaches(value: Any, depth: int = 0) -> bool:
    """Whether a value is a way to modules by name: `sys`, `importlib` or `getattr` under another name, or a
    notebook function that uses one."""
    if value is sys.modules or value is builtins or any(value is getattr(builtins, n) for n in REACH_CALLS):
        return True
    if isinstance(value, types.ModuleType | types.FunctionType | types.BuiltinFunctionType) and (
            library_of(value) in REACH_MODULES - {"builtins"}):
        return True
    if isinstance(value, types.FunctionType) and value.__module__ == "__main__" and any(
            n in REACH_NAMES or n in REACH_ATTRIBUTES or n.startswith("_") for c in _codes(value) for n in c.co_names):
        return True
    return depth == 0 and any(_reaches(member, depth + 1) for member in _inside(value))


def reaches_modules(code: str, namespace: Mapping[str, Any]) -> str | None:
    """How the code could reach a module without naming it (`sys`, `getattr`, `._private`, `%run`…), as
    written in it; None when it has no such way (or does not parse, and so cannot run), so every module it
    uses is one it names."""
    tree = parse(code)
    if tree is None:
        return None
    found = _reach_in_syntax(tree)
    if found is not None:
        return found
    return next((name for name in sorted(_names_in(tree)) if name in namespace and _reaches(namespace[name])), None)


# ---------------------------------------------------------------------------------------------- state


def _os_thread_names() -> list[str] | None:
    """The names of this process's OS threads, native ones included; None where they cannot be listed."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return None
    names = []
    for task in tasks:
        with contextlib.suppress(OSError), open(f"/proc/self/task/{task}/comm", encoding="utf-8") as comm:
            names.append(comm.read().strip())
    return names


def started_pools() -> list[str]:
    """The libraries whose thread pool has run in this process, so that a copy using it waits forever."""
    started = []
    if "polars" in sys.modules:
        names = _os_thread_names()
        if names is None or any(POLARS_POOL_THREAD.fullmatch(name) for name in names):
            started.append("polars")
    pool = getattr(sys.modules.get("dask.threaded"), "default_pool", None)
    if getattr(pool, "_threads", None):
        started.append("dask")
    return started


# ---------------------------------------------------------------------------------------------- threads


def _is_kernel_thread(thread: threading.Thread) -> bool:
    return (thread.name in KERNEL_THREAD_NAMES or KERNEL_THREAD_PATTERN.fullmatch(thread.name) is not None
            or type(thread).__module__.startswith(KERNEL_THREAD_MODULES))


def _calling(frame: types.FrameType) -> Any:
    """The function a frame is calling now, when its source names it by a global or a module's attribute
    (`sleep(...)`, `time.sleep(...)`, `os.waitpid(...)`); None otherwise. A C function has no frame of its
    own: the caller's frame stops at the call, whose place in the source its positions give."""
    code = frame.f_code
    try:
        line, end_line, column, end_column = next(itertools.islice(code.co_positions(), frame.f_lasti // 2, None))
    except (StopIteration, ValueError):
        return None
    if line is None or end_line is None or column is None or end_column is None:
        return None
    lines = [linecache.getline(code.co_filename, n).encode() for n in range(line, end_line + 1)]
    lines[-1] = lines[-1][:end_column]  # positions count UTF-8 bytes; the end first, so that the start's
    lines[0] = lines[0][column:]        # offset still holds when the call fits on one line
    try:
        call = ast.parse(b"".join(lines).decode(), mode="eval").body
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(call, ast.Call):
        return None
    path: list[str] = []
    target = call.func
    while isinstance(target, ast.Attribute):
        path.insert(0, target.attr)
        target = target.value
    if not isinstance(target, ast.Name) or target.id in code.co_varnames + code.co_cellvars + code.co_freevars:
        return None  # a local could be anything; globals and modules are read without running any code
    value = frame.f_globals.get(target.id, vars(builtins).get(target.id))
    for attribute in path:
        value = vars(value).get(attribute) if isinstance(value, types.ModuleType) else None
    return value


def _is_idle(frame: types.FrameType | None) -> bool:
    if frame is None:  # a thread of C code that once called Python: nothing tells what it does now
        return False
    path = frame.f_code.co_filename.replace(os.sep, "/")
    if any(path.endswith("/" + file) and frame.f_code.co_name == function for file, function in IDLE_FRAMES):
        return True
    calling = _calling(frame)
    return calling is not None and any(calling is waiting for waiting in WAITING_CALLS)


def busy_threads(allowed: Collection[threading.Thread] = ()) -> list[threading.Thread]:
    """Python threads other than this one that are neither the kernel's nor waiting, nor in `allowed`."""
    frames = sys._current_frames()
    me = threading.current_thread()
    return [t for t in threading.enumerate()
            if t is not me and t.is_alive() and t not in allowed and not _is_kernel_thread(t)
            and not _is_idle(frames.get(t.ident or -1))]


# ---------------------------------------------------------------------------------------------- the gates


def fork_refusal(code: str, namespace: Mapping[str, Any], *,
                 allowed_threads: Collection[threading.Thread] = ()) -> str | None:
    """Why forking the kernel to run `code` is unsafe now; None when it is safe.

    The threads are looked at last, so that the look that lets the fork go ahead is the one nearest to it.

    Args:
        allowed_threads: threads known to be harmless besides the kernel's own and the idle ones (a test
            runner's, say).
    """
    if not hasattr(os, "fork"):
        return "this platform has no fork"
    if sys.platform == "darwin":
        return "on macOS a fork that does not exec is unsafe with the system's libraries"
    if threading.current_thread() is not threading.main_thread():
        return "the fork must be made from the kernel's main thread"
    tree = parse(code)
    if tree is not None:
        for root in _libraries_in_syntax(tree):
            if root in FORK_UNSAFE:
                return f"the code uses {FORK_UNSAFE[root]}"
    for name in sorted(names_used(code)):
        if name in namespace:
            unsafe = _unsafe_library(namespace[name])
            if unsafe is not None:
                return f"`{name}` involves {FORK_UNSAFE[unsafe]}"
    for root in started_pools()[:1]:
        return (f"the thread pool of {root} has run in this kernel, and a copy that reaches {root} by any route "
                f"(a frame inside another object, a module looked up by name) waits for it forever")
    loaded = [root for root in FORK_UNSAFE if root in sys.modules and root not in STATE_READ]
    if loaded:
        reach = reaches_modules(code, namespace)
        if reach is not None:
            return (f"`{reach}` can reach any loaded module by a computed name, and {loaded[0]} is loaded: "
                    f"{FORK_UNSAFE[loaded[0]]}")
    busy = busy_threads(allowed_threads)
    for _ in range(THREAD_LOOKS - 1):
        if not busy:
            break
        time.sleep(THREAD_LOOK_GAP_S)
        busy = busy_threads(allowed_threads)
    if busy:
        names = ", ".join(sorted(t.name for t in busy))
        return (f"other threads are running ({names}); a fork made while a thread is inside a library can "
                "leave its locks held forever in the copy, or hang the kernel")
    return None


def connection_of(value: Any) -> str | None:
    """What live connection a value holds, said for the model; None when it holds none we know of."""
    kind = type(value)
    module, name = kind.__module__, kind.__qualname__
    sqlite3 = sys.modules.get("sqlite3")
    if sqlite3 is not None and isinstance(value, sqlite3.Connection | sqlite3.Cursor):
        return "a sqlite3 connection to a database file"
    socket = sys.modules.get("socket")
    if socket is not None and isinstance(value, socket.socket):
        return "an open network socket"
    io = sys.modules["io"]
    if isinstance(value, io.IOBase) and not value.closed:
        return "an open file (open it again from its path in the code)"
    root = module.split(".")[0]
    if root == "distributed" and name == "Client":
        return "a dask distributed Client, connected to its scheduler"
    if root == "pyspark":
        return "a Spark object, tied to its session's JVM"
    if root in {"duckdb", "psycopg", "psycopg2", "pymysql", "pymongo", "redis", "sqlalchemy"} and any(
            word in name for word in ("Connection", "Cursor", "Engine", "Session", "Client", "Pool")):
        return f"a {root} {name}, which holds a connection"
    return None


def worker_refusal(code: str, namespace: Mapping[str, Any]) -> str | None:
    """Why the variables the code names cannot be sent to a worker; None when they can (or can be skipped)."""
    for name in sorted(names_used(code)):
        if name not in namespace:
            continue
        value = namespace[name]
        held = connection_of(value)
        where = f"`{name}` is"
        if held is None:
            for member in _members(value):
                held = connection_of(member)
                if held is not None:
                    where = f"`{name}` holds"
                    break
        if held is not None:
            return (f"{where} {held}, which a separate process cannot share: the code needs live mode (the "
                    "person's own namespace, with their approval)")
    return None
