"""Running the model's code in a copy-on-write fork of the live kernel: it sees every variable, changes none.

The child is the kernel at the instant of the fork. Whatever it changes is its own copy; memory pages are
copied only when written, so reading a 1 GB numeric frame costs the child a few MB. Before running
anything the child does, in this order:

1. `setpgid(0, 0)`: a process group of its own, so one kill also ends what it started (`os.system`, a
   subprocess). The parent makes the same call, so the group exists whichever of the two runs first.
2. `PR_SET_PDEATHSIG` = SIGKILL: it dies with the kernel (strictly, with the thread that forked it: the
   kernel's main thread, which lives as long as the kernel). A kernel already gone by then: it exits.
3. `oom_score_adj` = 1000: under memory pressure the OOM killer takes the child, not the kernel.
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

The parent never blocks. The event loop reads the result pipe, which carries frames: the output as it is
written (the tool card streams it), then the run as JSON. A watchdog reads the child's private memory
every 50 ms and kills it past the budget: pages it copied or allocated count, pages still shared with the
kernel do not (a page the kernel writes after the fork becomes the child's alone, and counts too). A
deadline kills it at `timeout_s`. Cancelling the awaiting task (Stop, or the kernel's interrupt) kills its
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
import struct
import sys
import threading
import time
import warnings
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, NoReturn

from ..values import CodeError, CodeRun, NamespaceChanges
from .execute import run_code
from .gates import fork_refusal
from .live import compare, maybe_mutated, visible

__all__ = ["fork_refusal", "run_forked"]

WATCH_INTERVAL_S = 0.05
"""How often the parent looks at the child's private memory."""
MAX_RESULT_BYTES = 8 * 2**20
"""The run's JSON past this loses its largest rich outputs (their text stays)."""
C_OUTPUT_BYTES = 4 * 2**20
"""C-level output (fds 1 and 2) kept; writes past it fail in the child."""
KEEP_OUTPUT_CHARS = 2**20
"""The parent keeps this much of what the code printed: the first and the last half."""
BATCH_S = 0.05
BATCH_CHARS = 64 * 1024
"""A sandbox sends its output at most every BATCH_S, or sooner when BATCH_CHARS wait (see `Channel`)."""
DRAIN_S = 1.0
"""After a kill, how long the parent still reads what the child wrote before it died."""

FRAME = struct.Struct(">cI")
OUTPUT, RESULT, READY = b"o", b"r", b"b"
"""Frame kinds: text written by the code; the run's JSON; (worker) loaded, with its memory so far in kB."""

Output = Callable[[str], None]
Mode = Literal["fork", "worker"]


async def run_forked(code: str, shell: Any, *, timeout_s: float = 60, memory_mb: int = 2048,
                     on_output: Output | None = None) -> CodeRun:
    """Run `code` in a fork of this kernel, against the copy of `shell.user_ns` the fork gets.

    Call it right after `fork_refusal` said None, from the kernel's main thread, in the same step of the
    event loop (no await in between), so nothing changes between the check and the fork.

    Args:
        timeout_s: the child is killed after this long (a TimeoutError comes back).
        memory_mb: the memory the child may make its own (copied pages included) before it is killed.
        on_output: told the code's stdout/stderr as it comes, on the loop's thread.

    Raises:
        RuntimeError: not called on the main thread (`fork_refusal` would have said so).
    """
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("run_forked must be called on the kernel's main thread (see fork_refusal)")
    started = time.perf_counter()
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
        return failed("fork", f"the kernel could not fork: {exc}", started)
    if pid == 0:
        _child(code, shell, write_fd, capture, memory_mb, parent, prctl)
    os.close(write_fd)
    with contextlib.suppress(OSError):
        os.setpgid(pid, pid)
    transport: asyncio.BaseTransport | None = None
    status: int | None = None
    try:
        pipe = os.fdopen(read_fd, "rb", buffering=0)
        reader = asyncio.StreamReader(limit=2**20)
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe)
        outcome = await supervise(reader, lambda: kill_group(pid), pid=pid, timeout_s=timeout_s,
                                  memory_mb=memory_mb, on_output=on_output)
    finally:
        kill_group(pid)  # it is done or must be: this also ends anything it left running
        status = _reap(pid)
        if transport is not None:
            transport.close()
        c_output = _read_capture(capture)
        os.close(capture)
    return finish(outcome, mode="fork", c_output=c_output, ended=describe_exit(status), timeout_s=timeout_s,
                  memory_mb=memory_mb, started=started)


