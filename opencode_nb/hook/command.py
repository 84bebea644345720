"""Command hooks in Claude Code's format: run the commands an event matches, and read their answers.

Each matching hook gets the event as one JSON object on its standard input: `session_id`, `transcript_path`
(null where there is no transcript file), `cwd`, `permission_mode`, `hook_event_name`, and the event's own fields
(`tool_name`, `tool_input`, `tool_use_id`, and `tool_response` after the call; `prompt`; `stop_hook_active`;
...). `tool_name` is the tool's name here (`bash`), though a matcher may say `Bash`. `CLAUDE_PROJECT_DIR` and
`OPENCODE_NB_PROJECT_DIR` name the project root; otherwise the environment is a tool's (`tool_env`: no secrets).

The answer, as Claude Code reads it:

- exit 0: standard output that is a JSON object is the answer (below); plain text is context for the model
  after `UserPromptSubmit` and `SessionStart`, and ignored after the other events;
- exit 2: blocked; standard error is the reason (for `PreToolUse`, what the model reads instead of the result);
- any other exit: an error the person is shown; the call goes on.

The JSON answer: `decision: approve|block` and `reason` (Claude Code's older form), `hookSpecificOutput` with
`permissionDecision: allow|deny|ask`, `permissionDecisionReason`, `updatedInput` and `additionalContext`;
`continue: false` with `stopReason` ends the run; `systemMessage` is shown to the person. `suppressOutput` is
read and changes nothing: a hook's output is never shown here unless it is one of those fields.

Hooks matching one event run at the same time (an identical command once), and each may take its `timeout`
(60 s unless set): then its whole process group is killed and the outcome says so; the call goes on. How a hook
runs is `run_command`'s business: `run_plain` (a shell of its own, in its own process group) unless the
workspace gives `sandboxed`, which runs it as a shell command of the agents is run, in the OS sandbox.

A project's own hooks run only once approved (`config.py`); until then `run` passes them by and says so once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from .. import secrets
from ..errors import ToolError
from ..mcp.code import ServerCode
from ..sandbox.policy import ShellSandbox
from ..sandbox.treatment import SandboxedProcess
from ..tool.shell.process import tool_env
from .config import HookApprovals, HookEntry
from .names import TOOL_EVENTS, matches
from .outcome import NOTHING, Decision, HookOutcome

PROJECT_ENV = ("CLAUDE_PROJECT_DIR", "OPENCODE_NB_PROJECT_DIR")
CONTEXT_EVENTS = frozenset({"UserPromptSubmit", "SessionStart"})
"""Events whose hooks' plain output is context for the model, as in Claude Code."""
MAX_OUTPUT_BYTES = 256 * 1024
"""Of each of a hook's streams, what is kept; the rest is read and dropped, so a chatty hook cannot fill memory."""
DRAIN_S = 0.25
"""After the shell exits, how long output may still arrive from what it started in the background."""
SHELL = "/bin/sh"
DECISIONS: dict[str, Decision] = {"allow": "allow", "deny": "deny", "ask": "ask", "approve": "allow",
                                  "block": "deny"}


@dataclass(frozen=True)
class CommandResult:
    """How one hook's process ended."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    pid: int | None = None
    """The process group's leader (the shell, or the sandbox): gone, with its group, once the result is given."""


class RunCommand(Protocol):
    """Runs a shell line with `stdin` as its input, within `timeout_s`, its process group killed at the end."""

    def __call__(self, command: str, *, stdin: bytes, cwd: Path, env: Mapping[str, str],
                 timeout_s: float) -> Awaitable[CommandResult]: ...


@dataclass(frozen=True)
class SessionInfo:
    """The fields every hook's input carries about the session it runs for."""

    session_id: str
    cwd: Path
    transcript_path: str | None = None
    permission_mode: str = "default"
    """Claude Code's words: `default`, `plan`, `acceptEdits`, `bypassPermissions`."""


async def run_plain(command: str, *, stdin: bytes, cwd: Path, env: Mapping[str, str],
                    timeout_s: float) -> CommandResult:
    """The hook in a shell of its own process group, unconfined: tests, and a workspace without a sandbox."""
    return await spawn([SHELL, "-c", command], stdin=stdin, cwd=cwd, env=env, timeout_s=timeout_s)


