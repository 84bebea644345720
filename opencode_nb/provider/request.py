"""A provider-neutral request: what the loop asks any model.

Messages are built from small content blocks. Each provider converts one `LLMMessage` to its wire form
with a pure function (`convert_message` in its module), so old messages are converted once and cached
(by identity, or by a caller's message id) and each step only converts what is new.
"""

from __future__ import annotations

import base64
import binascii
import urllib.parse
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .catalog import ModelInfo


class _Block(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextBlock(_Block):
    type: Literal["text"] = "text"
    text: str


class _Media(_Block):
    mime: str
    data: str
    """Base64 payload. A `data:` URL is accepted too and split into `mime` and `data`."""

    @model_validator(mode="before")
    @classmethod
    def _from_data_url(cls, value: Any) -> Any:
        if isinstance(value, dict) and str(value.get("data", "")).startswith("data:"):
            mime, data = split_data_url(value["data"])
            return {**value, "mime": value.get("mime") or mime, "data": data}
        return value

    @property
    def url(self) -> str:
        return f"data:{self.mime};base64,{self.data}"


class ImageBlock(_Media):
    """An image the model looks at."""

    type: Literal["image"] = "image"


class FileBlock(_Media):
    """Any other attachment (a PDF, a text file); providers that cannot take its type describe it in text."""

    type: Literal["file"] = "file"
    filename: str | None = None


class ReasoningBlock(_Block):
    type: Literal["reasoning"] = "reasoning"
    text: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    """What the provider needs to accept it back, e.g. Anthropic's `signature` or `redacted` data."""


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


Block = Annotated[
    TextBlock | ImageBlock | FileBlock | ReasoningBlock | ToolCallBlock | ToolResultBlock,
    Field(discriminator="type"),
]


class LLMMessage(BaseModel):
    """user: text, images and files; assistant: reasoning, text and tool calls; tool: tool results."""

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
    """Output limit; the model's catalog figure when None."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Provider settings passed through: `thinking`, `reasoning_effort`, `top_k`, `seed`, ..."""
    tool_choice: Literal["auto", "none"] = "auto"
    purpose: Literal["step", "title", "compaction"] = "step"
    """Why the loop asks: providers ignore it; the scripted provider answers titles without a script turn."""


def split_data_url(url: str) -> tuple[str, str]:
    """`data:<mime>[;base64],<payload>` -> (mime, base64 payload)."""
    head, sep, payload = url.partition(",")
    if not head.startswith("data:") or not sep:
        raise ValueError(f"not a data URL: {url[:40]!r}")
    mime, *params = head[5:].split(";")
    if "base64" in params:
        try:
            base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("the data URL says base64 but its payload is not valid base64") from None
        return mime or "application/octet-stream", payload
    raw = urllib.parse.unquote_to_bytes(payload)
    return mime or "text/plain", base64.b64encode(raw).decode("ascii")
