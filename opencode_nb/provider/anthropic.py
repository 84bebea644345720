"""Anthropic's Messages API through the official SDK, streamed.

The SDK's own retries are off (`max_retries=0`): the loop's retry policy decides, with a capped wait
and a visible status. Every failure is classified here, including the two the SDK does not wrap: a
stream dropped mid-way escapes as a raw transport error, and an in-stream `error` event arrives as a
plain status error with HTTP status 200.

Prompt caching: a breakpoint goes on the last system block (stable across a session) and on the last
two messages, so each step reads the previous step's prefix from the cache.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ..errors import ProviderError
from .classify import MessageCache, classify
from .events import (
    ProviderEvent,
    ReasoningDelta,
    ReasoningEnd,
    StepFinish,
    TextDelta,
    ToolCallStart,
    Usage,
    parse_tool_input,
)
from .request import (
    ImageBlock,
    LLMMessage,
    LLMRequest,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)

STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool-calls", "max_tokens": "length",
                "refusal": "content-filter", "pause_turn": "stop"}
CACHE = {"type": "ephemeral"}


class AnthropicProvider:
    def __init__(self, *, api_key: str | None, base_url: str | None = None, timeout_s: float = 600) -> None:
        import anthropic

        self._client = anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s)
        self._converted = MessageCache(convert_message)

    def __repr__(self) -> str:
        return "AnthropicProvider()"  # never show the client: it holds the key

    async def stream(self, request: LLMRequest) -> AsyncIterator[ProviderEvent]:
        try:
            events = await self._client.messages.create(**build_body(request, self._converted), stream=True)
            async for event in _translate(events):
                yield event
        except ProviderError:
            raise
        except Exception as exc:
            raise classify(exc, "Anthropic") from None


def build_body(request: LLMRequest, convert: Any = None) -> dict[str, Any]:
    """The Messages API body for a neutral request (a pure function, tested without a server)."""
    convert = convert or convert_message
    system = [{"type": "text", "text": s} for s in request.system if s]
    if system:
        system[-1]["cache_control"] = CACHE
    messages = _merge_roles([m for m in (convert(m) for m in request.messages) if m["content"]])
    for message in messages[-2:]:
        last = message["content"][-1]
        if last.get("type") not in ("thinking", "redacted_thinking"):
            message["content"][-1] = {**last, "cache_control": CACHE}  # a copy: converted blocks are cached
    body: dict[str, Any] = {
        "model": request.model.id,
        "max_tokens": request.max_tokens or request.model.output,
        "messages": messages,
    }
    if system:
        body["system"] = system
    if request.tools:
        body["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                         for t in request.tools]
        body["tool_choice"] = {"type": "none"} if request.tool_choice == "none" else {"type": "auto"}
    thinking = request.options.get("thinking")
    if thinking:
        budget = int(thinking.get("budget_tokens", 4000)) if isinstance(thinking, dict) else 4000
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        body["max_tokens"] = max(body["max_tokens"], budget + 1024)
    else:
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.top_p is not None:
            body["top_p"] = request.top_p
    return body


def convert_message(message: LLMMessage) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            content.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            content.append(_image(block))
        elif isinstance(block, ReasoningBlock):
            if block.metadata.get("redacted"):
                content.append({"type": "redacted_thinking", "data": block.metadata["redacted"]})
            elif block.metadata.get("signature"):
                content.append({"type": "thinking", "thinking": block.text, "signature": block.metadata["signature"]})
            # reasoning without a signature (another provider's) cannot be sent back: drop it
        elif isinstance(block, ToolCallBlock):
            content.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
        elif isinstance(block, ToolResultBlock):
            inner: list[dict[str, Any]] = [{"type": "text", "text": block.output or "(no output)"}]
            inner += [_image(i) for i in block.images]
            content.append({"type": "tool_result", "tool_use_id": block.call_id, "content": inner,
                            "is_error": block.is_error})
    role = "assistant" if message.role == "assistant" else "user"
    return {"role": role, "content": content}


def _image(block: ImageBlock) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": block.mime, "data": block.data}}


def _merge_roles(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool results travel as user content: join them with a following user turn into one message."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if out and out[-1]["role"] == message["role"]:
            out[-1] = {"role": message["role"], "content": [*out[-1]["content"], *message["content"]]}
        else:
            out.append({"role": message["role"], "content": list(message["content"])})
    return out


async def _translate(events: Any) -> AsyncIterator[ProviderEvent]:
    usage = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    blocks: dict[int, dict[str, Any]] = {}
    reason = "stop"
    async for event in events:
        kind = event.type
        if kind == "message_start":
            _usage(usage, event.message.usage)
        elif kind == "content_block_start":
            block = event.content_block
            state: dict[str, Any] = {"type": block.type, "json": [], "signature": ""}
            blocks[event.index] = state
            if block.type == "tool_use":
                state.update(id=block.id, name=block.name)
                yield ToolCallStart(id=block.id, name=block.name)
            elif block.type == "redacted_thinking":
                yield ReasoningEnd(metadata={"redacted": block.data})
        elif kind == "content_block_delta":
            delta = event.delta
            state = blocks.setdefault(event.index, {"type": "text", "json": [], "signature": ""})
            if delta.type == "text_delta":
                yield TextDelta(text=delta.text)
            elif delta.type == "thinking_delta":
                yield ReasoningDelta(text=delta.thinking)
            elif delta.type == "signature_delta":
                state["signature"] += delta.signature
            elif delta.type == "input_json_delta":
                state["json"].append(delta.partial_json)
        elif kind == "content_block_stop":
            state = blocks.pop(event.index, {})
            if state.get("type") == "thinking":
                yield ReasoningEnd(metadata={"signature": state["signature"]} if state["signature"] else {})
            elif state.get("type") == "tool_use":
                yield parse_tool_input(state["name"], state["id"], "".join(state["json"]))
        elif kind == "message_delta":
            if event.delta.stop_reason:
                reason = STOP_REASONS.get(event.delta.stop_reason, "stop")
            _usage(usage, event.usage)
        elif kind == "message_stop":
            yield StepFinish(reason=reason, usage=Usage(**usage))  # type: ignore[arg-type]
            return
    raise ProviderError("The Anthropic stream ended before message_stop.", retryable=True, kind="connection")


def _usage(into: dict[str, int], usage: Any) -> None:
    if usage is None:
        return
    for field, key in (("input_tokens", "input"), ("output_tokens", "output"),
                       ("cache_read_input_tokens", "cache_read"), ("cache_creation_input_tokens", "cache_write")):
        value = getattr(usage, field, None)
        if value is not None:
            into[key] = value