def sandboxed(sandbox: ShellSandbox, *, quarantine: Path, label: str = "hooks") -> RunCommand:
    """A `run_command` that runs each hook as the agents' shell commands run: confined by the workspace's
    sandbox (no network; the protected files read-only), given the sandbox's whole treatment
    (`sandbox/treatment.py`). `label` is the session the sandbox's "no sandbox here" note would be for: hooks
    never carry it, their output is nobody's card."""

    async def run(command: str, *, stdin: bytes, cwd: Path, env: Mapping[str, str],
                  timeout_s: float) -> CommandResult:
        launch = await sandbox.launch(label, tell=False)
        process = SandboxedProcess(launch, quarantine=quarantine)
        confined = launch.confinement
        seccomp = confined.filter_descriptor() if confined is not None else None
        argv = process.wrap([SHELL, "-c", command], cwd=cwd, seccomp_fd=seccomp)
        process.start()
        result: CommandResult | None = None
        try:
            result = await spawn(argv, stdin=stdin, cwd=cwd, env=env, timeout_s=timeout_s,
                                 pass_fds=() if seccomp is None else (seccomp,))
        finally:
            if seccomp is not None:
                with contextlib.suppress(OSError):
                    os.close(seccomp)
            await process.end(result.pid if result is not None else None)
        return result

    return run


async def spawn(argv: Sequence[str], *, stdin: bytes, cwd: Path, env: Mapping[str, str], timeout_s: float,
                pass_fds: Sequence[int] = ()) -> CommandResult:
    """`argv` as the leader of a new process group; at its timeout, or when the caller is cancelled, the
    whole group is killed (a hook's `sleep` children too), and reaped."""
    spawning = asyncio.ensure_future(asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=dict(env), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, start_new_session=True, pass_fds=tuple(pass_fds)))
    try:
        proc = await asyncio.shield(spawning)
    except asyncio.CancelledError:  # stopped while it was being started: it exists, or is about to
        with contextlib.suppress(Exception):
            started = await spawning
            _kill_group(started.pid)
            await started.wait()
        raise
    out, err = bytearray(), bytearray()
    readers = [asyncio.create_task(_read(proc.stdout, out)), asyncio.create_task(_read(proc.stderr, err))]
    feeder = asyncio.create_task(_feed(proc, stdin))
    timed_out = False
    try:
        try:
            async with asyncio.timeout(timeout_s):
                await proc.wait()
        except TimeoutError:
            timed_out = True
        if not timed_out:
            # What the hook left running in the background may hold its output open: that is not waited for.
            await asyncio.wait(readers, timeout=DRAIN_S)
    finally:
        if timed_out or proc.returncode is None or not all(r.done() for r in readers):
            _kill_group(proc.pid)
        with contextlib.suppress(ProcessLookupError):
            await proc.wait()
        for task in (*readers, feeder):
            task.cancel()
        await asyncio.gather(*readers, feeder, return_exceptions=True)
    return CommandResult(None if timed_out else proc.returncode, _text(out), _text(err), timed_out, proc.pid)


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    """The event to the hook's stdin; a hook that never reads it (or exits first) is no error."""
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(data)
        await proc.stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.close()


async def _read(stream: asyncio.StreamReader | None, into: bytearray) -> None:
    assert stream is not None
    while block := await stream.read(65536):
        if len(into) < MAX_OUTPUT_BYTES:
            into += block[: MAX_OUTPUT_BYTES - len(into)]


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _text(data: bytearray) -> str:
    return secrets.redact(bytes(data).decode("utf-8", errors="replace"))


@dataclass
class HookState:
    """One hook as `%agent hooks` lists it."""

    entry: HookEntry
    approved: bool
    last: str | None = None
    """What its last run came to, in a few words (`exit 0`, `blocked: ...`, `timed out after 5 s`)."""


