"""Anthropic's Messages API through the official SDK, streamed.

The raw event stream (`messages.create(stream=True)`) is read rather than the SDK's accumulating helper:
we see every event as it comes, and malformed tool JSON stays ours to report (the helper raises on it,
or silently accepts truncated JSON).

The SDK's own retries are off (`max_retries=0`): the loop's retry policy decides, with a capped wait
and a visible status. Every failure is classified here, including the two the SDK does not wrap: a
stream dropped mid-way escapes as a raw transport error, and an in-stream `error` event arrives as a
plain status error with HTTP status 200.
A model that goes silent is given up after `idle_timeout_s` (idle.py).

The call is fitted to the installed SDK (sdk_fit.py): anthropic 2.x takes no `temperature`, `top_p` or `top_k`,
so an agent's sampling settings are left out with a warning there, and sent with the versions that take them.

Prompt caching: a breakpoint goes on the last system block (tools and system prompt are stable across a
session) and on the last two messages, so each step reads the previous step's prefix from the cache.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

from ..errors import ProviderError
from . import idle
from .classify import MessageCache, classify
from .events import (
    FinishReason,
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
    FileBlock,
    ImageBlock,
    LLMMessage,
    LLMRequest,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from .sdk_fit import accepted_parameters, fit_to_sdk, sdk_label

STOP_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop", "stop_sequence": "stop", "pause_turn": "stop", "tool_use": "tool-calls",
    "max_tokens": "length", "model_context_window_exceeded": "length", "refusal": "content-filter",
}
CACHE = {"type": "ephemeral"}
THINKING_BUDGET = 4000
"""Thinking tokens when `options.thinking` is just `true`."""
PASSTHROUGH = ("top_k", "stop_sequences", "metadata", "service_tier", "output_config")
"""Request options sent to the API as they are."""
IMAGE_TYPES = {"image/jpeg", "image/png", "image/gif", "image/webp"}


class AnthropicProvider:
    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str | None = None,
        timeout_s: float = 600,
        provider_id: str = "anthropic",
        key_hint: str | None = None,
        idle_timeout_s: float = idle.DEFAULT_IDLE_TIMEOUT_S,
    ) -> None:
        import anthropic

        self.provider_id = provider_id
        self.idle_timeout_s = idle_timeout_s
        """Longest silence from the model before the response is given up (see idle.py)."""
        self._client = anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s)
        self._accepted = accepted_parameters(self._client.messages.create)
        """What the installed SDK's `messages.create` takes: the rest of a body is left out (sdk_fit.py)."""
        self._sdk = sdk_label(anthropic)
        self._secrets = (api_key,) if api_key else ()
        self._key_hint = key_hint or f"ANTHROPIC_API_KEY or provider.{provider_id}.api_key in opencode.yaml"
        self._converted = MessageCache(convert_message)

    def __repr__(self) -> str:
        return f"AnthropicProvider({self.provider_id!r})"  # never the client: it holds the key

    async def stream(self, request: LLMRequest) -> AsyncIterator[ProviderEvent]:
        idle_s = self.idle_timeout_s

        def silent() -> ProviderError:
            return idle.silence("Anthropic", self.provider_id, idle_s)

        try:
            body = fit_to_sdk({**build_body(request, self._converted), "stream": True}, self._accepted, self._sdk)
            events = await idle.first(self._client.messages.create(**body), idle_s, silent)
            async with events:  # closes the connection at once if the consumer stops early
                async for event in idle.bounded(_translate(events), idle_s, silent):
                    yield event
        except ProviderError:
            raise
        except Exception as exc:
            raise classify(exc, "Anthropic", key_hint=self._key_hint, secrets=self._secrets) from None


def build_body(request: LLMRequest, convert: Any = None) -> dict[str, Any]:
    """The Messages API body for a neutral request; `convert` may be a cache in front of `convert_message`."""
    convert = convert or convert_message
    system: list[dict[str, Any]] = [{"type": "text", "text": s} for s in request.system if s]
    if system:
        system[-1]["cache_control"] = CACHE
    messages = _merge_roles([m for m in (convert(m) for m in request.messages) if m["content"]])
    for message in messages[-2:]:
        _mark_cache(message)
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
        body["tool_choice"] = {"type": request.tool_choice}
    thinking = _thinking(request.options.get("thinking"))
    if thinking is not None:
        body["thinking"] = thinking
        budget = thinking.get("budget_tokens")
        if isinstance(budget, int) and body["max_tokens"] <= budget:
            body["max_tokens"] = budget + 1024  # the answer needs room beyond the thinking budget
    else:  # the API refuses sampling settings while thinking
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.top_p is not None:
            body["top_p"] = request.top_p
    for key in PASSTHROUGH:
        if key in request.options:
            body[key] = request.options[key]
    if isinstance(request.options.get("extra_body"), dict):
        body["extra_body"] = request.options["extra_body"]  # fields the installed SDK has no parameter for
    return body


def convert_message(message: LLMMessage) -> dict[str, Any]:
    """One neutral message in Messages API form (a pure function: callers cache it per message)."""
    content: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            if block.text:  # the API rejects empty text blocks
                content.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock | FileBlock):
            content.append(_media(block))
        elif isinstance(block, ReasoningBlock):
            if block.metadata.get("redacted"):
                content.append({"type": "redacted_thinking", "data": block.metadata["redacted"]})
            elif block.metadata.get("signature"):
                content.append({"type": "thinking", "thinking": block.text, "signature": block.metadata["signature"]})
            # reasoning without a signature (another provider's) cannot be sent back: it is dropped
        elif isinstance(block, ToolCallBlock):
            content.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
        elif isinstance(block, ToolResultBlock):
            inner: list[dict[str, Any]] = [{"type": "text", "text": block.output or "(no output)"}]
            inner += [_media(i) for i in block.images]
            result: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.call_id, "content": inner}
            if block.is_error:
                result["is_error"] = True
            content.append(result)
    return {"role": "assistant" if message.role == "assistant" else "user", "content": content}