# ---------------------------------------------------------------------------------------------- the child


def _child(code: str, shell: Any, channel_fd: int, capture_fd: int, memory_mb: int, parent: int,
           prctl: Any) -> NoReturn:
    channel = Channel(channel_fd)
    try:
        os.setpgid(0, 0)
        if prctl is not None:
            prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:
            os._exit(1)
        with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as adj:
            adj.write("1000")
        gc.freeze()
        _isolate_descriptors(capture_fd, keep=channel_fd)
        limit_address_space(memory_mb)
        _quiet_kernel_streams()
        _forget_kernel_loop()
        channel.finish(run_and_compare(code, shell.user_ns, shell, channel, mode="fork"))
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            channel.finish(CodeRun(mode="fork", error=CodeError(
                ename="SandboxError", evalue=f"the sandbox failed around the code: {exc!r}",
                traceback="The fork of the kernel could not run the code. Try again; if it fails again, the "
                          "code needs the live namespace (with the person's approval).")))
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
    old = {"stdout": sys.stdout, "stderr": sys.stderr}
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
        sys.modules["getpass"].getpass = _no_input


# ---------------------------------------------------------------------------------------------- the channel


class Channel:
    """A sandbox's end of the result pipe: output in batches as it is written, then the run.

    Output goes at once when nothing was sent for BATCH_S, so a lone print is not held back; within a burst
    it is gathered, and a thread of the sandbox's own sends what waits every BATCH_S, so the last lines
    before a long computation still arrive while it runs.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pending: list[str] = []
        self.pending_chars = 0
        self.sent_at = 0.0
        self.lock = threading.Lock()
        self.closed = threading.Event()
        self.flusher: threading.Thread | None = None

    def output(self, text: str) -> None:
        with self.lock:
            self.pending.append(text)
            self.pending_chars += len(text)
            if self.pending_chars >= BATCH_CHARS or time.monotonic() - self.sent_at >= BATCH_S:
                self._flush()
            elif self.flusher is None:
                self.flusher = threading.Thread(target=self._flush_every_batch, name="opencode-nb-output",
                                                daemon=True)
                self.flusher.start()

    def _flush_every_batch(self) -> None:
        while not self.closed.wait(BATCH_S):
            with self.lock:
                self._flush()

    def _flush(self) -> None:
        if self.pending:
            text = "".join(self.pending)
            self.pending.clear()
            self.pending_chars = 0
            self.send(OUTPUT, text.encode("utf-8", "replace"))
        self.sent_at = time.monotonic()

    def send(self, kind: bytes, payload: bytes) -> None:
        view = memoryview(FRAME.pack(kind, len(payload)) + payload)
        while view:
            view = view[os.write(self.fd, view):]

    def finish(self, run: CodeRun) -> None:
        self.closed.set()
        with self.lock:
            self._flush()
            self.send(RESULT, fit(run).model_dump_json().encode())


def fit(run: CodeRun, limit: int = MAX_RESULT_BYTES) -> CodeRun:
    """The run within `limit` bytes of JSON: the largest rich outputs keep only their text until it fits."""
    size = len(run.model_dump_json())
    if size <= limit:
        return run
    bundles = [*run.displays, *([run.result] if run.result is not None else [])]
    cut = 0
    for weight, i in sorted(((len(json.dumps(b)), i) for i, b in enumerate(bundles)), reverse=True):
        if size <= limit:
            break
        slim = {"text/plain": str(bundles[i].get("text/plain", ""))[:10_000]}
        size -= weight - len(json.dumps(slim))
        bundles[i] = slim
        cut += 1
    result = bundles.pop() if run.result is not None else None
    note = (f"{cut} rich output(s) were too large to send back whole ({limit // 2**20} MB in all): "
            "only their text is kept.")
    return run.model_copy(update={"displays": bundles, "result": result, "notes": [*run.notes, note]})


# ---------------------------------------------------------------------------------------------- the parent


class Transcript:
    """What the code wrote, as the parent keeps it: all of it up to KEEP_OUTPUT_CHARS, else its two ends."""

    def __init__(self, limit: int = KEEP_OUTPUT_CHARS) -> None:
        self.half = limit // 2
        self.head: list[str] = []
        self.head_chars = 0
        self.tail: deque[str] = deque()
        self.tail_chars = 0
        self.dropped = 0

    def add(self, text: str) -> None:
        if self.head_chars < self.half:
            taken = text[: self.half - self.head_chars]
            self.head.append(taken)
            self.head_chars += len(taken)
            text = text[len(taken):]
        if not text:
            return
        self.tail.append(text)
        self.tail_chars += len(text)
        while self.tail_chars > self.half:
            excess = self.tail_chars - self.half
            first = self.tail[0]
            if len(first) <= excess:
                self.tail.popleft()
                cut = len(first)
            else:
                self.tail[0] = first[excess:]
                cut = excess
            self.tail_chars -= cut
            self.dropped += cut

    def text(self) -> str:
        middle = f"\n… [{self.dropped:,} characters of output cut] …\n" if self.dropped else ""
        return "".join(self.head) + middle + "".join(self.tail)


@dataclass
class Outcome:
    """What the parent learnt from a sandboxed process."""

    transcript: Transcript = field(default_factory=Transcript)
    result: bytes | None = None
    stopped: str | None = None
    """Why the parent killed it: "time", "memory" or "startup"; None when it ended by itself."""
    ready: bool = False
    base_kb: int = 0
    """A worker's private memory once its variables were loaded: the budget comes on top of it."""