@dataclass
class CommandHooks:
    """The configured command hooks of one workspace (`config.hook_entries`), and running them.

    Args:
        entries: every configured hook, in configuration order.
        run_command: how a hook's shell line runs (`run_plain`, or `sandboxed(...)`).
        project_dir: the project root: `CLAUDE_PROJECT_DIR`, the folder the hooks run in, and the root the
            files of a project hook's approval are found under.
        session_info: the session's fields for the hooks' input; a callable is asked at each run (the
            permission mode changes when an agent enters plan mode).
        approvals: where the project hooks' approvals are kept; None: no project hook is approved.
    """

    entries: list[HookEntry]
    run_command: RunCommand = run_plain
    project_dir: Path = field(default_factory=Path.cwd)
    session_info: SessionInfo | Callable[[], SessionInfo] | None = None
    approvals: HookApprovals | None = None
    env: Callable[[], Mapping[str, str]] = tool_env
    """The environment hooks start from (the project's variables are set over it)."""
    _last: dict[str, str] = field(default_factory=dict, repr=False)
    _told: set[str] = field(default_factory=set, repr=False)

    def __post_init__(self) -> None:
        self._by_event: dict[str, list[HookEntry]] = {}
        for entry in self.entries:
            if entry.runs:
                self._by_event.setdefault(entry.event, []).append(entry)

    def __bool__(self) -> bool:
        return bool(self._by_event)

    def matching(self, event: str, tool_name: str | None = None) -> list[HookEntry]:
        """The hooks `event` runs, approved or not, in configuration order. `tool_name` is what the matcher
        is matched against: the tool for `PreToolUse`/`PostToolUse`; other events run every matcher group."""
        entries = self._by_event.get(event)
        if not entries:
            return []
        subject = tool_name if event in TOOL_EVENTS else None
        return [e for e in entries if matches(e.matcher, subject)]

    def wants(self, event: str, tool_name: str | None = None) -> bool:
        """Whether any hook listens to `event` (for `tool_name`): a session without hooks pays only this."""
        return bool(self._by_event.get(event)) and bool(self.matching(event, tool_name))

    def unapproved(self) -> list[HookEntry]:
        """The project's hooks that wait for the person's approval (their files changed since, or never
        approved). Reads the files their commands run: call it on a thread from the event loop."""
        return [e for e in self.entries if e.runs and e.project and not self._approved(e, self._code(e))]

    def approve(self, entry: HookEntry) -> None:
        """The person approved `entry`, with the project files its command runs as they are now."""
        if self.approvals is None:
            raise ValueError("these hooks keep no approvals: give CommandHooks an `approvals` store")
        self.approvals.approve(entry, self._code(entry))
        self._told.discard(entry.digest)

    def changes(self, entry: HookEntry) -> list[str]:
        """What changed in the files a project hook runs since it was approved: for the question asked again."""
        return self.approvals.changes(entry, self._code(entry)) if self.approvals is not None else []

    def states(self) -> list[HookState]:
        """Every configured hook with whether it may run and its last outcome. Reads files (see `unapproved`)."""
        return [HookState(e, not e.project or self._approved(e, self._code(e)), self._last.get(e.digest))
                for e in self.entries]

    async def run(self, event: str, payload: Mapping[str, Any], tool_name: str | None = None) -> HookOutcome:
        """Run the hooks `event` matches, at the same time, and combine their answers (configuration order).

        `payload` holds the event's own fields (`tool_input`, `prompt`, ...); `tool_name`, for the tool events,
        is sent as `tool_name` too. Never raises for a hook's failure: that is in the outcome's `errors`.
        """
        entries = self.matching(event, tool_name)
        if not entries:
            return NOTHING
        runnable = await self._approved_now(entries)
        skipped: list[str] = []
        for entry in entries:
            if entry not in runnable and entry.digest not in self._told:
                self._told.add(entry.digest)
                self._last[entry.digest] = "not run: waiting for approval"
                skipped.append(f"{entry.label} from {entry.source} was not run: the project defines it, and it "
                               "runs only once you approve it")
        if not runnable:
            return HookOutcome(errors=skipped)
        data = self._input(event, payload, tool_name)
        distinct = list({(e.command, e.timeout_s): e for e in reversed(runnable)}.values())[::-1]
        said = await asyncio.gather(*(self._one(event, e, data) for e in distinct))
        outcome = HookOutcome.combine(said)
        return replace(outcome, errors=[*skipped, *outcome.errors]) if skipped else outcome

    async def _approved_now(self, entries: list[HookEntry]) -> list[HookEntry]:
        """The entries that may run now: the person's own, and the project's whose approval still holds
        (their files are read again each time: a script changed since is not run)."""
        if not any(e.project for e in entries):
            return entries
        return await asyncio.to_thread(lambda: [e for e in entries if not e.project
                                                or self._approved(e, self._code(e))])

    def _approved(self, entry: HookEntry, code: ServerCode) -> bool:
        return self.approvals is not None and self.approvals.approved(entry, code)

    def _code(self, entry: HookEntry) -> ServerCode:
        return entry.code(self.project_dir)

    def _input(self, event: str, payload: Mapping[str, Any], tool_name: str | None) -> bytes:
        info = self.session_info() if callable(self.session_info) else self.session_info
        data: dict[str, Any] = {
            "session_id": info.session_id if info is not None else None,
            "transcript_path": info.transcript_path if info is not None else None,
            "cwd": str(info.cwd if info is not None else self.project_dir),
            "permission_mode": info.permission_mode if info is not None else "default",
            "hook_event_name": event,
        }
        if tool_name is not None and event in TOOL_EVENTS:
            data["tool_name"] = tool_name
        data.update(payload)
        return json.dumps(data, default=str).encode()

    async def _one(self, event: str, entry: HookEntry, data: bytes) -> HookOutcome:
        env = {**self.env(), **dict.fromkeys(PROJECT_ENV, str(self.project_dir))}
        try:
            result = await self.run_command(entry.command, stdin=data, cwd=self.project_dir, env=env,
                                            timeout_s=entry.timeout_s)
        except OSError as exc:  # the shell, or the sandbox, could not be started
            self._last[entry.digest] = f"could not start: {exc}"
            return HookOutcome(errors=[f"{entry.label} could not be started: {exc}"])
        except ToolError as exc:  # `sandbox: required`, and there is no sandbox here
            self._last[entry.digest] = f"not run: {exc}"
            return HookOutcome(errors=[f"{entry.label} was not run: {exc}"])
        outcome = interpret(event, entry, result)
        self._last[entry.digest] = _summary(result, outcome, entry)
        return outcome


