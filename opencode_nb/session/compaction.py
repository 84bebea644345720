"""Keeping a long session inside the model's context window.

Before each step the loop asks whether the last response's token count has reached the usable part of
the window (the context minus what is reserved for the answer). If so, old tool outputs are pruned
first: they are most of a coding session's bulk and the least needed verbatim later. If the estimate is
still over, the hidden compaction agent writes a summary that stands in for everything before it
(`History.visible` starts at the newest summary), and the run continues after a synthetic "continue"
message. `/compact` forces the same path with `auto=False`.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from ..agent.info import AgentInfo
from ..config.schema import CompactionConfig
from ..provider.catalog import ModelInfo
from ..provider.events import StepFinish, TextDelta
from ..provider.request import LLMMessage, LLMRequest, TextBlock
from .deps import LoopDeps
from .history import History
from .hooks import report
from .model_choice import model_for
from .models import (
    AssistantMessage,
    CompactionPart,
    MessageError,
    StepFinishPart,
    TextPart,
    Tokens,
    ToolCompleted,
    ToolPart,
    UserMessage,
    now,
)
from .system import outgoing

if TYPE_CHECKING:
    from .run_state import RunState

log = logging.getLogger(__name__)

OUTPUT_RESERVE_CAP = 32_000
PRUNE_PROTECT = 40_000
"""Tokens of the most recent tool outputs that pruning never touches."""
PRUNE_MINIMUM = 20_000
"""Pruning only happens when it frees at least this many tokens: small gains are not worth a cache miss."""
KEEP_TURNS = 2
"""The newest user turns whose tool outputs are never pruned."""
SUMMARY_TOOL_OUTPUT_CHARS = 2_000
CONTINUE = "Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed."
SUMMARY_REQUEST = "Summarize the conversation so far as instructed, so the work can continue from the summary alone."


def estimate_tokens(text: str) -> int:
    return int(len(text) / 4 + 0.5)


def usable_tokens(model: ModelInfo, config: CompactionConfig) -> int:
    reserve = config.reserved if config.reserved is not None else min(model.output, OUTPUT_RESERVE_CAP)
    return max(0, model.context - reserve)


def overflows(tokens: Tokens, model: ModelInfo, config: CompactionConfig) -> bool:
    return config.auto and model.context > 0 and tokens.total >= usable_tokens(model, config)


def prune(history: History, *, protect: int = PRUNE_PROTECT, minimum: int = PRUNE_MINIMUM) -> list[ToolPart]:
    """Mark old completed tool outputs as compacted; returns the parts changed (not yet stored)."""
    turns = 0
    total = 0
    candidates: list[ToolPart] = []
    freed = 0
    for entry in reversed(list(history.entries.values())):
        if isinstance(entry.message, UserMessage):
            turns += 1
        if isinstance(entry.message, AssistantMessage) and entry.message.summary:
            break
        if turns < KEEP_TURNS:
            continue
        for part in reversed(list(entry.parts.values())):
            if not isinstance(part, ToolPart) or not isinstance(part.state, ToolCompleted):
                continue
            if part.state.compacted_at is not None:
                return _commit(candidates, freed, minimum)
            size = estimate_tokens(part.state.output)
            total += size
            if total > protect:
                candidates.append(part)
                freed += size
    return _commit(candidates, freed, minimum)


def _commit(candidates: list[ToolPart], freed: int, minimum: int) -> list[ToolPart]:
    if freed <= minimum:
        return []
    stamp = now()
    return [
        p.model_copy(update={"state": p.state.model_copy(update={"compacted_at": stamp})})
        for p in candidates
    ]


def request_tokens(messages: list[LLMMessage], system: list[str] | None = None) -> int:
    """A provider-independent estimate of a request's size, for deciding before sending it."""
    size = sum(len(s) for s in system or [])
    size += sum(len(json.dumps(m.model_dump(mode="json"), default=str)) for m in messages)
    return int(size / 4 + 0.5)


