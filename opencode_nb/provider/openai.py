"""OpenAI Chat Completions through the official SDK, streamed; also any OpenAI-compatible server.

Tool-call arguments arrive in fragments keyed by `index`, several calls interleaved; each call is
complete when the choice finishes. Usage comes in a final chunk with no choices
(`stream_options.include_usage`); cached prompt tokens are part of `prompt_tokens` there, so they are
subtracted to keep `input` meaning uncached input, as for Anthropic. Servers such as vLLM and DeepSeek
stream reasoning as `reasoning_content`; it is kept as reasoning.
"""

from __future__ import annotations

import json
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
from .request import ImageBlock, LLMMessage, LLMRequest, ReasoningBlock, TextBlock, ToolCallBlock, ToolResultBlock

FINISH = {"stop": "stop", "tool_calls": "tool-calls", "function_call": "tool-calls", "length": "length",
          "content_filter": "content-filter"}
REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")
"""Models that take `max_completion_tokens` and `reasoning_effort`, and no temperature."""


class OpenAIProvider:
    def __init__(self, *, api_key: str, base_url: str | None = None, timeout_s: float = 600) -> None:
        import openai

        self._client = openai.AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s)
        self._converted = MessageCache(convert_message)

    def __repr__(self) -> str:
        return "OpenAIProvider()"  # never show the client: it holds the key

    async def stream(self, request: LLMRequest) -> AsyncIterator[ProviderEvent]:
        try:
            chunks = await self._client.chat.completions.create(**build_body(request, self._converted))
            async for event in _translate(chunks):
                yield event
        except ProviderError:
            raise
        except Exception as exc:
            raise classify(exc, "OpenAI") from None


def build_body(request: LLMRequest, convert: Any = None) -> dict[str, Any]:
    convert = convert or convert_message
    messages: list[dict[str, Any]] = [{"role": "system", "content": "\n\n".join(s for s in request.system if s)}]
    if not messages[0]["content"]:
        messages = []
    for message in request.messages:
        messages.extend(convert(message))
    reasoning_model = request.model.id.startswith(REASONING_PREFIXES) or request.model.reasoning
    body: dict[str, Any] = {"model": request.model.id, "messages": messages, "stream": True,
                            "stream_options": {"include_usage": True}}
    if request.tools:
        body["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                           "parameters": t.parameters}} for t in request.tools]
        body["tool_choice"] = request.tool_choice
    limit = request.max_tokens or request.model.output
    if reasoning_model:
        body["max_completion_tokens"] = limit
        if "reasoning_effort" in request.options:
            body["reasoning_effort"] = request.options["reasoning_effort"]
    else:
        body["max_tokens"] = limit
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.top_p is not None:
            body["top_p"] = request.top_p
    for key in ("seed", "service_tier", "verbosity", "parallel_tool_calls"):
        if key in request.options:
            body[key] = request.options[key]
    return body


def convert_message(message: LLMMessage) -> list[dict[str, Any]]:
    if message.role == "tool":
        out = []
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                text = block.output or "(no output)"
                out.append({"role": "tool", "tool_call_id": block.call_id,
                            "content": f"Error: {text}" if block.is_error else text})
                if block.images:  # tool messages carry text only: show images in a user turn after them
                    out.append({"role": "user", "content": [
                        {"type": "text", "text": f"Images returned by {block.name}:"},
                        *(_image(i) for i in block.images)]})
        return out
    if message.role == "assistant":
        text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
        calls = [{"id": b.id, "type": "function", "function": {"name": b.name, "arguments": json.dumps(b.input)}}
                 for b in message.content if isinstance(b, ToolCallBlock)]
        entry: dict[str, Any] = {"role": "assistant", "content": text}  # "" rather than null: llama.cpp wants it
        if calls:
            entry["tool_calls"] = calls
        return [entry]
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append(_image(block))
        elif isinstance(block, ReasoningBlock):
            continue
    if all(p["type"] == "text" for p in parts):
        return [{"role": "user", "content": "\n\n".join(p["text"] for p in parts)}]
    return [{"role": "user", "content": parts}]


def _image(block: ImageBlock) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{block.mime};base64,{block.data}"}}


async def _translate(chunks: Any) -> AsyncIterator[ProviderEvent]:
    calls: dict[int, dict[str, Any]] = {}
    reason: str | None = None
    usage = Usage()
    reasoning_open = False
    async for chunk in chunks:
        if getattr(chunk, "usage", None):
            usage = _usage(chunk.usage)
        for choice in chunk.choices or []:
            delta = choice.delta
            thought = getattr(delta, "reasoning_content", None) or (delta.model_extra or {}).get("reasoning_content")
            if thought:
                reasoning_open = True
                yield ReasoningDelta(text=thought)
            if delta.content:
                if reasoning_open:
                    reasoning_open = False
                    yield ReasoningEnd()
                yield TextDelta(text=delta.content)
            for call in delta.tool_calls or []:
                state = calls.get(call.index)
                if state is None:
                    state = calls[call.index] = {"id": call.id or f"call_{call.index}", "name": "", "args": []}
                if call.function is not None:
                    if call.function.name:
                        state["name"] += call.function.name
                    if call.function.arguments:
                        state["args"].append(call.function.arguments)
                if not state.get("started") and state["name"]:
                    state["started"] = True
                    yield ToolCallStart(id=state["id"], name=state["name"])
            if choice.finish_reason:
                reason = FINISH.get(choice.finish_reason, "stop")
    if reasoning_open:
        yield ReasoningEnd()
    if reason is None:
        raise ProviderError("The OpenAI stream ended without a finish reason.", retryable=True, kind="connection")
    for index in sorted(calls):
        state = calls[index]
        yield parse_tool_input(state["name"], state["id"], "".join(state["args"]))
    if calls and reason == "stop":
        reason = "tool-calls"
    yield StepFinish(reason=reason, usage=usage)  # type: ignore[arg-type]


def _usage(raw: Any) -> Usage:
    prompt = raw.prompt_tokens or 0
    details = getattr(raw, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", 0) or 0) if details else 0
    completion = getattr(raw, "completion_tokens_details", None)
    reasoning = (getattr(completion, "reasoning_tokens", 0) or 0) if completion else 0
    return Usage(input=prompt - cached, output=(raw.completion_tokens or 0) - reasoning, reasoning=reasoning,
                 cache_read=cached)
