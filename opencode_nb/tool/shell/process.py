"""Running a shell command as a process group: streamed, bounded in time and memory, stopped as a whole.

The command runs in its own process group, so a timeout or a Stop (cancelling the task) reaches everything
it started, not just the shell: the group gets SIGTERM, then SIGKILL after `KILL_GRACE_S`, and is reaped,
leaving no orphan behind the notebook. When the shell exits but something it started in the background
still holds the output pipe, waiting on it would never end; that group is stopped too, and the run says so.

Output is kept whole in memory up to `SPILL_BYTES`, then on disk, so `yes` for two minutes neither fills
the kernel's memory nor the model's context. The bash tool and `` !`cmd` `` in command templates both run
their commands here.

Given a `Confinement`, the shell runs inside the OS sandbox (`sandbox/policy.py`): bwrap is then the group
leader and the shell its descendant in the same group, so the same signals reach both. bwrap's PID
namespace adds a floor under the group: when bwrap dies, everything inside dies with it, including a
job that left the group with `setsid`. A sandboxed command's background jobs end when its shell exits.
A confinement with a network proxy gets it for exactly the command's lifetime (`wait`).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import shutil
import signal
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import IO

from ... import fs, secrets
from ... import id as ids
from ...sandbox import protected
from ...sandbox.policy import Confinement, Launch
from ...sandbox.treatment import SandboxedProcess, group_alive
from ..base import MAX_OUTPUT_BYTES, MAX_OUTPUT_LINES, bounded, cut_note, split_lines

UPDATE_INTERVAL_S = 0.1
"""Live output reaches views at most ten times a second."""
PREVIEW_CHARS = 8000
"""How much of the output's tail the live view (and the finished part's metadata) carries."""
KILL_GRACE_S = 2.0
CONFINED_GRACE_S = 0.2
"""A sandboxed command's grace: bubblewrap ends the whole sandbox on TERM once it runs, and may not handle
TERM at all while it is still setting up, so waiting the full grace would only delay a Stop."""
"""Between SIGTERM and SIGKILL: time for the command to clean up."""
EXIT_POLL_S = 0.05
DRAIN_S = 0.25
"""After the shell exits, how long its output may still arrive from processes it started."""
SPILL_BYTES = 1024 * 1024
"""Output beyond this goes to a file instead of memory."""
MAX_SAVED_BYTES = 64 * 1024 * 1024
"""The saved output stops growing here; the tail is still kept."""

SHELL_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "MANPAGER": "cat", "TERM": "dumb", "GIT_TERMINAL_PROMPT": "0",
             "PYTHONUNBUFFERED": "1"}
"""Nobody can type into a pager or a password prompt; Python output should stream, not arrive at exit."""


def tool_env() -> dict[str, str]:
    """The environment a tool's subprocess gets: the kernel's own without its secrets (`secrets.child_env`:
    API keys, tokens, passwords, the names the config lists), made non-interactive.

    Every shell command (bash tool, command templates) takes its environment from here, so what a command
    may see of the kernel's environment is decided in this one place.
    """
    return {**secrets.child_env(os.environ), **SHELL_ENV}


class Capture:
    """A running command's output: whole in memory while small, then on disk; its tail always in memory."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.chunks: list[str] = []
        self.tail: deque[str] = deque()
        self.tail_size = 0
        self.size = 0
        self.lines = 0
        self.open_line = False
        self.file: IO[str] | None = None
        self.path: Path | None = None
        self.saved = 0

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self.decoder.decode(data, final)
        if not text:
            return
        self.size += len(text)
        self.lines += text.count("\n")
        self.open_line = not text.endswith("\n")
        self.tail.append(text)
        self.tail_size += len(text)
        while self.tail and self.tail_size - len(self.tail[0]) >= 2 * MAX_OUTPUT_BYTES:
            self.tail_size -= len(self.tail.popleft())
        if self.file is None:
            self.chunks.append(text)
            if self.size > SPILL_BYTES:
                self._spill()
        elif self.saved < MAX_SAVED_BYTES:
            self.file.write(text)
            self.saved += len(text)

    def _spill(self) -> None:
        """The tool-output folder is writable to sandboxed commands, so the file is made new (`O_EXCL`, no
        link followed) and kept open: what is written goes to this inode, whatever its name becomes."""
        name = ids.ascending("tool")
        self.path = self.folder / name
        self.file = os.fdopen(fs.create_file(self.folder, name), "w+", encoding="utf-8")
        text = "".join(self.chunks)
        self.file.write(text)
        self.saved = len(text)
        self.chunks = []

    def close(self) -> None:
        self.feed(b"", final=True)
        if self.file is not None and not self.file.closed:
            self._finish_saved()

    def _finish_saved(self) -> None:
        """The saved output passes the redaction every other written text passes: a command that printed a key
        thousands of times must not leave it in plain text on disk. Written raw while the command runs (a value
        may straddle two writes), it is redacted whole once the command ends.

        The command may have swapped the saved name (or any name beside it) for a link to `~/.profile` by
        then, so nothing here goes by name: the text is read back through the descriptor the kernel wrote,
        and put at the name by `fs.write_file` (a fresh file renamed over whatever is there, never followed).
        The name is rewritten too when it no longer holds the file written, so it says what the command
        printed, not what a link points at."""
        assert self.file is not None and self.path is not None
        try:
            self.file.flush()
            self.file.seek(0)
            text = self.file.read()
            written = os.fstat(self.file.fileno())
        finally:
            self.file.close()
        redacted = secrets.redact(text)
        try:
            there = fs.lstat(self.folder, self.path.name)
            if redacted != text or there is None or not os.path.samestat(there, written):
                fs.write_file(self.folder, self.path.name, redacted.encode("utf-8"), mode=0o600, replace_kind=True)
        except OSError:
            # Unredacted output must not stay behind; the tail the model reads is in memory either way.
            with contextlib.suppress(OSError):
                fs.remove(self.folder, self.path.name, recursive=True)

    def preview(self) -> str:
        text = "".join(self.tail)
        return text if len(text) <= PREVIEW_CHARS else "…" + text[-PREVIEW_CHARS:]

    def text(self) -> tuple[str, dict[str, object]]:
        """What the model reads: everything, or the tail with a note saying where the rest is."""
        if self.file is None:
            whole = "".join(self.chunks)
            if len(whole.encode()) <= MAX_OUTPUT_BYTES and whole.count("\n") <= MAX_OUTPUT_LINES:
                return whole, {"truncated": False}
            self._spill()
            self._finish_saved()
        assert self.path is not None
        shown, _ = bounded("".join(self.tail), keep="tail")
        cut = max(self.lines + self.open_line - len(split_lines(shown)), 0)
        note = cut_note(cut, self.path).strip()
        if self.saved >= MAX_SAVED_BYTES:
            note += f" (Only the first {MAX_SAVED_BYTES // (1024 * 1024)} MB were saved.)"
        return f"{note}\n\n{shown}", {"truncated": True, "output_path": str(self.path)}


