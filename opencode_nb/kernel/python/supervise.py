"""The parent's side of a sandboxed run, and the pipe between the two: a fork and a spawned worker share it.

The child writes frames (kind, length, payload) on one pipe: its output as the code writes it, batched, then
the run as JSON, cut to size. The parent reads them on the event loop, never blocking it, while a watchdog
reads the child's private memory every WATCH_INTERVAL_S and a deadline stands at the timeout; past either,
the child's process group is killed and reaped, and what it wrote until then is kept. Cancellation (Stop,
the kernel's interrupt) kills and reaps the same way before it goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from ...sandbox.confine import PYTHON_ONLY, Report
from ...values import CodeError, CodeRun
from ..futures import settle

WATCH_INTERVAL_S = 0.05
"""How often the parent looks at the child's private memory."""
MAX_RESULT_BYTES = 8 * 2**20
"""The run's JSON past this loses its largest rich outputs (their text stays)."""
MAX_FRAME_BYTES = 64 * 2**20
"""The most the parent reads for one frame: a longer one (only code writing to the pipe can send it) ends the
run with an error before anything of it is allocated."""
KEEP_OUTPUT_CHARS = 2**20
"""The parent keeps this much of what the code printed: the first and the last half."""
BATCH_S = 0.05
BATCH_CHARS = 64 * 1024
"""A sandbox sends its output at most every BATCH_S, or sooner when BATCH_CHARS wait (see `Channel`)."""
MAX_PROCESSES = 256
"""More processes than this in a sandbox's tree is a fork bomb (or as bad for the kernel, which walks the tree
every WATCH_INTERVAL_S): the tree is killed."""
DRAIN_S = 1.0
"""After a kill, how long the parent still reads what the child wrote before it died."""

FRAME = struct.Struct(">cI")
OUTPUT, RESULT, READY, CONFINED = b"o", b"r", b"b", b"c"
"""Frame kinds: text written by the code; the run's JSON; (worker) loaded, with its memory so far in kB; the
confinement that applied, sent before the code runs (so only the first frame is believed as such)."""

Output = Callable[[str], None]
Mode = Literal["fork", "worker"]



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
    """Why the parent killed it: "time", "memory", "processes", "startup" or "oversized"; None when it ended by
    itself."""
    ready: bool = False
    confinement: dict[str, object] | None = None
    """What the sandbox said applied, when it said so before anything else."""
    oversized: int = 0
    """The length of a frame past MAX_FRAME_BYTES, which ended the reading."""
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
    watching: asyncio.TimerHandle  # both set below, before the loop can call the functions that replace them
    deadline: asyncio.TimerHandle

    def stop(reason: str) -> None:
        if outcome.stopped is None:
            outcome.stopped = reason
            kill()
            if not stopped.done():
                stopped.set_result(None)

    def watch() -> None:
        nonlocal watching
        pids = tree(pid, limit=MAX_PROCESSES)
        if len(pids) > MAX_PROCESSES:
            stop("processes")
            return
        if outcome.ready and over_budget(pids, outcome.base_kb + memory_mb * 1024):
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
        elif outcome.oversized:
            stop("oversized")
    finally:
        watching.cancel()
        deadline.cancel()
        if not reading.done():
            reading.cancel()
    return outcome


async def _read_frames(reader: asyncio.StreamReader, outcome: Outcome, on_output: Output | None,
                       on_ready: Callable[[], None]) -> None:
    first = True
    while True:
        try:
            kind, size = FRAME.unpack(await reader.readexactly(FRAME.size))
            if size > MAX_FRAME_BYTES:
                outcome.oversized = size
                return
            payload = await reader.readexactly(size)
        except asyncio.IncompleteReadError:
            return
        if kind == CONFINED and first:
            with contextlib.suppress(ValueError):
                outcome.confinement = json.loads(payload)
        first = False
        if kind == OUTPUT:
            text = payload.decode("utf-8", "replace")
            outcome.transcript.add(text)
            if on_output is not None:
                with contextlib.suppress(Exception):
                    on_output(text)
        elif kind == RESULT:
            outcome.result = payload
            return  # finished: whatever still holds the pipe open (a process the code left) is not waited for
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


def tree(pid: int, *, limit: int | None = None) -> list[int]:
    """`pid` and every process below it, parents first, from /proc's child lists (threads' children
    included). A process the code started stays in the tree however it detached: the namespace's init or a
    subreaper adopts it. With `limit`, the walk stops once it found more than that many."""
    found = [pid]
    i = 0
    while i < len(found) and (limit is None or len(found) <= limit):
        current = found[i]
        i += 1
        try:
            threads = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for thread in threads:
            with contextlib.suppress(OSError, ValueError), open(f"/proc/{current}/task/{thread}/children") as file:
                found.extend(int(child) for child in file.read().split())
    return found


