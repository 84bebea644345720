"""Running the model's code in a spawned worker given copies of the variables it names.

The fallback when a fork is unsafe (see `gates`) or impossible (Windows; macOS refuses it). The worker is a
fresh `python -m opencode_nb.kernel.python.worker`, in a session of its own so one kill ends whatever it starts.
It is spawned first and sent its job on stdin once the variables are written, so its imports (about half
a second) overlap the copying.

What it is sent, and how it is read back, is `copies.py`.

The worker answers on its original stdout, in the frames the fork uses (output as it is written, then the
run as JSON); the code's own fd 1 is pointed at stderr, which the parent reads as C-level output.
The parent watches it as it watches a fork: deadline and memory budget from the moment its variables are
loaded, process group killed on timeout, memory or cancellation.

On Linux with a working bubblewrap the worker runs inside it (`sandbox/bwrap.py`): the filesystem
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
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

from ... import secrets
from ...sandbox.bwrap import bwrap_args
from ...sandbox.confine import Report, remove_stale
from ...sandbox.policy import BWRAP_ENV, Backend, find_backend_async
from ...values import NOT_CONFINED, CodeRun
from .copies import load, pack
from .fork import limit_address_space, run_and_compare
from .gates import worker_refusal
from .supervise import READY, Channel, failed, finish, kill_tree, private_kb, sandbox_failure, supervise, tree

__all__ = ["run_in_worker", "worker_refusal"]

STARTUP_S = 60.0
"""How long the worker may take to start and load its variables before the deadline for the code starts."""
KEEP_STDERR_BYTES = 2**20
SCRATCH_PREFIX = "opencode-nb-worker-"
"""A worker's scratch folder, named for the kernel that made it (`<prefix><pid>-…`)."""
CONFINED_FLAG = "--confined"
"""Tells the worker it runs under bwrap: it filters its own system calls, and its kernel is not visible."""


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
        argv = [sys.executable, "-m", "opencode_nb.kernel.python.worker", str(os.getpid())]
        sandboxed, why_not = await _confine(argv, Path(scratch), env) if confine else (None, "`sandbox: off`")
        if sandboxed is None and required:
            return failed("worker", f"not run: this workspace requires an OS sandbox (`sandbox: required`) and the "
                                    f"worker cannot have one here ({why_not})", started,
                          ename=NOT_CONFINED,
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
    package_root = str(Path(__file__).resolve().parents[len(__name__.split(".")) - 1])  # the folder of opencode_nb/
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    env.setdefault("MPLBACKEND", "Agg")
    return env


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
            notes = load(job, shell.user_ns)
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
    from ...sandbox.linux import load
    from ...sandbox.seccomp import Filter

    libc = load()
    if libc is None:
        raise RuntimeError("the worker cannot filter its system calls on this machine")
    libc.no_new_privileges()
    Filter(libc.arch, all_sockets=False).install(libc)


if __name__ == "__main__":
    main()