def interpret(event: str, entry: HookEntry, result: CommandResult) -> HookOutcome:
    """A hook's exit code and output, read as Claude Code reads them (see the module docstring)."""
    if result.timed_out:
        return HookOutcome(errors=[f"{entry.label} timed out after {entry.timeout_s:g} s and was stopped; the call "
                                   "went on without it"])
    if result.exit_code == 2:
        reason = result.stderr.strip() or f"{entry.label} blocked this (exit code 2) without saying why"
        return HookOutcome(decision="deny" if event == "PreToolUse" else None, reason=reason, blocked=True)
    if result.exit_code != 0:
        said = result.stderr.strip() or result.stdout.strip()
        tail = f": {said[-2000:]}" if said else ""
        return HookOutcome(errors=[f"{entry.label} failed with exit code {result.exit_code}{tail}"])
    text = result.stdout.strip()
    if text.startswith("{"):
        try:
            answer = json.loads(text)
        except ValueError:
            return HookOutcome(errors=[f"{entry.label} printed output that starts like JSON but is not: ignored"])
        if isinstance(answer, dict):
            return _answer(event, entry, answer)
    if text and event in CONTEXT_EVENTS:
        return HookOutcome(additional_context=[text])
    return NOTHING


def _answer(event: str, entry: HookEntry, answer: dict[str, Any]) -> HookOutcome:
    """A hook's JSON answer; a field of the wrong kind is ignored and said as an error."""
    errors: list[str] = []

    def text(value: Any, name: str) -> str | None:
        if value is None or isinstance(value, str):
            return value
        errors.append(f"{entry.label}: `{name}` should be text; ignored")
        return None

    specific = answer.get("hookSpecificOutput")
    if specific is not None and not isinstance(specific, dict):
        errors.append(f"{entry.label}: `hookSpecificOutput` should be an object; ignored")
        specific = None
    specific = specific or {}
    decision: Decision | None = None
    reason: str | None = None
    blocked = False
    legacy = answer.get("decision")
    if legacy is not None:
        if legacy in ("approve", "block"):
            blocked = legacy == "block"
            decision = DECISIONS[legacy] if event == "PreToolUse" else None
            reason = text(answer.get("reason"), "reason")
        else:
            errors.append(f"{entry.label}: `decision` should be approve or block, not {legacy!r}; ignored")
    said = specific.get("permissionDecision")
    if said is not None and event == "PreToolUse":
        if said in ("allow", "deny", "ask"):
            decision, blocked = DECISIONS[said], False
            reason = text(specific.get("permissionDecisionReason"), "permissionDecisionReason") or reason
        else:
            errors.append(f"{entry.label}: `permissionDecision` should be allow, deny or ask, not {said!r}; ignored")
    updated = specific.get("updatedInput")
    if updated is not None and not isinstance(updated, dict):
        errors.append(f"{entry.label}: `updatedInput` should be an object of the tool's arguments; ignored")
        updated = None
    context = text(specific.get("additionalContext"), "additionalContext")
    stop = None
    if answer.get("continue") is False:
        stop = text(answer.get("stopReason"), "stopReason") or f"{entry.label} ended the run"
    message = text(answer.get("systemMessage"), "systemMessage")
    return HookOutcome(decision=decision, reason=reason, blocked=blocked,
                       updated_input=updated if event == "PreToolUse" else None,
                       additional_context=[context] if context else [], stop=stop,
                       system_messages=[message] if message else [], errors=errors)


def _summary(result: CommandResult, outcome: HookOutcome, entry: HookEntry) -> str:
    if result.timed_out:
        return f"timed out after {entry.timeout_s:g} s"
    if outcome.blocked or outcome.decision is not None:
        words = "blocked" if outcome.blocked else outcome.decision or ""
        return f"{words}: {outcome.reason}" if outcome.reason else words
    return f"exit {result.exit_code}"