async def supervise(reader: asyncio.StreamReader, kill: Callable[[], None], *, pid: int, timeout_s: float,
                    memory_mb: int, on_output: Output | None, startup_s: float | None = None) -> Outcome:
    """Read a sandbox's frames until its pipe closes, killing it at its deadline or memory budget.

    With `startup_s` (a worker), the deadline and the memory watch start at the READY frame; before it,
    the process has `startup_s` to load.
    """
    loop = asyncio.get_running_loop()
    outcome = Outcome(ready=startup_s is None)
    stopped = loop.create_future()

    def stop(reason: str) -> None:
        if outcome.stopped is None:
            outcome.stopped = reason
            kill()
            if not stopped.done():
                stopped.set_result(None)

    def watch() -> None:
        nonlocal watching
        if outcome.ready and over_budget(pid, outcome.base_kb + memory_mb * 1024):
            stop("memory")
            return
        watching = loop.call_later(WATCH_INTERVAL_S, watch)

    def on_ready() -> None:
        nonlocal deadline
        deadline.cancel()
        deadline = loop.call_later(timeout_s, stop, "time")

    watching = loop.call_later(WATCH_INTERVAL_S, watch)
    deadline = loop.call_later(timeout_s, stop, "time") if startup_s is None else \
        loop.call_later(startup_s, stop, "startup")
    reading = asyncio.ensure_future(_read_frames(reader, outcome, on_output, on_ready))
    try:
        await asyncio.wait({reading, stopped}, return_when=asyncio.FIRST_COMPLETED)
        if outcome.stopped is not None:  # killed: what it wrote before dying is still in the pipe
            await asyncio.wait({reading}, timeout=DRAIN_S)
    finally:
        watching.cancel()
        deadline.cancel()
        if not reading.done():
            reading.cancel()
    return outcome


async def _read_frames(reader: asyncio.StreamReader, outcome: Outcome, on_output: Output | None,
                       on_ready: Callable[[], None]) -> None:
    while True:
        try:
            kind, size = FRAME.unpack(await reader.readexactly(FRAME.size))
            payload = await reader.readexactly(size)
        except asyncio.IncompleteReadError:
            return
        if kind == OUTPUT:
            text = payload.decode("utf-8", "replace")
            outcome.transcript.add(text)
            if on_output is not None:
                with contextlib.suppress(Exception):
                    on_output(text)
        elif kind == RESULT:
            outcome.result = payload
        elif kind == READY:
            outcome.ready = True
            outcome.base_kb = int(payload)
            on_ready()


