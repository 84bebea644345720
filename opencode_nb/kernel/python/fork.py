"""Running the model's code in a copy-on-write fork of the live kernel: it sees every variable, changes none.

The child is the kernel at the instant of the fork. Whatever it changes is its own copy; memory pages are
copied only when written, so reading a 1 GB numeric frame costs the child a few MB. Before running
anything the child does, in this order:

1. `setpgid(0, 0)`: a process group of its own, so one kill also ends what it started (`os.system`, a
   subprocess). The parent makes the same call, so the group exists whichever of the two runs first.
2. `PR_SET_PDEATHSIG` = SIGKILL: it dies with the kernel (strictly, with the thread that forked it: the
   kernel's main thread, which lives as long as the kernel). A kernel already gone by then: it exits.
3. `oom_score_adj` = 1000: under memory pressure the OOM killer takes the child, not the kernel; and a nice
   value of 10, so a child that spins leaves the CPU to the kernel's cells.
4. `gc.freeze()`: a full collection writes to the header of every tracked object, which would copy every
   page holding one; frozen, the child's collections only visit what it creates.
5. Descriptors: /dev/null on 0; on 1 and 2 a memfd the parent made before the fork (C-level output and
   `os.system` land there, and the parent reads it even after a kill; its size is sealed at 4 MB); on
   every other inherited descriptor but the result pipe, an O_PATH descriptor of /dev/null, which fails
   every read and write. An inherited sqlite, socket or file handle then fails loudly instead of writing
   into the person's database or connection, and its number stays taken, so a file the code opens never
   gets it.
6. RLIMIT_AS = the address space now + the budget: one big allocation fails with MemoryError.
7. Streams: sys.stdout/sys.stderr onto fd 1, and the kernel's own stream objects (ipykernel forwards a
   forked child's writes to the parent's cell) made to write to the new sys.stdout/sys.stderr, for
   whatever still holds them, such as a logging handler. `run_code` then captures the code's writes, and
   its `display()` calls through the shell.
8. The inherited event loop is forgotten, never driven (its epoll descriptor is shared with the kernel's),
   so the code may call `asyncio.run()`; `input()` fails at once instead of asking the front end.

The child always ends in `os._exit()`, from a `finally`: falling back into the kernel's loop would leave a
hung clone of the kernel, and a normal exit would run the kernel's atexit hooks (one deletes the
connection file).

The parent never blocks (supervise.py, shared with the spawned worker). The event loop reads the result pipe, which
carries frames: the output as it is written (the tool card streams it), then the run as JSON. A watchdog reads the
child's private memory every 50 ms and kills it past the budget: pages it copied or allocated count, pages still
shared with the kernel do not (a page the kernel writes after the fork becomes the child's alone, and counts too).
A deadline kills it at `timeout_s`. Cancelling the awaiting task (Stop, or the kernel's interrupt) kills its
process group and reaps it before CancelledError goes on.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import gc
import json
import os
import signal
import sys
import threading
import time
import warnings
from typing import Any, NoReturn

from ... import secrets
from ...sandbox.confine import MECHANISMS, Mechanism, Plan, Report, await_end, enter, prepare
from ...values import NOT_CONFINED, CodeError, CodeRun, NamespaceChanges
from .execute import run_code
from .gates import fork_refusal
from .live import compare, maybe_mutated, visible
from .supervise import (
    CONFINED,
    Channel,
    Mode,
    Outcome,
    Output,
    describe_exit,
    failed,
    finish,
    kill_tree,
    reap,
    sandbox_failure,
    status_kb,
    supervise,
)

__all__ = ["fork_refusal", "run_forked"]

NICENESS = 10
"""A sandbox yields the CPU to the kernel: on a machine with few cores, a runaway child must not slow the
person's cells."""
C_OUTPUT_BYTES = 4 * 2**20
"""C-level output (fds 1 and 2) kept; writes past it fail in the child."""