def over_budget(pids: list[int], limit_kb: int) -> bool:
    """Whether the sandbox's processes together hold more than `limit_kb` of private memory. Their resident
    size, read first, bounds it from above at a fraction of the cost (0.03 ms against 2 ms per process for a
    1 GB child), so most checks stop there."""
    resident = sum(status_kb(p, "VmRSS") or 0 for p in pids)
    if resident <= limit_kb:
        return False
    return sum(private_kb(p) or 0 for p in pids) > limit_kb


def kill_tree(pid: int, *, rounds: int = 20) -> None:
    """SIGKILL everything below `pid`, then `pid` and its group. The tree is read again until it shows nothing
    not already killed, so a process forked while the first were killed goes too; `pid` goes last, so that
    until then it adopts the orphans, where the next round finds them."""
    killed: set[int] = set()
    for _ in range(rounds):
        below = [p for p in tree(pid)[1:] if p not in killed and not _zombie(p)]
        if not below:
            break
        for child in below:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(child, signal.SIGKILL)
            killed.add(child)
    kill_group(pid)


async def reap(pid: int) -> int | None:
    """Wait for a killed child without blocking the event loop: a process that copied a large kernel takes a
    few milliseconds per gigabyte to end, which the person's next cell should not wait for."""
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return _reap(pid)
    loop = asyncio.get_running_loop()
    ended = loop.create_future()
    loop.add_reader(handle, settle, ended, None)
    cancelled = False
    try:
        await asyncio.wait_for(asyncio.shield(ended), timeout=10)
    except TimeoutError:
        pass
    except asyncio.CancelledError:
        cancelled = True  # reaped all the same, below, before the cancellation goes on
    finally:
        loop.remove_reader(handle)
        os.close(handle)
    status = _reap(pid)
    if cancelled:
        raise asyncio.CancelledError
    return status


def kill_group(pid: int) -> None:
    """SIGKILL the sandbox's process group, or the process alone if its group is not there (yet)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            text = stat.read()
    except OSError:
        return True  # gone already
    return text[text.rfind(")") + 2: text.rfind(")") + 3] in ("Z", "X")


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
    confinement = confinement_label(outcome)
    return _finished(outcome, mode=mode, output=output, ended=ended, timeout_s=timeout_s, memory_mb=memory_mb,
                     started=started, notes=notes).model_copy(update={"confinement": confinement})


def confinement_label(outcome: Outcome) -> str:
    """What the sandbox said applied, in one line; a sandbox that said nothing before its code ran counts as
    unconfined."""
    if outcome.confinement is None:
        return PYTHON_ONLY
    try:
        return Report.from_json(outcome.confinement).label()
    except (ValueError, TypeError):
        return PYTHON_ONLY


def _finished(outcome: Outcome, *, mode: Mode, output: str, ended: str, timeout_s: float, memory_mb: int,
              started: float, notes: list[str]) -> CodeRun:
    if outcome.result is not None and outcome.stopped is None:
        try:
            run = CodeRun.model_validate_json(outcome.result)
        except ValueError as exc:
            return failed(mode, f"the sandbox's result could not be read ({exc.__class__.__name__})", started,
                          output=output, notes=notes)
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
    if outcome.stopped == "processes":
        return failed(mode, f"the code started more than {MAX_PROCESSES} processes and was stopped", started,
                      output=output, notes=notes,
                      hint=f"The sandbox was stopped when the code had more than {MAX_PROCESSES} processes running "
                           "at once. Use fewer workers (a pool of a few processes, or none).")
    if outcome.stopped == "oversized":
        return failed(mode, f"the sandbox sent a frame of {outcome.oversized:,} bytes, past the "
                            f"{MAX_FRAME_BYTES // 2**20} MB limit, and was stopped", started, output=output,
                      notes=notes,
                      hint=f"The sandbox was stopped when it sent {outcome.oversized:,} bytes at once on its result "
                           f"channel (at most {MAX_FRAME_BYTES // 2**20} MB is read). Return a summary of the data, "
                           "not the data.")
    if outcome.stopped == "startup":
        return failed(mode, "the worker did not start in time", started, output=output, notes=notes)
    return failed(mode, f"the sandbox ended without a result ({ended})", started, output=output, notes=notes,
                  hint=f"The process running the code ended without a result ({ended}): a library it called "
                       "may have crashed it. The output above is what it wrote before it ended.")


def sandbox_failure(mode: Mode, exc: BaseException) -> CodeRun:
    """The run a fork or worker reports when something around the code failed, not the code itself."""
    where = "fork of the kernel" if mode == "fork" else "worker"
    return CodeRun(mode=mode, error=CodeError(
        ename="SandboxError", evalue=f"the {where} failed around the code: {exc!r}",
        traceback=f"The {where} could not run the code. Try again; if it fails again, the code needs the live "
                  "namespace (with the person's approval)."))
