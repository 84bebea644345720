"""Hooks as the loop meets them: before and after each tool call, when a prompt is submitted, when the agent
would stop.

The hooks themselves (commands in Claude Code's format, Python plugins) live in `opencode_nb/hook/`; the loop
sees one object that says whether anything listens to an event (`wants`, so a session without hooks pays
nothing) and what the listeners answered (`fire`, a `HookOutcome`). Here that answer is acted on.

A hook is a layer of the permission engine, not a way around it: its deny refuses the call, its ask makes a
person decide, and its allow only answers what would have been asked (the call's asks go through with
`preapproved`), never a deny rule or the administrator's policy, which the permission service checks first.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from pydantic import ValidationError

from ..bus import Bus
from ..errors import HookRefusedError, ToolError
from ..hook.outcome import HookOutcome
from ..tool.base import Tool, ToolResult
from .events import HookReported
from .models import ToolPart


class LoopHooks(Protocol):
    """The workspace's hooks (`hook.layer.Hooks`)."""

    def wants(self, event: str, tool: str | None = None) -> bool:
        """Whether any hook listens to `event` (for `tool`, where the event is about one)."""
        ...

    async def fire(self, event: str, payload: dict[str, Any], *, tool: str | None = None) -> HookOutcome:
        """Run the listeners of `event` with `payload` (the JSON a command hook reads) and combine what they said."""
        ...

    async def after_result(self, tool: str, payload: dict[str, Any], result: ToolResult) -> ToolResult:
        """The result as the plugins that change results left it."""
        ...


Asking = Callable[..., Awaitable[Any]]
"""The call's own ask (`ToolContext.ask`), for a hook that wants the person to decide."""

PREAPPROVED = "a PreToolUse hook"


def report(bus: Bus, session_id: str, event: str, outcome: HookOutcome) -> None:
    """Tell the person what the hooks said for them, if anything."""
    lines = [*outcome.system_messages, *outcome.errors]
    if lines:
        bus.publish(HookReported(session_id=session_id, event=event, lines=lines))


@dataclass
class CallHooks:
    """`PreToolUse` and `PostToolUse` around each call of one step (the processor's `around`)."""

    hooks: LoopHooks
    bus: Bus
    session_id: str
    common: Callable[[], dict[str, Any]]
    """The fields every hook's JSON has (session id, cwd, permission mode), read when a hook runs."""
    ask_for: Callable[[ToolPart], Asking]
    approved: dict[str, str] = field(default_factory=dict)
    """Calls a hook allowed, by call id: their asks are answered (`preapproved`)."""
    stopped: str | None = None
    """A hook said `continue: false`: why; the run ends after this step."""

    async def before(self, part: ToolPart, tool: Tool[Any], tool_input: dict[str, Any]) -> dict[str, Any]:
        """The input the call runs with.

        Raises:
            HookRefusedError: a hook blocked or denied the call (or stopped the run).
            ToolError: a hook's `updatedInput` is not valid input of the tool.
        """
        if not self.hooks.wants("PreToolUse", tool.id):
            return tool_input
        outcome = await self.hooks.fire("PreToolUse", {
            **self.common(), "hook_event_name": "PreToolUse", "tool_name": tool.id, "tool_input": tool_input,
            "tool_use_id": part.call_id}, tool=tool.id)
        report(self.bus, self.session_id, "PreToolUse", outcome)
        if outcome.stop is not None:
            self.stopped = outcome.stop
            raise HookRefusedError(f"the run was stopped: {outcome.stop}")
        if outcome.denies:
            raise HookRefusedError(outcome.reason or "it gave no reason.")
        if outcome.updated_input is not None:
            try:
                tool.params.model_validate(outcome.updated_input)
            except ValidationError as exc:
                raise ToolError(f"A PreToolUse hook changed this call's input to something {tool.id} cannot take "
                                f"({exc.errors()[0].get('msg', exc)}); the call was not made.") from None
            tool_input = dict(outcome.updated_input)
        if outcome.decision == "allow":
            self.approved[part.call_id] = PREAPPROVED
        elif outcome.decision == "ask":
            await self.ask_for(part)(tool.id, [tool.id], metadata={"hook": outcome.reason or "a hook asks"},
                                     always_ask=True)
        return tool_input

    async def after(self, part: ToolPart, tool: Tool[Any], tool_input: dict[str, Any],
                    result: ToolResult) -> ToolResult:
        """The result with what `PostToolUse` hooks told the model (a block's reason, context) appended."""
        if not self.hooks.wants("PostToolUse", tool.id):
            return result
        payload = {**self.common(), "hook_event_name": "PostToolUse", "tool_name": tool.id, "tool_input": tool_input,
                   "tool_use_id": part.call_id}
        result = await self.hooks.after_result(tool.id, payload, result)
        outcome = await self.hooks.fire("PostToolUse", {
            **payload, "tool_response": {"output": result.output, "title": result.title}}, tool=tool.id)
        report(self.bus, self.session_id, "PostToolUse", outcome)
        if outcome.stop is not None:
            self.stopped = outcome.stop
        told = [*([outcome.reason] if outcome.blocked and outcome.reason else []), *outcome.additional_context]
        if not told:
            return result
        notes = "\n".join(f"<hook event=\"PostToolUse\">\n{text.strip()}\n</hook>" for text in told)
        return replace(result, output=f"{result.output}\n\n{notes}")