async def run_forked(code: str, shell: Any, *, timeout_s: float = 60, memory_mb: int = 2048,
                     on_output: Output | None = None, mechanisms: tuple[Mechanism, ...] = MECHANISMS,
                     required: bool = False) -> CodeRun:
    """Run `code` in a fork of this kernel, against the copy of `shell.user_ns` the fork gets.

    Call it right after `fork_refusal` said None, from the kernel's main thread, in the same step of the
    event loop (no await in between), so nothing changes between the check and the fork.

    Args:
        timeout_s: the child is killed after this long (a TimeoutError comes back).
        memory_mb: the memory the child may make its own (copied pages included) before it is killed.
        on_output: told the code's stdout/stderr as it comes, on the loop's thread.
        mechanisms: the OS confinements the child may use, strongest first (none: Python-level isolation).
        required: without a complete OS confinement the code is not run, and the run says why.

    Raises:
        RuntimeError: not called on the main thread (`fork_refusal` would have said so).
    """
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("run_forked must be called on the kernel's main thread (see fork_refusal)")
    started = time.perf_counter()
    plan = confinement_plan(mechanisms, memory_mb)
    capture = _capture_descriptor()
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    prctl = _prctl()
    try:
        with warnings.catch_warnings():  # 3.12+: "this process is multi-threaded, fork() may deadlock"
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError as exc:
        for fd in (read_fd, write_fd, capture):
            os.close(fd)
        plan.remove_scratch()
        return failed("fork", f"the kernel could not fork: {exc}", started)
    if pid == 0:
        _child(code, shell, write_fd, capture, memory_mb, parent, prctl, plan, required)
    os.close(write_fd)
    with contextlib.suppress(OSError):
        os.setpgid(pid, pid)
    return await _watch(pid, read_fd, capture, plan, timeout_s=timeout_s, memory_mb=memory_mb,
                        on_output=on_output, started=started)


async def _watch(pid: int, read_fd: int, capture: int, plan: Plan, *, timeout_s: float, memory_mb: int,
                 on_output: Output | None, started: float) -> CodeRun:
    """Supervise the forked child through its pipe until it is done or must be, then account for it."""
    transport: asyncio.BaseTransport | None = None
    status: int | None = None
    outcome: Outcome | None = None
    try:
        pipe = os.fdopen(read_fd, "rb", buffering=0)
        reader = asyncio.StreamReader(limit=2**20)
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe)
        outcome = await supervise(reader, lambda: kill_tree(pid), pid=pid, timeout_s=timeout_s,
                                  memory_mb=memory_mb, on_output=on_output)
    finally:
        kill_tree(pid)  # it is done or must be: this also ends anything it left running
        if transport is not None:
            transport.close()
        c_output = _read_capture(capture)
        os.close(capture)
        if outcome is not None and outcome.result is not None and outcome.stopped is None:
            _in_background(_clean_up(pid, plan))  # every process is killed: only their exit is left to wait for
        else:
            status = await reap(pid)
            plan.remove_scratch()
    return finish(outcome, mode="fork", c_output=c_output, ended=describe_exit(status), timeout_s=timeout_s,
                  memory_mb=memory_mb, started=started)

_cleaning: set[asyncio.Task[None]] = set()


def _in_background(work: Any) -> None:
    task = asyncio.ensure_future(work)
    _cleaning.add(task)
    task.add_done_callback(_cleaning.discard)


async def _clean_up(pid: int, plan: Plan) -> None:
    """After a run that gave its result: collect the killed child (a copy of a large kernel takes milliseconds
    per gigabyte to end) and remove its scratch folder, without the result waiting for either."""
    await reap(pid)
    plan.remove_scratch()


# ---------------------------------------------------------------------------------------------- the child


def confinement_plan(mechanisms: tuple[Mechanism, ...], memory_mb: int) -> Plan:
    """What the child will do to confine itself: made here, in the kernel, so the child only carries it out."""
    from ...sandbox.bwrap import jupyter_runtime

    shown = secrets.child_env(os.environ)
    hidden = tuple(name for name in os.environ if name not in shown)
    return prepare(mechanisms, scratch_mb=max(64, min(memory_mb, 1024)), secrets=hidden, masked=jupyter_runtime())


def unconfined_refusal(report: Report) -> CodeRun:
    """The run a child reports instead of running the code, when an OS sandbox is required and none applied."""
    why = "; ".join(report.why_not) or "no OS confinement is available here"
    return CodeRun(mode="fork", error=CodeError(
        ename=NOT_CONFINED, evalue=f"not run: this workspace requires an OS sandbox (`sandbox: required`) and "
                                     f"none could confine the code here ({why})",
        traceback="Not run: the code would have been isolated at the Python level only, and the workspace requires "
                  "an OS sandbox. Tell the person; retrying will not help. (`sandbox: auto` runs it with Python-level "
                  "isolation and says so.)"))


def _child(code: str, shell: Any, channel_fd: int, capture_fd: int, memory_mb: int, parent: int,
           prctl: Any, plan: Plan, required: bool) -> NoReturn:
    channel = Channel(channel_fd)
    try:
        os.setpgid(0, 0)
        if prctl is not None:
            prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:
            os._exit(1)
        with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as adj:
            adj.write("1000")
        with contextlib.suppress(OSError):
            os.nice(NICENESS)
        gc.freeze()
        _isolate_descriptors(capture_fd, keep=channel_fd)
        limit_address_space(memory_mb)
        _quiet_kernel_streams()
        _forget_kernel_loop()
        report = enter(plan)  # with namespaces, only a grandchild comes back from here
        channel.send(CONFINED, json.dumps(report.to_json()).encode())
        if required and not report.confined:
            channel.finish(unconfined_refusal(report))
        else:
            notes = [f"Removed from the sandbox, too large to copy: {lost}" for lost in report.lost]
            channel.finish(run_and_compare(code, shell.user_ns, shell, channel, mode="fork", notes=notes))
        await_end(channel_fd)
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            channel.finish(sandbox_failure("fork", exc))
    finally:
        os._exit(0)


