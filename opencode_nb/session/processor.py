"""One step of the loop: stream a model response into parts and run its tool calls.

The processor owns one assistant message. Text and reasoning deltas grow their parts in place (the
session service publishes each delta at once and coalesces the store writes). Each tool call starts
running as soon as the model has finished writing it, while the response is still streaming, so
several calls in one response run concurrently; the step ends when the stream has ended AND every
call has a result.

Everything the model got wrong (unknown tool, malformed JSON, arguments no tool can use or that fail
validation, a tool that raised) becomes an error result the model reads on the next step. Only a person's
plain rejection (`RejectedError`, not `CorrectedError`) ends the loop, after this step.

No tool part outlives the step unfinished. A provider failure mid-stream (a dropped connection, an idle
timeout, an in-stream error) ends every call the model had started but not finished writing as an error
that says so; calls already running are waited for. The message records the failure, and the loop's
retry policy decides what comes next.

Cancellation (Stop, interrupt, `ws.abort`) arrives as `CancelledError` wherever the step is waiting. The
one teardown path cancels running tools, waits for them to be reaped (a command's last output arrives as it
is), marks every unfinished tool part as an "aborted" error that keeps its title and the output it printed,
and records the abort on the message, so the session stays consistent and usable.
Any other exception escaping the step (a bug) takes the same path, recorded as an error rather than a stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import CorrectedError, ProviderError, RejectedError, ToolError
from ..provider.catalog import ModelInfo, cost
from ..provider.events import (
    ProviderEvent,
    ReasoningDelta,
    ReasoningEnd,
    StepFinish,
    TextDelta,
    ToolCall,
    ToolCallStart,
)
from ..tool.base import Tool, ToolContext, argument_problem, storable_arguments, unusable_arguments, well_formed
from .deps import StepRecorder
from .hooks import CallHooks
from .models import (
    AssistantMessage,
    MessageError,
    Part,
    ReasoningPart,
    StepFinishPart,
    StepStartPart,
    TextPart,
    Tokens,
    ToolCompleted,
    ToolErrored,
    ToolPart,
    ToolPending,
    ToolRunning,
    now,
)
from .runlog import RunLog

log = logging.getLogger(__name__)

DOOM_LOOP_THRESHOLD = 3
"""The same tool with the same input this many times in a row asks the person whether to go on."""

ABORTED = "Tool execution aborted"
CUT_SHORT = "Not run: the model's connection ended before this call was complete"
"""The error of a call the model had started writing when its response failed; the failure follows."""

Outcome = Literal["continue", "stop", "retry", "compact"]


@dataclass
class StepResult:
    outcome: Outcome
    message: AssistantMessage
    error: ProviderError | None = None
    tool_calls: int = 0


@dataclass
class Processor:
    """Streams one response into `message` and runs its tool calls."""

    log: RunLog
    """Where every part and message change goes: the store and the run's history, together."""
    message: AssistantMessage
    model: ModelInfo
    tools: dict[str, Tool[Any]]
    make_context: Callable[[ToolPart], ToolContext]
    ask_doom_loop: Callable[[str, dict[str, Any]], Awaitable[None]]
    tools_allowed: bool = True
    """False on the last step: calls are answered with an error instead of being run."""
    recent_calls: list[str] = field(default_factory=list)
    """Keys of the session's latest tool calls (owned by the loop, so repeats are seen across steps)."""
    recorder: StepRecorder | None = None
    """Records the files before and after each call that may change them (checkpoints, for undo)."""
    missing: Callable[[str], str | None] = field(default=lambda _name: None)
    """Why a tool that is not offered would have been (`ToolRegistry.why_missing`: a server that did not start)."""
    around: CallHooks | None = None
    """The hooks before and after each call (`PreToolUse`, `PostToolUse`); None where none listen."""

    blocked: bool = field(default=False, init=False)
    _text: TextPart | None = field(default=None, init=False)
    _reasoning: ReasoningPart | None = field(default=None, init=False)
    _tool_parts: dict[str, ToolPart] = field(default_factory=dict, init=False)
    _order: list[str] = field(default_factory=list, init=False)
    _tasks: dict[str, asyncio.Task[None]] = field(default_factory=dict, init=False)
    _finish: StepFinish | None = field(default=None, init=False)

    async def run(self, stream: AsyncIterator[ProviderEvent]) -> StepResult:
        self._add(StepStartPart(session_id=self.message.session_id, message_id=self.message.id))
        try:
            try:
                async for event in stream:
                    self._on_event(event)
            except ProviderError as exc:
                self._close_streams()
                self._end_unwritten_calls(exc)
                await self._settle_tools()
                return self._failed(exc)
            self._close_streams()
            self._end_unwritten_calls(None)
            await self._settle_tools()
        except BaseException as exc:
            await self._abort_tools()
            self._record_abort(exc)
            raise
        return self._finished()

    # ------------------------------------------------------------------------------------------ events

    def _on_event(self, event: ProviderEvent) -> None:
        match event:
            case TextDelta(text=text):
                self._grow_text(text)
            case ReasoningDelta(text=text):
                self._grow_reasoning(text)
            case ReasoningEnd(metadata=metadata):
                if self._reasoning is not None:
                    self._put(self._reasoning.model_copy(update={"metadata": metadata, "ended_at": now()}))
                    self._reasoning = None
                elif metadata:  # redacted or hidden thinking: no text, but it must go back to the provider
                    self._add(ReasoningPart(session_id=self.message.session_id, message_id=self.message.id,
                                            metadata=metadata, started_at=now(), ended_at=now()))
            case ToolCallStart(id=call_id, name=name):
                self._close_streams()
                self._pending_part(call_id, name)
            case ToolCall():
                self._close_streams()
                self._on_tool_call(event)
            case StepFinish():
                self._finish = event

    def _grow_text(self, delta: str) -> None:
        if self._text is None:
            self._text = TextPart(
                session_id=self.message.session_id, message_id=self.message.id, text=delta, started_at=now()
            )
            self._add(self._text)
        else:
            self._text = self._text.model_copy(update={"text": self._text.text + delta})
            self._put(self._text, delta)

    def _grow_reasoning(self, delta: str) -> None:
        if self._reasoning is None:
            self._reasoning = ReasoningPart(
                session_id=self.message.session_id, message_id=self.message.id, text=delta, started_at=now()
            )
            self._add(self._reasoning)
        else:
            self._reasoning = self._reasoning.model_copy(update={"text": self._reasoning.text + delta})
            self._put(self._reasoning, delta)

    def _close_streams(self) -> None:
        """A text or reasoning part ends when anything else starts: write its final form now.

        The final form is well-formed text: a surrogate pair a server split across two deltas is joined,
        a lone half replaced, so the next request (which echoes it) can be encoded at all.
        """
        if self._text is not None:
            self._put(self._text.model_copy(update={"text": well_formed(self._text.text), "ended_at": now()}))
            self._text = None
        if self._reasoning is not None:
            self._put(self._reasoning.model_copy(update={"text": well_formed(self._reasoning.text),
                                                         "ended_at": now()}))
            self._reasoning = None

    # ------------------------------------------------------------------------------------------ tools

    def _pending_part(self, call_id: str, name: str) -> ToolPart:
        part = self._tool_parts.get(call_id)
        if part is None:
            part = ToolPart(
                session_id=self.message.session_id, message_id=self.message.id, call_id=call_id, tool=name
            )
            self._tool_parts[call_id] = part
            self._order.append(call_id)
            self._add(part)
        return part

    def _on_tool_call(self, call: ToolCall) -> None:
        part = self._pending_part(call.id, call.name)
        started = now()
        if call.input is None:
            self._error(part, {}, started, _malformed(call), {"summary": "Not run: its arguments were not valid JSON"})
            return
        problem = argument_problem(call.input)
        if problem is not None:  # stored cleaned and cut: the input itself may not even be storable
            self._error(part, storable_arguments(call.input), started, unusable_arguments(call.name, problem),
                        {"summary": f"Not run: its arguments {problem}"})
            return
        if not self.tools_allowed:
            self._error(part, call.input, started, "Tools are disabled for this step: answer in text only.",
                        {"summary": "Not run: tools are off for this step"})
            return
        tool = self.tools.get(call.name) or self.tools.get(call.name.lower())
        if tool is None:
            why = self.missing(call.name)
            self._error(part, call.input, started, _unknown(call.name, self.tools, why),
                        {"summary": f"Not run: {why.split(': ')[0]}" if why else
                         f"Not run: there is no tool named {call.name!r}"})
            return
        if tool.id != part.tool:
            part = part.model_copy(update={"tool": tool.id})
        self._set(part, ToolRunning(input=call.input, started_at=started))
        repeated = self._repeats(tool.id, call.input)
        self._tasks[call.id] = asyncio.get_running_loop().create_task(
            self._execute(call.id, tool, call.input, started, repeated)
        )

    def _repeats(self, tool_id: str, tool_input: dict[str, Any]) -> bool:
        """True when this call is the DOOM_LOOP_THRESHOLD-th identical call in a row in this session."""
        key = tool_id + "\0" + json.dumps(tool_input, sort_keys=True, default=str)
        self.recent_calls.append(key)
        del self.recent_calls[:-DOOM_LOOP_THRESHOLD]
        return len(self.recent_calls) == DOOM_LOOP_THRESHOLD and len(set(self.recent_calls)) == 1

    async def _execute(
        self, call_id: str, tool: Tool[Any], tool_input: dict[str, Any], started: float, repeated: bool
    ) -> None:
        try:
            if repeated:
                await self.ask_doom_loop(tool.id, tool_input)
            if self.around is not None:
                tool_input = await self.around.before(self._tool_parts[call_id], tool, tool_input)
            result = await self._run_recorded(tool, tool_input, call_id)
            if self.around is not None:
                result = await self.around.after(self._tool_parts[call_id], tool, tool_input, result)
        except asyncio.CancelledError:
            raise
        except ToolError as exc:
            if isinstance(exc, RejectedError) and not isinstance(exc, CorrectedError):
                self.blocked = True
            metadata = _running_metadata(self._tool_parts[call_id])
            if exc.summary:  # the person's words for it: the message is the model's
                metadata = {**metadata, "summary": exc.summary}
            self._error(self._tool_parts[call_id], tool_input, started, str(exc), metadata)
            return
        except (ValueError, OSError, re.error) as exc:
            # What the standard library raises for input it cannot use (a bad pattern, a name too long, an
            # argument list too big): the model's mistake, not ours, so no traceback at error level.
            log.warning("tool %s could not use its input: %s: %s", tool.id, type(exc).__name__, exc)
            log.debug("tool %s failed", tool.id, exc_info=True)
            self._error(self._tool_parts[call_id], tool_input, started, f"{type(exc).__name__}: {exc}")
            return
        except Exception as exc:  # a tool bug is still only a result the model reads
            log.exception("tool %s failed", tool.id)
            self._error(self._tool_parts[call_id], tool_input, started, f"{type(exc).__name__}: {exc}")
            return
        part = self._tool_parts[call_id]
        self._set(
            part,
            ToolCompleted(
                input=tool_input,
                output=result.output,
                title=result.title,
                metadata={**_running_metadata(part), **result.metadata},  # live progress stays visible
                attachments=list(result.attachments),
                started_at=started,
            ),
        )

    async def _run_recorded(self, tool: Tool[Any], tool_input: dict[str, Any], call_id: str) -> Any:
        """Run the tool between two checkpoints of the files; stopped midway, what it wrote is still recorded."""
        session_id = self.message.session_id
        if self.recorder is None:
            return await tool.run(tool_input, self.make_context(self._tool_parts[call_id]))
        await self.recorder.before_tool(session_id, tool.id, tool_input)
        try:
            result = await tool.run(tool_input, self.make_context(self._tool_parts[call_id]))
        except asyncio.CancelledError:
            with contextlib.suppress(BaseException):
                await asyncio.shield(self.recorder.after_tool(session_id, tool.id))
            raise
        except BaseException:
            await self.recorder.after_tool(session_id, tool.id)
            raise
        await self.recorder.after_tool(session_id, tool.id)
        return result

    def update_running(self, call_id: str, title: str | None, metadata: dict[str, Any] | None) -> None:
        """Live progress from a running tool (bash output tail, child session summary)."""
        part = self._tool_parts.get(call_id)
        if part is None or not isinstance(part.state, ToolRunning):
            return
        changes: dict[str, Any] = {}
        if title is not None:
            changes["title"] = title
        if metadata is not None:
            changes["metadata"] = {**part.state.metadata, **metadata}
        self._set(part, part.state.model_copy(update=changes))

    def _end_unwritten_calls(self, failure: ProviderError | None) -> None:
        """Calls the model started but never finished writing cannot run: end them as errors saying why.

        Without a failure this covers a stream that finished while a call was still open (a server that
        announced a call and never sent it); either way no part is left pending.
        """
        for part in list(self._tool_parts.values()):
            if isinstance(part.state, ToolPending):
                reason = f"{CUT_SHORT} ({failure})." if failure is not None else \
                    "Not run: the model's response ended before this call was complete."
                self._error(part, {}, now(), reason, {"incomplete": True})

    async def _settle_tools(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks.values())

    async def _abort_tools(self) -> None:
        running = [t for t in self._tasks.values() if not t.done()]
        for task in running:
            task.cancel()
        if running:
            # Reap them (a bash tool kills its process group on cancel) but never hang the abort.
            await asyncio.wait(running, timeout=2.0)

    # ------------------------------------------------------------------------------------------ results

    def _finished(self) -> StepResult:
        finish = self._finish
        reason = finish.reason if finish else "stop"
        if reason == "stop" and self._tool_parts:
            reason = "tool-calls"  # some servers say stop even though they called tools
        tokens = _tokens(finish)
        step_cost = cost(finish.usage, self.model) if finish else 0.0
        self._add(
            StepFinishPart(
                session_id=self.message.session_id,
                message_id=self.message.id,
                reason=reason,
                tokens=tokens,
                cost=step_cost,
            )
        )
        error = None
        if reason == "length":
            error = MessageError(kind="output_length", message="The response hit the output token limit.")
        elif reason == "content-filter":
            error = MessageError(kind="content_filter", message="The provider's content filter stopped the response.")
        self.message = self.message.model_copy(
            update={"finish": reason, "tokens": tokens, "cost": step_cost, "completed_at": now(), "error": error}
        )
        self.log.update_message(self.message)
        if self.blocked or reason == "content-filter":
            outcome: Outcome = "stop"
        elif (reason == "tool-calls" and self._tool_parts) or (reason == "length" and self._tool_parts):
            outcome = "continue"
        else:
            outcome = "stop"
        return StepResult(outcome, self.message, tool_calls=len(self._tool_parts))

    def _failed(self, exc: ProviderError) -> StepResult:
        kind = getattr(exc, "kind", None) or ("auth" if exc.status in (401, 403) else "provider")
        self.message = self.message.model_copy(
            update={
                "finish": "error",
                "completed_at": now(),
                "error": MessageError(kind=_error_kind(kind), message=str(exc), status=exc.status,
                                      retryable=exc.retryable),
            }
        )
        self.log.update_message(self.message)
        if kind == "context_overflow":
            outcome: Outcome = "compact"
        elif exc.retryable:
            outcome = "retry"
        else:
            outcome = "stop"
        return StepResult(outcome, self.message, error=exc, tool_calls=len(self._tool_parts))

    def _record_abort(self, cause: BaseException) -> None:
        stopped = isinstance(cause, asyncio.CancelledError | KeyboardInterrupt)
        what = ABORTED if stopped else f"Tool execution ended: the step failed ({type(cause).__name__})"
        for part in list(self._tool_parts.values()):
            if isinstance(part.state, (ToolPending, ToolRunning)):
                started = part.state.started_at if isinstance(part.state, ToolRunning) else now()
                metadata = {**_running_metadata(part), "interrupted": True}
                self._error(part, part.state.input, started, what, metadata)
        self._close_streams()
        error = MessageError(kind="aborted", message="The run was stopped.") if stopped else \
            MessageError(kind="unknown", message=f"{type(cause).__name__}: {cause}")
        self.message = self.message.model_copy(
            update={"finish": "aborted" if stopped else "error", "completed_at": now(), "error": error}
        )
        self.log.update_message(self.message)
        self.log.sessions.flush()

    # ------------------------------------------------------------------------------------------ writes

    def _error(
        self,
        part: ToolPart,
        tool_input: dict[str, Any],
        started: float,
        message: str,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        # What the call showed while it ran (its title, its output so far) stays on the errored part: a stop or
        # a failure must not blank the card the person was watching.
        title = part.state.title if isinstance(part.state, ToolRunning) else ""
        self._set(part, ToolErrored(input=tool_input, error=message, title=title, metadata=metadata or {},
                                    started_at=started))

    def _set(self, part: ToolPart, state: Any) -> None:
        part = part.model_copy(update={"state": state})
        self._tool_parts[part.call_id] = part
        self._put(part)

    def _add(self, part: Part) -> None:
        self.log.add_part(part)

    def _put(self, part: Part, delta: str | None = None) -> None:
        self.log.update_part(part, delta=delta)


def _tokens(finish: StepFinish | None) -> Tokens:
    if finish is None:
        return Tokens()
    u = finish.usage
    return Tokens(
        input=u.input, output=u.output, reasoning=u.reasoning, cache_read=u.cache_read, cache_write=u.cache_write
    )


def _running_metadata(part: ToolPart) -> dict[str, Any]:
    return dict(part.state.metadata) if isinstance(part.state, ToolRunning) else {}


def _malformed(call: ToolCall) -> str:
    raw = call.raw if len(call.raw) <= 2000 else call.raw[:2000] + "…"
    return (
        f"The arguments for tool '{call.name}' are not a valid JSON object ({call.error}). "
        f"Received: {raw!r}. Call the tool again with a JSON object that matches its schema."
    )


def _unknown(name: str, tools: dict[str, Tool[Any]], why: str | None = None) -> str:
    available = ", ".join(sorted(tools)) or "none"
    if why:
        return (f"The tool '{name}' is not available: {why}. Tell the person what it says; retrying will not "
                f"help until it is fixed. Available tools: {available}.")
    return f"There is no tool named '{name}'. Available tools: {available}. Use one of them or answer in text."


def _error_kind(kind: str) -> Any:
    known = {"aborted", "provider", "auth", "output_length", "context_overflow", "content_filter", "unknown"}
    return kind if kind in known else "provider"


