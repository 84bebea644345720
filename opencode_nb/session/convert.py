"""Session messages in provider-neutral form: what the model is shown of the history.

One stored message becomes zero or more `LLMMessage`s. The function is pure, so the loop caches its
result per message and only converts what changed.

- A user message: its text, attached files (text inline, images as images), a compaction request as a
  question, subtask and agent mentions as the notes the model needs.
- An assistant message: its reasoning, text and tool calls, then one `tool` message with a result for
  EVERY call — completed outputs (or a placeholder once compaction pruned them), errors as errors, and
  calls cut short by a Stop as interrupted — because providers reject a call without a result.
- An assistant message that failed at the provider (and will be retried) is skipped: a retry answers
  the same user turn again.
"""

from __future__ import annotations

import base64
import urllib.parse

from ..provider.request import (
    Block,
    ImageBlock,
    LLMMessage,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from .models import (
    AgentPart,
    AssistantMessage,
    CompactionPart,
    FilePart,
    MessageWithParts,
    ReasoningPart,
    SubtaskPart,
    TextPart,
    ToolCompleted,
    ToolErrored,
    ToolPart,
)

COMPACTED = "[Old tool result content cleared]"
INTERRUPTED = "[Tool execution was interrupted]"
COMPACTION_QUESTION = "What did we do so far?"


def to_llm_messages(item: MessageWithParts, *, media: bool = True) -> list[LLMMessage]:
    if isinstance(item.message, AssistantMessage):
        return _assistant(item, media)
    return _user(item, media)


def _user(item: MessageWithParts, media: bool) -> list[LLMMessage]:
    blocks: list[Block] = []
    for part in item.parts:
        if isinstance(part, TextPart) and part.text:
            blocks.append(TextBlock(text=part.text))
        elif isinstance(part, FilePart):
            blocks.extend(_file(part, media))
        elif isinstance(part, CompactionPart):
            blocks.append(TextBlock(text=COMPACTION_QUESTION))
        elif isinstance(part, SubtaskPart):
            blocks.append(TextBlock(text=f"The following task was handed to the {part.agent} agent: "
                                         f"{part.description}"))
        elif isinstance(part, AgentPart):
            blocks.append(TextBlock(text=f"(The person mentioned the @{part.name} agent.)"))
    return [LLMMessage(role="user", content=blocks)] if blocks else []


def _file(part: FilePart, media: bool) -> list[Block]:
    name = part.filename or part.url
    if part.mime.startswith("image/"):
        data = _data(part.url)
        if media and data is not None:
            return [ImageBlock(mime=part.mime, data=data)]
        return [TextBlock(text=f"[Attached {part.mime}: {name}]")]
    if part.url.startswith("data:"):
        raw = _data(part.url) or ""
        text = base64.b64decode(raw).decode("utf-8", errors="replace") if ";base64" in part.url[:64] else \
            urllib.parse.unquote(part.url.split(",", 1)[-1])
        return [TextBlock(text=f"Contents of {name}:\n{text}")]
    return [TextBlock(text=f"[Attached {part.mime}: {name}]")]


def _data(url: str) -> str | None:
    if not url.startswith("data:") or "," not in url:
        return None
    return url.split(",", 1)[1]


def _assistant(item: MessageWithParts, media: bool) -> list[LLMMessage]:
    message = item.message
    assert isinstance(message, AssistantMessage)
    if message.error is not None and message.error.kind in ("provider", "auth", "context_overflow", "unknown"):
        return []
    content: list[Block] = []
    results: list[Block] = []
    for part in item.parts:
        if isinstance(part, TextPart) and part.text:
            content.append(TextBlock(text=part.text))
        elif isinstance(part, ReasoningPart) and (part.text or part.metadata):
            content.append(ReasoningBlock(text=part.text, metadata=part.metadata))
        elif isinstance(part, ToolPart):
            state = part.state
            content.append(ToolCallBlock(id=part.call_id, name=part.tool, input=dict(state.input)))
            results.append(_result(part, media))
    out = [LLMMessage(role="assistant", content=content)] if content else []
    if results:
        out.append(LLMMessage(role="tool", content=results))
    return out


def _result(part: ToolPart, media: bool) -> ToolResultBlock:
    state = part.state
    if isinstance(state, ToolCompleted):
        if state.compacted_at is not None:
            return ToolResultBlock(call_id=part.call_id, name=part.tool, output=COMPACTED)
        images = [ImageBlock(mime=a.mime, data=d) for a in state.attachments
                  if media and a.mime.startswith("image/") and (d := _data(a.url)) is not None]
        return ToolResultBlock(call_id=part.call_id, name=part.tool, output=state.output, images=images)
    if isinstance(state, ToolErrored):
        partial = state.metadata.get("output") if state.metadata.get("interrupted") else None
        text = state.error if not partial else f"{state.error}\nOutput before it stopped:\n{partial}"
        return ToolResultBlock(call_id=part.call_id, name=part.tool, output=text, is_error=True)
    return ToolResultBlock(call_id=part.call_id, name=part.tool, output=INTERRUPTED, is_error=True)