def run_and_compare(code: str, namespace: dict[str, Any], shell: Any, channel: Channel, *, mode: Mode,
                    notes: list[str] | None = None) -> CodeRun:
    """Run the code in a sandbox's namespace and say what it did to that namespace's names."""
    before = visible(namespace)
    result, error, captured = run_code(code, namespace, shell=shell, on_output=channel.output)
    created, rebound, deleted = compare(before, visible(namespace))
    mutated = [n for n in maybe_mutated(code, before) if n not in rebound and n not in deleted]
    return CodeRun(mode=mode, displays=captured.displays, result=result, error=error, notes=notes or [],
                   changes=NamespaceChanges(created=created, rebound=rebound, deleted=deleted, mutated=mutated))


def _prctl() -> Any:
    """libc's prctl, looked up before the fork so the child does no work for it; None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _capture_descriptor() -> int:
    """A memfd whose size is sealed at C_OUTPUT_BYTES (writes past it fail), else an unlinked temp file."""
    try:
        import fcntl

        fd = os.memfd_create("opencode-nb-output", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        os.ftruncate(fd, C_OUTPUT_BYTES)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK)
        return fd
    except (AttributeError, OSError, ImportError):
        import tempfile

        with tempfile.TemporaryFile() as file:
            return os.dup(file.fileno())


def _read_capture(fd: int) -> str:
    """What the child wrote to fds 1 and 2: they share this descriptor's offset, which is where it stopped."""
    end = os.lseek(fd, 0, os.SEEK_CUR)
    text = os.pread(fd, end, 0).decode("utf-8", "replace")
    if end >= C_OUTPUT_BYTES:
        text += f"\n[C-level output past {C_OUTPUT_BYTES // 2**20} MB was cut]\n"
    return text


def _open_descriptors() -> list[int]:
    for listing in ("/proc/self/fd", "/dev/fd"):
        with contextlib.suppress(OSError):
            return sorted(int(name) for name in os.listdir(listing))
    return list(range(3, 1024))


def _isolate_descriptors(capture_fd: int, *, keep: int) -> None:
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(capture_fd, 1)
    os.dup2(capture_fd, 2)
    blocker = os.open(os.devnull, getattr(os, "O_PATH", os.O_RDONLY) | os.O_CLOEXEC)
    for fd in _open_descriptors():
        if fd > 2 and fd not in (keep, blocker):
            with contextlib.suppress(OSError):
                os.dup2(blocker, fd, inheritable=False)
    os.close(blocker)


def limit_address_space(memory_mb: int) -> None:
    """RLIMIT_AS = this process's address space now + the budget (no-op where there is no such limit)."""
    try:
        import resource
    except ImportError:
        return
    size_kb = status_kb("self", "VmSize")
    if size_kb is None:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = size_kb * 1024 + memory_mb * 2**20
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _quiet_kernel_streams() -> None:
    old: dict[str, Any] = {"stdout": sys.stdout, "stderr": sys.stderr}  # rebinding their methods: any stream
    for number, name in ((1, "stdout"), (2, "stderr")):
        setattr(sys, name, open(number, "w", encoding="utf-8", errors="replace", closefd=False,  # noqa: SIM115
                                buffering=1))
    for name, stream in old.items():
        while stream is not None:  # execute.py's stream router keeps the stream it stands in for as `original`
            with contextlib.suppress(AttributeError, TypeError):
                stream.write = lambda text, name=name: getattr(sys, name).write(text)
                stream.writelines = lambda lines, name=name: getattr(sys, name).writelines(lines)
                stream.flush = lambda: None
            stream = getattr(stream, "__dict__", {}).get("original")


def _no_input(*args: Any, **kwargs: Any) -> NoReturn:
    raise EOFError("the sandbox has no input: put the values in the code")


def _forget_kernel_loop() -> None:
    asyncio.events._set_running_loop(None)
    with contextlib.suppress(Exception):
        asyncio.get_event_loop_policy().set_event_loop(None)
    with contextlib.suppress(ValueError):
        signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for number in (signal.SIGTERM, signal.SIGCHLD):
        signal.signal(number, signal.SIG_DFL)
    builtins.input = _no_input
    if "getpass" in sys.modules:
        getpass: Any = sys.modules["getpass"]  # imported by someone: its function is replaced where it lives
        getpass.getpass = _no_input


