"""Running the model's code in a spawned worker given copies of the variables it names.

The fallback when a fork is unsafe (see `gates`) or impossible (Windows; macOS refuses it). The worker is a
fresh `python -m opencode_nb.kernel.worker`, in a session of its own so one kill ends whatever it starts.
It is spawned first and sent its job on stdin once the variables are written, so its imports (about half
a second) overlap the copying.

What it is sent: only the variables the code names (from its syntax, see `gates.names_used`).

- Modules go as their names and are imported again (`pd`, `np`), as do functions and classes that live
  in a module; functions defined in the notebook go as their source, with what that source names.
- Frames go as Arrow IPC files in /dev/shm when there is room (pandas through pyarrow, polars natively):
  at 1 GB, 3.75 s against 5.17 s pickled. Everything else is pickled (protocol 5).
- All of it within `max_bytes`: other values first, whole or not at all; frames then share what is left,
  and a frame too big for its share is sent as a random sample of its rows in their original order,
  which the notes say (with the factor that scales counts and sums back).
- What cannot be copied (a generator, a lock) is left out and the notes say why. Objects holding
  connections are refused before anything starts (`worker_refusal`).

The copy is taken on the kernel's loop thread: a consistent snapshot, which the person's next cell cannot
change halfway; the kernel pauses for it (about a second per 500 MB).

The worker answers on its original stdout, in the frames the fork uses (output as it is written, then the
run as JSON); the code's own fd 1 is pointed at stderr, which the parent reads as C-level output.
The parent watches it as it watches a fork: deadline and memory budget from the moment its variables are
loaded, process group killed on timeout, memory or cancellation.

On Linux with a working bubblewrap the worker runs inside it (`tool/support/bwrap.py`): the filesystem
read-only except its scratch folder, a private /tmp, no network, the Jupyter runtime folder and /run masked,
and a PID namespace of its own, so it can neither see nor signal the kernel, and what it starts ends with it.
It then puts the seccomp filter of a confined fork on itself (no Unix sockets, no ptrace, no io_uring)
before reading its job. The kernel watches the memory of the whole tree below bwrap, and kills that tree.
Without bubblewrap the worker runs isolated at the Python level only, which the run says (`sandbox: required`
refuses it). Scratch folders are named for their kernel's PID, so a worker starting removes those whose
kernel died before it could.
Matplotlib, which insists on a writable config folder, gets one in the scratch folder, seeded with the
person's matplotlibrc and font list.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import io
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import types
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

from .. import secrets
from ..sandbox.confine import Report, remove_stale
from ..tool.support.bwrap import bwrap_args
from ..tool.support.ossandbox import BWRAP_ENV, Backend, find_backend_async
from ..values import CodeRun
from .gates import names_used, worker_refusal
from .live import HIDDEN
from .sandbox import limit_address_space, run_and_compare
from .supervise import READY, Channel, failed, finish, kill_tree, private_kb, sandbox_failure, supervise, tree

__all__ = ["run_in_worker", "worker_refusal"]

STARTUP_S = 60.0
"""How long the worker may take to start and load its variables before the deadline for the code starts."""
KEEP_STDERR_BYTES = 2**20
SAMPLE_SEED = 0
SCRATCH_PREFIX = "opencode-nb-worker-"
"""A worker's scratch folder, named for the kernel that made it (`<prefix><pid>-…`)."""
CONFINED_FLAG = "--confined"
"""Tells the worker it runs under bwrap: it filters its own system calls, and its kernel is not visible."""
SOURCE_DEPTH = 3
"""How many levels of notebook functions calling notebook functions are sent as source."""


