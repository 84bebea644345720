"""Where the model's code may run without touching the person's data: in a fork of the kernel, or in a worker.

A fork copies the whole process but only the thread that called it. Every lock another thread held at that
instant stays held in the copy, with nobody left to release it. Three things follow:

- Fork only from the kernel's main thread, and only while every other Python thread is either one of the
  kernel's own (IOPub, heartbeat, control, shell channel, history saver, the threads watching fds 1/2: they
  were there in every measured fork, 300 out of 300 succeeded) or idle: blocked waiting on a lock, a queue, a
  selector or a child process, which holds no library lock. A thread running anything else may be inside
  BLAS (measured: the kernel itself hung in OpenBLAS's fork handler) or inside a library's own lock.
  What is checked is one instant: a waiting thread that wakes between the check and the fork is the
  residual race. `run_forked` forks in the same step of the event loop as the caller's check, so only
  another thread waking up can slip in.
- Libraries that keep their own thread pools do not survive a fork: polars deadlocked in 10 out of 10
  children (even with one thread), and the rest of `FORK_UNSAFE` run pools, CUDA contexts or event-loop
  threads of their own. So do thread pools made before the fork (measured: a `ThreadPoolExecutor` and dask's
  scheduler, both used by the parent, left the child waiting forever). The code is refused when it imports
  one of these, reaches one through a `to_x`/`from_x` method or `import_module("x")`, or names a variable
  that is one, holds one, or (a function defined in the notebook) uses one.
- Objects holding connections (a dask Client, a Spark session, sqlite, sockets, open files) cannot be sent to
  a worker at all: `worker_refusal` names them and says that live mode, with the person's approval, can use
  them.

Which variables "the code names" is read from its syntax after IPython's own transformation (`%magic` and
`!shell` lines), so a name only reached through `globals()["x"]` or `eval` is not seen: the fork sees it
anyway, a worker answers NameError.
"""

from __future__ import annotations

import ast
import os
import re
import sys
import threading
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
    ("asyncio/unix_events.py", "_do_waitpid"),      # 3.11's child watcher, blocked in waitpid()
})
"""(end of file path, function): a thread whose innermost Python frame is one of these is blocked waiting,
and holds no lock a library could need. A pool worker running a C function has `run` innermost instead."""

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


def _names_in(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MAGIC_CALLS
              and node.args and isinstance(node.args[-1], ast.Constant) and isinstance(node.args[-1].value, str)):
            try:  # `%timeit df.mean()` carries its code as a string
                names |= _names_in(ast.parse(node.args[-1].value))
            except SyntaxError:
                names |= set(re.findall(r"[A-Za-z_]\w*", node.args[-1].value))
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
    codes = [function.__code__]
    while codes:
        code = codes.pop()
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        found.extend(function.__globals__[n] for n in code.co_names if n in function.__globals__)
    return found


def _unsafe_library(value: Any, depth: int = 0) -> str | None:
    root = library_of(value)
    if root in FORK_UNSAFE:
        return root
    if depth > 0:
        return None
    inside = _members(value)
    if isinstance(value, types.FunctionType) and value.__module__ == "__main__":
        inside = _globals_used(value)
    for member in inside:
        root = _unsafe_library(member, depth + 1)
        if root is not None:
            return root
    return None


# ---------------------------------------------------------------------------------------------- threads


def _is_kernel_thread(thread: threading.Thread) -> bool:
    return (thread.name in KERNEL_THREAD_NAMES or KERNEL_THREAD_PATTERN.fullmatch(thread.name) is not None
            or type(thread).__module__.startswith(KERNEL_THREAD_MODULES))


def _is_idle(frame: types.FrameType | None) -> bool:
    if frame is None:  # a thread of C code that once called Python: nothing tells what it does now
        return False
    path = frame.f_code.co_filename.replace(os.sep, "/")
    return any(path.endswith("/" + file) and frame.f_code.co_name == function for file, function in IDLE_FRAMES)


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
    busy = busy_threads(allowed_threads)
    if busy:
        names = ", ".join(sorted(t.name for t in busy))
        return (f"other threads are running ({names}); a fork made while a thread is inside a library can "
                "leave its locks held forever in the copy, or hang the kernel")
    tree = parse(code)
    if tree is not None:
        for root in _libraries_in_syntax(tree):
            if root in FORK_UNSAFE:
                return f"the code uses {FORK_UNSAFE[root]}"
    for name in sorted(names_used(code)):
        if name in namespace:
            root = _unsafe_library(namespace[name])
            if root is not None:
                return f"`{name}` involves {FORK_UNSAFE[root]}"
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
