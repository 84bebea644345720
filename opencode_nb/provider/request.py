"""A provider-neutral request: what the loop asks any model.

Messages are built from small content blocks. Converting one block list to a wire format is a pure
function of that message, so the loop can cache the provider form of old messages and only convert
what is new at each step.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .catalog import ModelInfo


class _Block(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextBlock(_Block):
    type: Literal["text"] = "text"
    text: str


class ImageBlock(_Block):
    """An image as base64 `data` with its `mime` type."""

    type: Literal["image"] = "image"
    mime: str
    data: str


class ReasoningBlock(_Block):
    type: Literal["reasoning"] = "reasoning"
    text: str
    metadata: dict[str, Any] = Field(default_factory=dict)


class ToolCallBlock(_Block):
    type: Literal["tool-call"] = "tool-call"
    id: str
    name: str
    input: dict[str, Any]


class ToolResultBlock(_Block):
    type: Literal["tool-result"] = "tool-result"
    call_id: str
    name: str
    output: str
    is_error: bool = False
    images: list[ImageBlock] = Field(default_factory=list)


Block = Annotated[TextBlock | ImageBlock | ReasoningBlock | ToolCallBlock | ToolResultBlock,
                  Field(discriminator="type")]


class LLMMessage(BaseModel):
    """user: text and images; assistant: reasoning, text and tool calls; tool: tool results."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    role: Literal["user", "assistant", "tool"]
    content: list[Block]


class ToolSpec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str
    description: str
    parameters: dict[str, Any]
    """JSON schema of the tool's input object."""


class LLMRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)
    model: ModelInfo
    system: list[str] = Field(default_factory=list)
    messages: list[LLMMessage] = Field(default_factory=list)
    tools: list[ToolSpec] = Field(default_factory=list)
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    tool_choice: Literal["auto", "none"] = "auto"
    purpose: Literal["step", "title", "compaction"] = "step"
    """Why the loop asks: providers ignore it; the scripted provider answers titles without a script turn."""