def status_kb(pid: int | str, key: str) -> int | None:
    """A `kB` figure from /proc/PID/status (VmRSS, VmSize); None without /proc or once the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def private_kb(pid: int | str) -> int | None:
    """Memory only this process maps: what it allocated, and the pages it copied from its parent."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            return sum(int(line.split()[1]) for line in rollup if line.startswith("Private_"))
    except (OSError, ValueError):
        return None


def over_budget(pid: int, limit_kb: int) -> bool:
    """Whether the process's private memory is past `limit_kb`. Its resident size, read first, bounds it from
    above at a fraction of the cost (0.03 ms against 2 ms for a 1 GB child), so most checks stop there."""
    resident = status_kb(pid, "VmRSS")
    if resident is None or resident <= limit_kb:
        return False
    private = private_kb(pid)
    return private is not None and private > limit_kb


def kill_group(pid: int) -> None:
    """SIGKILL the sandbox's process group, or the process alone if its group is not there (yet)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _reap(pid: int) -> int | None:
    """Wait for the killed child. A SIGKILLed process ends within milliseconds (a few per GB it owned), so
    waiting here, on the loop's thread, is shorter than a round of polling would be."""
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return None


def describe_exit(status: int | None) -> str:
    if status is None:
        return "its exit status is unknown"
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "unknown"
        return f"it was killed by signal {-code} ({name})"
    return f"it exited with status {code}"


def failed(mode: Mode, message: str, started: float, *, output: str = "", notes: list[str] | None = None,
           ename: str = "SandboxError", hint: str = "") -> CodeRun:
    return CodeRun(mode=mode, output=output, notes=notes or [],
                   error=CodeError(ename=ename, evalue=message, traceback=hint or message[0].upper() + message[1:]),
                   duration_s=round(time.perf_counter() - started, 4))


def finish(outcome: Outcome, *, mode: Mode, c_output: str, ended: str, timeout_s: float, memory_mb: int,
           started: float, notes: list[str] | None = None) -> CodeRun:
    """The run a sandbox gave back, or the error that says why it gave none."""
    notes = notes or []
    output = outcome.transcript.text() + c_output
    if outcome.transcript.dropped:
        notes = [*notes, f"The output was {outcome.transcript.dropped + KEEP_OUTPUT_CHARS:,} characters long: "
                         "its middle was cut."]
    if outcome.result is not None and outcome.stopped is None:
        run = CodeRun.model_validate_json(outcome.result)
        return run.model_copy(update={"output": output, "notes": [*notes, *run.notes],
                                      "duration_s": round(time.perf_counter() - started, 4)})
    if outcome.stopped == "time":
        return failed(mode, f"the code ran longer than {timeout_s:g} s and was stopped", started, output=output,
                      notes=notes, ename="TimeoutError",
                      hint=f"The code was stopped after {timeout_s:g} s, its timeout. Make it faster (work on a "
                           "sample first), or give a larger timeout. If it should have been quick, a library it "
                           "uses may hang in a sandbox: try simpler code.")
    if outcome.stopped == "memory":
        return failed(mode, f"the code used more than {memory_mb:,} MB of memory and was stopped", started,
                      output=output, notes=notes, ename="MemoryError",
                      hint=f"The sandbox was stopped when the memory it made its own passed {memory_mb:,} MB "
                           "(copies of the person's data it changed count too). Work on a sample or in chunks, "
                           "select only the columns needed, or avoid changing large objects in place.")
    if outcome.stopped == "startup":
        return failed(mode, "the worker did not start in time", started, output=output, notes=notes)
    return failed(mode, f"the sandbox ended without a result ({ended})", started, output=output, notes=notes,
                  hint=f"The process running the code ended without a result ({ended}): a library it called "
                       "may have crashed it. The output above is what it wrote before it ended.")