class ShellRun:
    """One execution of a command: started, streamed, bounded in time, stopped as a group.

    Args:
        command: a bash line.
        cwd: where it runs.
        output_dir: where output beyond `SPILL_BYTES` is saved.
        on_output: told the output's tail (at most every `UPDATE_INTERVAL_S`, and once at the end).
        confinement: the OS sandbox to run it in; None runs it as it is.
        launch: how it runs, from `SandboxCall.prepare` (its confinement and the config guard's `alive`);
            given, it stands for `confinement`. Either way the process gets the sandbox's whole treatment
            (`sandbox/treatment.py`).
    """

    def __init__(self, command: str, *, cwd: Path, output_dir: Path,
                 on_output: Callable[[str], None] | None = None, confinement: Confinement | None = None,
                 launch: Launch | None = None) -> None:
        self.command = command
        self.cwd = cwd
        self.process = SandboxedProcess(launch or Launch(confinement),
                                        quarantine=output_dir.parent / protected.QUARANTINE)
        self.confinement = self.process.confinement
        self.on_output = on_output
        self.capture = Capture(output_dir)
        self.exit_code: int | None = None
        self.timed_out = False
        self.stopped_background = False
        self._pgid: int | None = None
        self.undone: list[str] = []
        """What the command made or replaced among the protected paths, moved away after it (`protected.py`)."""
        self._last_update = 0.0

    async def wait(self, timeout_s: float) -> None:
        """Run the command to its end or its timeout; on cancellation stop it, then re-raise."""
        proxy = self.confinement.proxy if self.confinement is not None else None
        # The proxy lives exactly as long as the command: it serves nobody before, and cuts every tunnel after.
        async with proxy.serving() if proxy is not None else contextlib.nullcontext() as proxy_socket:
            await self._wait(timeout_s, proxy_socket)

    async def _wait(self, timeout_s: float, proxy_socket: Path | None) -> None:
        argv = [shutil.which("bash") or "/bin/sh", "-c", self.command]
        seccomp = self.confinement.filter_descriptor() if self.confinement is not None else None
        argv = self.process.wrap(argv, cwd=self.cwd, seccomp_fd=seccomp, proxy_socket=proxy_socket)
        self.process.start()
        self.process.leader = lambda: self._pgid
        try:
            async with self.process.watching():  # a long command is looked at as a server is
                await self._run(argv, seccomp, timeout_s)
            self.process.learn("".join(self.capture.tail))  # a private key it printed, wherever from
        finally:
            # After bubblewrap's process group is gone, nothing of the sandbox can write any more.
            self.undone = await self.process.end(self._pgid)

    async def _run(self, argv: list[str], seccomp: int | None, timeout_s: float) -> None:
        spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
            *argv, cwd=self.cwd,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            start_new_session=True, env=tool_env(), pass_fds=() if seccomp is None else (seccomp,),
        ))
        if seccomp is not None:
            spawn.add_done_callback(lambda _: os.close(seccomp))
        try:
            proc = await asyncio.shield(spawn)
            self._pgid = proc.pid
        except asyncio.CancelledError:
            # Stopped while the process was being started: it exists (or is about to). It has done nothing worth
            # a grace period yet (a sandbox may not even handle TERM while it sets up), so kill its group at once.
            with contextlib.suppress(OSError):
                started = await spawn
                _signal(started.pid, signal.SIGKILL)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(started.wait(), KILL_GRACE_S)
            raise
        reader = asyncio.create_task(self._read(proc))
        try:
            try:
                async with asyncio.timeout(timeout_s):
                    # Process.wait() also waits for the pipe to close, which a background process may hold
                    # open for ever; the shell's own exit is what ends the command.
                    while proc.returncode is None and not reader.done():
                        await asyncio.wait({reader}, timeout=EXIT_POLL_S)
                    if reader.done():
                        await proc.wait()
                    else:
                        await asyncio.wait({reader}, timeout=DRAIN_S)
            except TimeoutError:
                self.timed_out = True
            if self.timed_out or not reader.done():
                self.stopped_background = not self.timed_out
                await stop_group(proc, self._grace_s)
                await asyncio.wait({reader}, timeout=DRAIN_S)
        except BaseException:  # CancelledError included: the person pressed Stop
            await stop_group(proc, self._grace_s)
            raise
        finally:
            self.exit_code = proc.returncode
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            self.capture.close()
            if self.on_output is not None:
                self.on_output(self.capture.preview())

    @property
    def _grace_s(self) -> float:
        return CONFINED_GRACE_S if self.confinement is not None else KILL_GRACE_S

    async def _read(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        loop = asyncio.get_running_loop()
        while block := await proc.stdout.read(65536):
            self.capture.feed(block)
            now = loop.time()
            if self.on_output is not None and now - self._last_update >= UPDATE_INTERVAL_S:
                self._last_update = now
                self.on_output(self.capture.preview())


async def stop_group(proc: asyncio.subprocess.Process, grace_s: float = KILL_GRACE_S) -> None:
    """SIGTERM the process group, SIGKILL whatever is left after the grace period, and reap the shell."""
    pgid = proc.pid
    _signal(pgid, signal.SIGTERM)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace_s
    while loop.time() < deadline and group_alive(pgid):
        if proc.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(proc.wait()), 0.05)
        else:
            await asyncio.sleep(0.05)
    _signal(pgid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(proc.wait()), KILL_GRACE_S)


def _signal(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