def _media(block: ImageBlock | FileBlock) -> dict[str, Any]:
    source = {"type": "base64", "media_type": block.mime, "data": block.data}
    if isinstance(block, ImageBlock) or block.mime in IMAGE_TYPES:
        return {"type": "image", "source": source}
    if block.mime == "application/pdf":
        return {"type": "document", "source": source, **({"title": block.filename} if block.filename else {})}
    if block.mime.startswith("text/") or block.mime in ("application/json", "application/x-yaml"):
        text = base64.b64decode(block.data).decode("utf-8", errors="replace")
        return {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text},
                **({"title": block.filename} if block.filename else {})}
    return {"type": "text", "text": f"[Attached {block.mime}: {block.filename or 'file'} (not readable here)]"}


def _thinking(option: Any) -> dict[str, Any] | None:
    """`thinking: true`, `{budget_tokens: N}`, a bare N, or a full API object (`{type: adaptive}`)."""
    if option is None or option is False:
        return None
    if option is True:
        return {"type": "enabled", "budget_tokens": THINKING_BUDGET}
    if isinstance(option, int):
        return {"type": "enabled", "budget_tokens": option}
    if isinstance(option, dict):
        kind = option.get("type", "enabled")
        if kind == "disabled":
            return None
        if kind == "enabled":
            return {**option, "type": "enabled", "budget_tokens": int(option.get("budget_tokens", THINKING_BUDGET))}
        return dict(option)
    return None


def _mark_cache(message: dict[str, Any]) -> None:
    """Put a breakpoint on the message's last block that can carry one (thinking blocks cannot)."""
    content = message["content"]
    for i in range(len(content) - 1, -1, -1):
        if content[i].get("type") not in ("thinking", "redacted_thinking"):
            content[i] = {**content[i], "cache_control": CACHE}  # a copy: the converted block is cached
            return


def _merge_roles(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Roles must alternate and tool results travel as user content: join neighbours of the same role.

    Every message is copied (shallowly), so marking cache breakpoints never touches cached conversions.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        if out and out[-1]["role"] == message["role"]:
            out[-1]["content"].extend(message["content"])
        else:
            out.append({"role": message["role"], "content": list(message["content"])})
    return out


async def _translate(events: Any) -> AsyncIterator[ProviderEvent]:
    usage = {"input": 0, "output": 0, "reasoning": 0, "cache_read": 0, "cache_write": 0}
    blocks: dict[int, dict[str, Any]] = {}
    reason: FinishReason = "stop"
    async for event in events:
        kind = event.type
        if kind == "content_block_delta":
            delta = event.delta
            state = blocks.setdefault(event.index, {"type": "text"})
            if delta.type == "text_delta":
                yield TextDelta(text=delta.text)
            elif delta.type == "thinking_delta":
                yield ReasoningDelta(text=delta.thinking)
            elif delta.type == "signature_delta":
                state["signature"] = state.get("signature", "") + delta.signature
            elif delta.type == "input_json_delta":
                state.setdefault("json", []).append(delta.partial_json)
        elif kind == "content_block_start":
            block = event.content_block
            blocks[event.index] = {"type": block.type}
            if block.type == "tool_use":
                blocks[event.index].update(id=block.id, name=block.name)
                yield ToolCallStart(id=block.id, name=block.name)
            elif block.type == "redacted_thinking":
                yield ReasoningEnd(metadata={"redacted": block.data})
        elif kind == "content_block_stop":
            state = blocks.pop(event.index, {})
            if state.get("type") == "thinking":
                yield ReasoningEnd(metadata={"signature": state["signature"]} if state.get("signature") else {})
            elif state.get("type") == "tool_use":
                yield parse_tool_input(state["name"], state["id"], "".join(state.get("json", [])))
        elif kind == "message_start":
            _usage(usage, event.message.usage)
        elif kind == "message_delta":
            if event.delta.stop_reason:
                reason = STOP_REASONS.get(event.delta.stop_reason, "stop")
            _usage(usage, event.usage)
        elif kind == "message_stop":
            yield StepFinish(reason=reason, usage=_final_usage(usage))
            return
    raise ProviderError("Anthropic stream ended before message_stop (connection cut?)", retryable=True,
                        kind="connection")


def _usage(into: dict[str, int], usage: Any) -> None:
    """Fold in a usage report; message_delta's figures are cumulative, so later ones replace earlier."""
    if usage is None:
        return
    for field, key in (("input_tokens", "input"), ("output_tokens", "output"),
                       ("cache_read_input_tokens", "cache_read"), ("cache_creation_input_tokens", "cache_write")):
        value = getattr(usage, field, None)
        if value is not None:
            into[key] = value
    details = getattr(usage, "output_tokens_details", None)
    thinking = getattr(details, "thinking_tokens", None) if details is not None else None
    if thinking is not None:
        into["reasoning"] = thinking


def _final_usage(figures: dict[str, int]) -> Usage:
    """`output_tokens` includes thinking: count reasoning apart, as OpenAI does, so cost never counts it twice."""
    reasoning = min(figures["reasoning"], figures["output"])
    return Usage(input=figures["input"], output=figures["output"] - reasoning, reasoning=reasoning,
                 cache_read=figures["cache_read"], cache_write=figures["cache_write"])
