"""The hooks of one workspace as one layer: command hooks and Python plugins, answering the loop's events.

The loop asks `wants(event)` (nothing configured costs only that) and `fire(event, payload)`, and gets one
`HookOutcome`: the command hooks' answer, with the plugins' added (`tool.execute.before` as a deny or
changed arguments, `chat.message` as context). Events that happen beside the loop are heard on the bus:
`Notification` and `AskWaiting` when an agent waits for the person, `CellExecuted` when an agent ran cells,
and the plugins' `session.idle` and `event`; `PlanStepFinished` is fired by the plan's runner (`later`).

A project's own hooks run only once the person approved them (`hook` is asked with `always_ask`, so no
rule allows it unasked; headless, the unattended policy refuses unless it allows everything); the approval
is remembered by the hook's digest and the files it runs, as an MCP server's is.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import replace
from typing import Any

from ..bus import Bus, Event
from ..errors import ToolError
from ..permission.events import PermissionAsked, PermissionRequest
from ..question.events import QuestionAsked
from ..tool.base import ToolResult
from .command import CommandHooks
from .config import HookEntry
from .outcome import NOTHING, HookOutcome
from .plugin_api import ToolCall
from .plugins import Plugins

log = logging.getLogger(__name__)

APPROVAL_PERMISSION = "hook"
"""What a project hook's first run asks (reserved: no tool may take the name)."""

PLUGIN_EVENTS = {"PreToolUse": "tool_execute_before", "PostToolUse": "tool_execute_after",
                 "UserPromptSubmit": "chat_message"}
"""The loop events a plugin hook answers too."""

Ask = Callable[..., Awaitable[Any]]
"""`PermissionService.ask`."""