async def run_in_worker(code: str, namespace: Mapping[str, Any], *, timeout_s: float = 60, memory_mb: int = 2048,
                        max_bytes: int = 512 * 2**20, on_output: Callable[[str], None] | None = None,
                        confine: bool = True, required: bool = False) -> CodeRun:
    """Run `code` in a spawned worker that receives copies of the variables it names.

    Args:
        timeout_s: the code's time, counted once the worker has loaded its variables.
        memory_mb: what the code may use beyond the loaded variables before the worker is killed.
        max_bytes: what all the variables may take together; big frames are sampled to fit.
        on_output: told the code's stdout/stderr as it comes, on the loop's thread.
        confine: run it in the OS sandbox where there is one (`sandbox` other than `off`).
        required: without the OS sandbox the code is not run.
    """
    started = time.perf_counter()
    directory = _scratch_dir(max_bytes)
    remove_stale(directory or tempfile.gettempdir(), SCRATCH_PREFIX)
    with tempfile.TemporaryDirectory(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-", dir=directory) as scratch:
        env = _environment()
        argv = [sys.executable, "-m", "opencode_nb.kernel.worker", str(os.getpid())]
        sandboxed, why_not = await _confine(argv, Path(scratch), env) if confine else (None, "`sandbox: off`")
        if sandboxed is None and required:
            return failed("worker", f"not run: this workspace requires an OS sandbox (`sandbox: required`) and the "
                                    f"worker cannot have one here ({why_not})", started,
                          hint="Not run: the worker would have been isolated at the Python level only, and the "
                               "workspace requires an OS sandbox. Tell the person; retrying will not help.")
        try:
            proc = await asyncio.create_subprocess_exec(
                *(sandboxed or argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                start_new_session=os.name == "posix")
        except OSError as exc:
            return failed("worker", f"the worker could not be started: {exc}", started)
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        marking = asyncio.ensure_future(_last_in_line(proc.pid)) if sandboxed is not None else None
        stderr = asyncio.ensure_future(_collect(proc.stderr))
        try:
            job, notes = pack(code, namespace, Path(scratch), max_bytes)
            job["memory_mb"] = memory_mb
            with contextlib.suppress(ConnectionError):  # it died already: the outcome says how
                proc.stdin.write(json.dumps(job).encode())
                await proc.stdin.drain()
                proc.stdin.close()
            outcome = await supervise(proc.stdout, lambda: _kill(proc), pid=proc.pid, timeout_s=timeout_s,
                                      memory_mb=memory_mb, on_output=on_output, startup_s=STARTUP_S)
        finally:
            _kill(proc)
            if marking is not None:
                marking.cancel()
            returncode = await proc.wait()
            await asyncio.wait({stderr}, timeout=0.5)  # a grandchild in another session may hold it open
            stderr.cancel()
    c_output = stderr.result() if stderr.done() and not stderr.cancelled() else ""
    ended = f"it exited with status {returncode}" if returncode >= 0 else f"it was killed by signal {-returncode}"
    outcome.confinement = BWRAP_REPORT.to_json() if sandboxed is not None else Report(
        "none", why_not=(why_not,)).to_json()
    return finish(outcome, mode="worker", c_output=c_output, ended=ended, timeout_s=timeout_s,
                  memory_mb=memory_mb, started=started, notes=notes)


BWRAP_REPORT = Report("namespaces", ("files", "network", "processes", "unix sockets"))
"""The worker's confinement: bubblewrap's namespaces, and the seccomp filter the worker puts on itself."""


async def _confine(argv: list[str], scratch: Path, env: dict[str, str]) -> tuple[list[str] | None, str]:
    """`argv` under bwrap when it works here (`OPENCODE_NB_BWRAP` chooses the binary, as for shell commands),
    with the worker told to filter its own system calls; else None and why not."""
    if not sys.platform.startswith("linux"):
        return None, f"there is no OS sandbox for the worker on {sys.platform}"
    found = await find_backend_async(os.environ.get(BWRAP_ENV))
    if not isinstance(found, Backend) or found.kind != "bwrap":
        return None, str(found)
    _seed_matplotlib(scratch / "matplotlib", env)
    cwd = Path.cwd() if Path.cwd().is_dir() else Path("/")
    # The kernel's folder (the notebook's, whose data files the code reads by relative paths) stays readable
    # even where the sandbox hides what is around it, as under /tmp.
    return [*bwrap_args(found.binary, writable=[scratch], readable=[cwd], network=False, cwd=cwd),
            *argv, CONFINED_FLAG], ""


def _seed_matplotlib(folder: Path, env: dict[str, str]) -> None:
    """A writable MPLCONFIGDIR holding copies of the person's matplotlibrc, styles and font list: without one,
    matplotlib warns on every import and rebuilds the font list."""
    home = Path.home()
    config = Path(env.get("MPLCONFIGDIR") or Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "matplotlib")
    cache = Path(env.get("MPLCONFIGDIR") or Path(env.get("XDG_CACHE_HOME") or home / ".cache") / "matplotlib")
    folder.mkdir(exist_ok=True)
    with contextlib.suppress(OSError):
        for source in [config / "matplotlibrc", *cache.glob("fontlist-*.json")]:
            if source.is_file():
                shutil.copyfile(source, folder / source.name)
        if (config / "stylelib").is_dir():
            shutil.copytree(config / "stylelib", folder / "stylelib")
    env["MPLCONFIGDIR"] = str(folder)


async def _last_in_line(pid: int) -> None:
    """Make the worker, once bwrap has started it below its own init, the OOM killer's first choice (its
    /proc is read-only from inside)."""
    for _ in range(400):
        below = tree(pid)[1:]
        if len(below) >= 2 or (below and _command(below[-1]) != "bwrap"):
            for process in below:
                with contextlib.suppress(OSError), open(f"/proc/{process}/oom_score_adj", "w") as adj:
                    adj.write("1000")
            return
        await asyncio.sleep(0.005)


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _kill(proc: asyncio.subprocess.Process) -> None:
    """The worker and everything below it (bwrap, its init, what the code started)."""
    if os.name == "posix":
        kill_tree(proc.pid)
    else:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


async def _collect(stream: asyncio.StreamReader) -> str:
    kept = bytearray()
    while chunk := await stream.read(65536):
        kept += chunk[: max(0, KEEP_STDERR_BYTES - len(kept))]
    return kept.decode("utf-8", "replace")


def _scratch_dir(max_bytes: int) -> str | None:
    """/dev/shm (memory, no disk) when it has room for the copies, else the usual temporary directory."""
    with contextlib.suppress(OSError):
        if shutil.disk_usage("/dev/shm").free > 2 * max_bytes and os.access("/dev/shm", os.W_OK):
            return "/dev/shm"
    return None


def _environment() -> dict[str, str]:
    """The kernel's environment without its secrets (`secrets.child_env`), with this package importable and a
    matplotlib backend that needs no screen (a kernel's inline backend is kept: it displays figures through the
    worker's shell)."""
    env = secrets.child_env(os.environ)
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    env.setdefault("MPLBACKEND", "Agg")
    return env


# ---------------------------------------------------------------------------------------------- packing


class _TooBig(Exception):
    pass


class _Capped:
    """A file that refuses to grow past `limit` bytes, so pickling a huge object stops early."""

    def __init__(self, file: io.BufferedWriter, limit: int) -> None:
        self.file = file
        self.limit = limit
        self.written = 0

    def write(self, data: Any) -> int:
        self.written += memoryview(data).nbytes
        if self.written > self.limit:
            raise _TooBig
        return self.file.write(data)


def _frame_type(value: Any) -> str | None:
    """"pandas"/"pandas-series"/"polars"/"polars-series" for the frames sent as Arrow; None otherwise."""
    for library in ("pandas", "polars"):
        module = sys.modules.get(library)
        if module is None:
            continue
        if isinstance(value, module.DataFrame):
            return library
        if isinstance(value, module.Series):
            return library + "-series"
    return None


def _frame_bytes(value: Any, kind: str) -> int:
    """A frame's size in memory, cheaply: with text or object columns, from its first 1,000 rows (measuring
    every string of a 5M-row column takes 0.4 s)."""
    if kind.startswith("polars"):
        return int(value.estimated_size())
    frame = value.to_frame() if kind == "pandas-series" else value
    if len(frame) <= 1000 or all(dtype.kind in "biufcmM" for dtype in frame.dtypes):
        return int(frame.memory_usage(index=True, deep=len(frame) <= 1000).sum())
    return int(frame.iloc[:1000].memory_usage(index=True, deep=True).sum() * len(frame) / 1000)


def _notebook_source(value: Any) -> str | None:
    """A function's or class's source when it was defined in the notebook (IPython keeps cells' lines)."""
    if getattr(value, "__module__", None) != "__main__":
        return None
    try:
        return textwrap.dedent(inspect.getsource(value))
    except (OSError, TypeError):
        return None


def pack(code: str, namespace: Mapping[str, Any], directory: Path, max_bytes: int) -> tuple[dict[str, Any], list[str]]:
    """Write copies of the variables the code names into `directory`; the worker's job, and notes for the run."""
    entries: list[dict[str, Any]] = []
    sources: list[dict[str, Any]] = []
    notes: list[str] = []
    frames: list[tuple[str, Any, str, int]] = []
    others: list[tuple[str, Any]] = []
    seen: set[str] = set()
    wanted = [(name, 0) for name in sorted(names_used(code))]
    while wanted:
        name, depth = wanted.pop(0)
        if name in seen or name not in namespace or name in HIDDEN or name.startswith("__"):
            continue
        seen.add(name)
        value = namespace[name]
        if isinstance(value, types.ModuleType):
            entries.append({"name": name, "kind": "module", "module": value.__name__})
        elif isinstance(value, types.FunctionType | type) and value.__module__ == "__main__":
            source = _notebook_source(value)
            if source is None or depth >= SOURCE_DEPTH:
                notes.append(f"Not sent to the worker: `{name}`, defined in the notebook, whose source could not "
                             "be found; define it again in the code.")
                continue
            sources.append({"name": name, "defines": value.__name__, "source": source})
            wanted.extend((n, depth + 1) for n in sorted(names_used(source)))
        elif (kind := _frame_type(value)) is not None:
            frames.append((name, value, kind, _frame_bytes(value, kind)))
        else:
            others.append((name, value))
            if type(value).__module__ == "__main__":  # an instance of a notebook class: send the class too
                wanted.append((type(value).__name__, depth + 1))
    budget = max_bytes
    for name, value in others:
        path = directory / f"{len(entries)}.pickle"
        try:
            with open(path, "wb") as file:
                capped = _Capped(file, budget)
                pickle.dump(value, capped, protocol=5)  # type: ignore[arg-type]
        except _TooBig:
            path.unlink(missing_ok=True)
            notes.append(f"Not sent to the worker: `{name}` ({type(value).__name__}), bigger than the "
                         f"{_mb(budget)} left of the worker's {_mb(max_bytes)}.")
            continue
        except Exception as exc:
            path.unlink(missing_ok=True)
            notes.append(f"Not sent to the worker: `{name}` ({type(value).__name__}) cannot be copied to "
                         f"another process ({exc}).")
            continue
        budget -= capped.written
        entries.append({"name": name, "kind": "pickle", "path": str(path)})
    total = sum(size for *_, size in frames)
    for name, value, kind, size in frames:
        share = budget if total <= budget else int(budget * size / total)
        rows = len(value)
        if size > share and rows:
            keep = max(1, int(rows * share / size))
            value = _sample(value, keep)
            notes.append(f"`{name}` has {rows:,} rows (about {_mb(size)}), more than the worker could be sent "
                         f"({_mb(max_bytes)} for all variables): it got a random sample of {keep:,} rows, in "
                         f"their original order. Figures computed from it are estimates (scale counts and sums "
                         f"by {rows / keep:.3g}); live mode sees every row.")
        entry = _write_frame(name, value, kind, directory / f"{len(entries)}.arrow")
        if entry is None:
            notes.append(f"Not sent to the worker: `{name}`, a frame neither Arrow nor pickle could copy.")
        else:
            entries.append(entry)
    job = {"code": code, "entries": entries, "sources": sources, "sys_path": sys.path, "cwd": os.getcwd()}
    return job, notes


def _mb(size: int) -> str:
    return f"{size / 2**20:,.0f} MB"


def _sample(value: Any, keep: int) -> Any:
    import numpy as np

    rows = np.sort(np.random.default_rng(SAMPLE_SEED).choice(len(value), size=keep, replace=False, shuffle=False))
    return value.take(rows) if hasattr(value, "iloc") else value[rows]


def _write_frame(name: str, value: Any, kind: str, path: Path) -> dict[str, Any] | None:
    """Arrow IPC when it can (polars natively, pandas through pyarrow), else a pickle; None when neither can."""
    entry = {"name": name, "kind": kind, "path": str(path)}
    try:
        if kind == "polars":
            value.write_ipc(path)
        elif kind == "polars-series":
            value.to_frame().write_ipc(path)
        else:
            import pyarrow as pa

            frame = value.to_frame() if kind == "pandas-series" else value
            table = pa.Table.from_pandas(frame, preserve_index=True)
            with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
            entry["unnamed"] = kind == "pandas-series" and value.name is None
        return entry
    except Exception:  # no pyarrow, or a column Arrow cannot hold (mixed objects): pickle keeps anything
        path = path.with_suffix(".pickle")
        try:
            with open(path, "wb") as file:
                pickle.dump(value, file, protocol=5)
        except Exception:
            path.unlink(missing_ok=True)
            return None
        return {"name": name, "kind": "pickle", "path": str(path)}


# ---------------------------------------------------------------------------------------------- the worker


def _load(job: dict[str, Any], namespace: dict[str, Any]) -> list[str]:
    """Bind the variables the parent sent: modules, then notebook functions and classes (pickled instances
    of those classes need them), then the data."""
    notes: list[str] = []
    entries = job["entries"]
    for entry in [e for e in entries if e["kind"] == "module"]:
        try:
            namespace[entry["name"]] = importlib.import_module(entry["module"])
        except Exception as exc:
            notes.append(f"`{entry['name']}` (module {entry['module']}) could not be imported in the worker: {exc}")
    for source in reversed(job["sources"]):  # the deepest helpers first
        try:
            exec(compile(source["source"], "<notebook>", "exec"), namespace)
            if source["name"] != source["defines"]:
                namespace[source["name"]] = namespace[source["defines"]]
        except Exception as exc:
            notes.append(f"`{source['name']}` could not be defined again in the worker: {exc!r}")
    for entry in [e for e in entries if e["kind"] != "module"]:
        try:
            namespace[entry["name"]] = _read(entry)
        except Exception as exc:
            notes.append(f"`{entry['name']}` could not be loaded in the worker: {exc!r}")
    return notes


def _read(entry: dict[str, Any]) -> Any:
    kind, path = entry["kind"], entry["path"]
    if kind == "pickle":
        with open(path, "rb") as file:
            return pickle.load(file)  # written by the kernel that spawned us, a moment ago
    if kind.startswith("polars"):
        import polars as pl

        frame = pl.read_ipc(path)
        return frame.to_series() if kind == "polars-series" else frame
    import pyarrow as pa

    with pa.memory_map(path) as source:
        frame = pa.ipc.open_file(source).read_all().to_pandas()
    if kind == "pandas":
        return frame
    series = frame.iloc[:, 0]
    if entry.get("unnamed"):
        series.name = None
    return series


def _shell() -> Any:
    """A plain IPython shell (about 20 ms): magics, `display()` and the formatters a cell would use."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    config.InteractiveShell.warn_venv = False
    return InteractiveShell.instance(config=config)


def main() -> NoReturn:
    """The worker's life: job on stdin, frames on (the original) stdout, then `os._exit`."""
    channel = Channel(os.dup(1))
    os.dup2(2, 1)  # the code's C-level stdout joins stderr, which the parent reads as such
    sys.stdout = open(1, "w", encoding="utf-8", errors="replace", closefd=False, buffering=1)  # noqa: SIM115
    try:
        with contextlib.suppress(OSError):
            os.nice(10)  # as a fork does: the kernel's cells come first
        confined = CONFINED_FLAG in sys.argv[2:]
        if confined:
            _filter_own_calls()
        elif sys.platform.startswith("linux"):
            import ctypes
            import signal

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
            with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as adj:
                adj.write("1000")
            if int(sys.argv[1]) != os.getppid():
                os._exit(1)
        with warnings.catch_warnings():  # the worker's own start-up says nothing to the model
            warnings.simplefilter("ignore")
            shell = _shell()
            job = json.loads(sys.stdin.buffer.read())
            sys.path[:] = [*job["sys_path"], *(p for p in sys.path if p not in job["sys_path"])]
            with contextlib.suppress(OSError):
                os.chdir(job["cwd"])
            notes = _load(job, shell.user_ns)
        channel.send(READY, str(private_kb("self") or 0).encode())
        limit_address_space(job["memory_mb"])
        channel.finish(run_and_compare(job["code"], shell.user_ns, shell, channel, mode="worker", notes=notes))
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            channel.finish(sandbox_failure("worker", exc))
    finally:
        os._exit(0)


def _filter_own_calls() -> None:
    """Under bwrap (which dies with the kernel, and hides it): the same seccomp filter as a confined fork, so no
    Unix socket is reachable (a kernel on the `ipc` transport listens on one) nor any of the refused calls."""
    from ..sandbox.linux import load
    from ..sandbox.seccomp import Filter

    libc = load()
    if libc is None:
        raise RuntimeError("the worker cannot filter its system calls on this machine")
    libc.no_new_privileges()
    Filter(libc.arch, all_sockets=False).install(libc)


if __name__ == "__main__":
    main()

