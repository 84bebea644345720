"""The one stream of events every provider produces, whatever its wire format.

A step streams text and reasoning deltas, announces each tool call as soon as its name is known
(`ToolCallStart`), delivers it whole once its input is complete (`ToolCall`), and always ends with
exactly one `StepFinish`. A failure is never an event: it is raised as a `ProviderError`.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Usage(_Event):
    input: int = 0
    """Prompt tokens not read from or written to the cache."""
    output: int = 0
    """Output tokens, reasoning excluded when the provider reports it apart."""
    reasoning: int = 0
    """Output tokens spent on reasoning (priced as output)."""
    cache_read: int = 0
    cache_write: int = 0


class TextDelta(_Event):
    type: Literal["text"] = "text"
    text: str


class ReasoningDelta(_Event):
    type: Literal["reasoning"] = "reasoning"
    text: str


class ReasoningEnd(_Event):
    """A reasoning block ended; `metadata` holds what must be sent back with it.

    Anthropic: `{"signature": ...}` for thinking, `{"redacted": data}` for a redacted block, which has no
    text at all (so this event can come without any `ReasoningDelta` before it).
    """

    type: Literal["reasoning-end"] = "reasoning-end"
    metadata: dict[str, Any] = Field(default_factory=dict)


class ToolCallStart(_Event):
    """The model started writing a tool call: views can show it before its input is complete."""

    type: Literal["tool-call-start"] = "tool-call-start"
    id: str
    name: str


class ToolCall(_Event):
    """A complete tool call. `input` is None when the model's JSON did not parse; `error` says why."""

    type: Literal["tool-call"] = "tool-call"
    id: str
    name: str
    input: dict[str, Any] | None
    raw: str = ""
    error: str | None = None


FinishReason = Literal["stop", "tool-calls", "length", "content-filter", "error"]


class StepFinish(_Event):
    type: Literal["finish"] = "finish"
    reason: FinishReason
    usage: Usage = Field(default_factory=Usage)


ProviderEvent = Annotated[
    TextDelta | ReasoningDelta | ReasoningEnd | ToolCallStart | ToolCall | StepFinish, Field(discriminator="type")
]
provider_event_adapter: TypeAdapter[ProviderEvent] = TypeAdapter(ProviderEvent)


def parse_tool_input(name: str, call_id: str, raw: str) -> ToolCall:
    """A tool call from the raw JSON text the model wrote; malformed JSON becomes an error, not an exception.

    JSON nested deeper than the parser's recursion limit (`[[[[…` a hundred thousand times) is an error
    of the same kind: `json` stops at that limit and unwinds cleanly, so catching it here is safe.
    """
    text = raw.strip() or "{}"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return ToolCall(id=call_id, name=name, input=None, raw=raw, error=f"{exc.msg} at position {exc.pos}")
    except RecursionError:
        return ToolCall(id=call_id, name=name, input=None, raw=raw,
                        error="nested too deeply to read: arrays or objects inside one another hundreds of "
                              "levels down")
    if not isinstance(value, dict):
        return ToolCall(id=call_id, name=name, input=None, raw=raw,
                        error=f"expected a JSON object, got {type(value).__name__}")
    return ToolCall(id=call_id, name=name, input=value, raw=raw)