class Hooks:
    def __init__(self, commands: CommandHooks, plugins: Plugins, bus: Bus, *, ask: Ask | None = None,
                 cell_of: Callable[[str], str | None] = lambda session_id: None) -> None:
        """`ask`: how a project hook's approval is asked; `cell_of(session_id)`: the notebook cell a session's
        run was started from, for `AskWaiting` (set by the kernel)."""
        self.commands = commands
        self.plugins = plugins
        self.bus = bus
        self.ask = ask
        self.cell_of = cell_of
        self._asking: set[str] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._offs: list[Callable[[], None]] = []
        if plugins.has("event"):
            self._offs.append(bus.subscribe("*", plugins.event, watch_only=True))
        if plugins.has("session_idle") or commands.wants("CellExecuted"):
            # By type name: the session package sits above this one, and its events are read by their fields.
            self._offs.append(bus.subscribe("*", self._session_event, watch_only=True))
        if commands.wants("Notification") or commands.wants("AskWaiting"):
            for kind in (PermissionAsked, QuestionAsked):  # watching only: a hook does not answer the ask
                self._offs.append(bus.subscribe(kind, self._waiting, watch_only=True))

    def __bool__(self) -> bool:
        return bool(self.commands) or bool(self.plugins.describe())

    def wants(self, event: str, tool: str | None = None) -> bool:
        plugin_hook = PLUGIN_EVENTS.get(event)
        return self.commands.wants(event, tool) or (plugin_hook is not None and self.plugins.has(plugin_hook))

    async def fire(self, event: str, payload: dict[str, Any], *, tool: str | None = None) -> HookOutcome:
        outcome = NOTHING
        if self.commands.wants(event, tool):
            await self._approve(event, tool, payload)
            outcome = await self.commands.run(event, payload, tool)
        if event == "PreToolUse" and tool is not None and not outcome.denies and self.plugins.has(
                "tool_execute_before"):
            given = outcome.updated_input if outcome.updated_input is not None else dict(payload["tool_input"])
            args, denial = await self.plugins.tool_execute_before(self._call(tool, payload), dict(given))
            if denial is not None:
                outcome = HookOutcome.combine([outcome, HookOutcome(decision="deny", reason=str(denial))])
            elif args != payload["tool_input"]:
                outcome = replace(outcome, updated_input=args)
        elif event == "UserPromptSubmit" and not outcome.blocked and self.plugins.has("chat_message"):
            added = await self.plugins.chat_message(str(payload.get("session_id")), str(payload.get("prompt", "")),
                                                    agent=payload.get("agent"))
            if added:
                outcome = replace(outcome, additional_context=[*outcome.additional_context, *added])
        return outcome

    async def after_result(self, tool: str, payload: Mapping[str, Any], result: ToolResult) -> ToolResult:
        """The result as the plugins' `tool.execute.after` left it."""
        if not self.plugins.has("tool_execute_after"):
            return result
        return await self.plugins.tool_execute_after(self._call(tool, payload), result,
                                                     args=dict(payload.get("tool_input") or {}))

    async def decide(self, request: PermissionRequest) -> tuple[str, Any] | None:
        """The plugins' `permission.ask`, for the permission service (`PermissionService.deciders`)."""
        answer = await self.plugins.permission_ask(request)
        return None if answer is None else ("a plugin's permission.ask", answer)

    async def end(self, sessions: list[str], timeout_s: float = 10.0) -> None:
        """`SessionEnd` for each session that ran, as the workspace closes (bounded: closing never hangs)."""
        if not self.commands.wants("SessionEnd") or not sessions:
            return
        runs = [self.commands.run("SessionEnd", {"session_id": s, "cwd": str(self.commands.project_dir),
                                                 "hook_event_name": "SessionEnd", "reason": "other"})
                for s in sessions]
        try:
            async with asyncio.timeout(timeout_s):
                await asyncio.gather(*runs)
        except TimeoutError:
            log.warning("the SessionEnd hooks did not finish within %g s", timeout_s)

    def close(self) -> None:
        for off in self._offs:
            off()
        self._offs.clear()
        for task in list(self._tasks):
            task.cancel()
        self.plugins.close()

    # ------------------------------------------------------------------------------------------ approvals

    async def _approve(self, event: str, tool: str | None, payload: Mapping[str, Any]) -> None:
        """Ask the person about the project's hooks `event` would run and they have not approved yet."""
        session_id = payload.get("session_id")
        if self.ask is None or not isinstance(session_id, str):
            return
        matching = self.commands.matching(event, tool)
        if not any(e.project for e in matching):
            return
        waiting = {e.digest for e in await asyncio.to_thread(self.commands.unapproved)}
        for entry in matching:
            if entry.digest in waiting and entry.digest not in self._asking:
                await self._approve_one(entry, session_id, str(payload.get("agent") or "build"))

    async def _approve_one(self, entry: HookEntry, session_id: str, agent: str) -> None:
        assert self.ask is not None
        self._asking.add(entry.digest)
        changed = self.commands.changes(entry)
        why = (f"The files it runs changed since you approved it ({'; '.join(changed)}). " if changed else
               f"The project's configuration ({entry.source}{f':{entry.line}' if entry.line else ''}) defines it. ")
        try:
            await self.ask(session_id, agent, APPROVAL_PERMISSION, [entry.command], always_ask=True, metadata={
                "hook": entry.label, "event": entry.event, "matcher": entry.matcher, "command": entry.command,
                "source": entry.source, "where": f"{why}Approve it once to let it run at every {entry.event} (a "
                                                 "change of the entry or of the files it runs asks again):"})
        except ToolError as exc:
            log.info("%s was not approved: %s", entry.label, exc)
            return
        finally:
            self._asking.discard(entry.digest)
        self.commands.approve(entry)

    # ------------------------------------------------------------------------------------------ the bus

    def _call(self, tool: str, payload: Mapping[str, Any]) -> ToolCall:
        return ToolCall(tool, str(payload.get("session_id") or ""), str(payload.get("tool_use_id") or ""),
                        payload.get("agent"))

    def _soon(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run `work` beside the loop: a hook heard on the bus never holds up what published the event."""
        try:
            task: asyncio.Task[Any] = asyncio.get_running_loop().create_task(work)
        except RuntimeError:  # published off the loop (a thread): nothing to run it on
            close = getattr(work, "close", None)
            if close is not None:
                close()
            return
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _session_event(self, event: Event) -> None:
        kind = getattr(event, "type", "")
        if kind == "session.idle" and self.plugins.has("session_idle"):
            self._soon(self.plugins.session_idle(str(getattr(event, "session_id", ""))))
        elif kind == "message.part.updated" and self.commands.wants("CellExecuted"):
            self._part(getattr(event, "part", None))

    def _waiting(self, event: Event) -> None:
        if isinstance(event, PermissionAsked):
            session_id, request_id = event.request.session_id, event.request.id
            what, kind = f"permission to use {event.request.permission}", "permission_prompt"
        elif isinstance(event, QuestionAsked):
            session_id, request_id = event.request.session_id, event.request.id
            what, kind = "an answer to a question", "question"
        else:
            return
        message = f"An agent needs {what}"
        base = {"session_id": session_id, "cwd": str(self.commands.project_dir), "message": message}
        if self.commands.wants("Notification"):
            self._soon(self.commands.run("Notification", {**base, "hook_event_name": "Notification",
                                                          "notification_type": kind}))
        if self.commands.wants("AskWaiting"):
            self._soon(self.commands.run("AskWaiting", {**base, "hook_event_name": "AskWaiting", "kind": kind,
                                                        "request_id": request_id,
                                                        "cell_id": self.cell_of(session_id)}))

    def _part(self, part: Any) -> None:
        """A `notebook_run` call that ended: `CellExecuted` for each cell it ran."""
        state = getattr(part, "state", None)
        if getattr(part, "tool", None) != "notebook_run" or getattr(state, "status", None) not in (
                "completed", "error"):
            return
        base = {"session_id": part.session_id, "cwd": str(self.commands.project_dir), "tool_use_id": part.call_id,
                "hook_event_name": "CellExecuted"}
        for cell in getattr(state, "metadata", {}).get("runs") or []:  # each cell the call ran
            if isinstance(cell, dict):
                self._soon(self.commands.run("CellExecuted", {
                    **base, "cell_id": cell.get("id"), "status": cell.get("status"),
                    "execution_count": cell.get("execution_count")}))

    def later(self, event: str, payload: dict[str, Any]) -> None:
        """Fire an event of the notebook's own (`PlanStepFinished`) beside whatever is running."""
        if self.commands.wants(event):
            self._soon(self.commands.run(event, {"cwd": str(self.commands.project_dir), **payload,
                                                 "hook_event_name": event}))