class Compactor:
    def __init__(self, deps: LoopDeps) -> None:
        self.deps = deps

    async def maybe_compact(self, state: RunState, user: UserMessage, agent: AgentInfo) -> bool:
        """Compact when the newest finished response filled the context. Returns whether it did."""
        config = self.deps.config.compaction
        last = _last_finished(state.history)
        if last is None or not config.auto:
            return False
        _, model = self.deps.providers.resolve(model_for(user, agent, self.deps.config))
        if not overflows(last.tokens, model, config):
            return False
        if config.prune:
            pruned = prune(state.history)
            for part in pruned:
                state.log.update_part(part)
            if pruned and request_tokens(state.history.llm_messages()) < usable_tokens(model, config):
                return True
        await self.compact(state, user, agent, auto=True, overflow=False)
        return True

    async def compact(
        self, state: RunState, user: UserMessage, agent: AgentInfo, *, auto: bool, overflow: bool = False
    ) -> AssistantMessage:
        """Write a summary of the history before now and continue from it."""
        log = state.log
        request_msg = _existing_request(state.history, user)
        if request_msg is None:
            request_msg = UserMessage(session_id=state.session_id, agent=user.agent, model=user.model,
                                      synthetic=True)
            log.add_message(request_msg)
            log.add_part(CompactionPart(session_id=state.session_id, message_id=request_msg.id, auto=auto))
        compaction = self.deps.agents.get("compaction")
        model_id = compaction.model or model_for(user, agent, self.deps.config)
        provider, model = self.deps.providers.resolve(model_id)
        head = [e for e in state.history.visible() if e.message.id < request_msg.id]
        messages = _fit(_for_summary(head), model, self.deps.config.compaction)
        asked = SUMMARY_REQUEST
        hooks = self.deps.hooks
        if hooks is not None and hooks.wants("PreCompact"):  # a hook may say what the summary must keep
            said = await hooks.fire("PreCompact", {
                "session_id": state.session_id, "cwd": str(self.deps.directory), "hook_event_name": "PreCompact",
                "trigger": "auto" if auto else "manual", "custom_instructions": ""})
            report(self.deps.bus, state.session_id, "PreCompact", said)
            asked = "\n\n".join([SUMMARY_REQUEST, *said.additional_context])
        messages.append(LLMMessage(role="user", content=[TextBlock(text=asked)]))
        summary = AssistantMessage(session_id=state.session_id, parent_id=request_msg.id, agent="compaction",
                                   model=model_id, summary=True)
        log.add_message(summary)
        request = outgoing(LLMRequest(model=model, system=[compaction.prompt or ""], messages=messages, tools=[],
                                      max_tokens=model.output, purpose="compaction"))
        text: list[str] = []
        finish: StepFinish | None = None
        try:
            async for event in provider.stream(request):
                if isinstance(event, TextDelta):
                    text.append(event.text)
                elif isinstance(event, StepFinish):
                    finish = event
        except Exception as exc:
            summary = summary.model_copy(update={"finish": "error", "completed_at": now(),
                                                 "error": MessageError(kind="provider", message=str(exc))})
            log.update_message(summary)
            raise
        tokens = Tokens(**finish.usage.model_dump()) if finish else Tokens()
        body = TextPart(session_id=state.session_id, message_id=summary.id, text="".join(text).strip())
        log.add_part(body)
        log.add_part(StepFinishPart(session_id=state.session_id, message_id=summary.id, reason="stop", tokens=tokens))
        summary = summary.model_copy(update={"finish": "stop", "completed_at": now(), "tokens": tokens})
        log.update_message(summary)
        if auto:
            follow = UserMessage(session_id=state.session_id, agent=user.agent, model=user.model, synthetic=True,
                                 tools=user.tools, permission=user.permission,
                                 list_variables=user.list_variables)  # the run goes on as it began
            log.add_message(follow)
            log.add_part(TextPart(session_id=state.session_id, message_id=follow.id, text=CONTINUE, synthetic=True))
        return summary


def _existing_request(history: History, user: UserMessage) -> UserMessage | None:
    task = history.pending_task()
    if task is not None and isinstance(task[1], CompactionPart) and task[0].id == user.id:
        return user
    return None


def _last_finished(history: History) -> AssistantMessage | None:
    for entry in reversed(list(history.entries.values())):
        m = entry.message
        if isinstance(m, AssistantMessage) and m.finish is not None and not m.summary and m.error is None:
            return m
        if isinstance(m, AssistantMessage) and m.summary:
            return None
    return None


def _for_summary(entries: list[Any]) -> list[LLMMessage]:
    """The history as the compaction agent reads it: tool outputs shortened, attachments as placeholders."""
    from .convert import to_llm_messages
    from .models import MessageWithParts

    out: list[LLMMessage] = []
    for entry in entries:
        parts = []
        for part in entry.parts.values():
            if isinstance(part, ToolPart) and isinstance(part.state, ToolCompleted):
                output = part.state.output
                if len(output) > SUMMARY_TOOL_OUTPUT_CHARS:
                    omitted = len(output) - SUMMARY_TOOL_OUTPUT_CHARS
                    output = (output[:SUMMARY_TOOL_OUTPUT_CHARS]
                              + f"\n[Tool output truncated for compaction: omitted {omitted} chars]")
                part = part.model_copy(update={"state": part.state.model_copy(
                    update={"output": output, "attachments": []})})
            parts.append(part)
        out.extend(to_llm_messages(MessageWithParts(message=entry.message, parts=parts), media=False))
    return out


def _fit(messages: list[LLMMessage], model: ModelInfo, config: CompactionConfig) -> list[LLMMessage]:
    """Drop the oldest messages until the summary request fits, keeping a note that they were dropped."""
    budget = usable_tokens(model, config)
    dropped = 0
    while len(messages) > 1 and request_tokens(messages) > budget:
        messages = messages[1:]
        dropped += 1
    while messages and messages[0].role != "user":
        messages = messages[1:]  # a conversation must start with a user turn (and no orphan tool results)
        dropped += 1
    if dropped:
        note = f"[{dropped} earlier messages were too long to include and are omitted.]"
        messages = [LLMMessage(role="user", content=[TextBlock(text=note)]), *messages]
    return messages
