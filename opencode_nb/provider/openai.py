"""OpenAI Chat Completions through the official SDK, streamed; also any OpenAI-compatible server.

Tool-call arguments arrive in fragments keyed by `index`, several calls interleaved; each call is
complete when the choice finishes. Usage comes in a final chunk with no choices
(`stream_options.include_usage`); cached prompt tokens are part of `prompt_tokens` there, so they are
subtracted to keep `input` meaning uncached input, as for Anthropic, and reasoning tokens are taken out
of `completion_tokens` the same way. Servers such as vLLM and DeepSeek stream reasoning as
`reasoning_content` (Ollama and OpenRouter as `reasoning`); it is kept as reasoning.
A model that goes silent is given up after `idle_timeout_s` (idle.py). The call is fitted to the installed
SDK (sdk_fit.py): a parameter the installed version has no argument for is left out with a warning.
"""

from __future__ import annotations

import base64
import json
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

FINISH: dict[str, FinishReason] = {"stop": "stop", "tool_calls": "tool-calls", "function_call": "tool-calls",
                                   "length": "length", "content_filter": "content-filter"}
REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")
"""Models that take `max_completion_tokens` instead of `max_tokens`, and no sampling settings."""
PASSTHROUGH = ("reasoning_effort", "seed", "service_tier", "verbosity", "parallel_tool_calls", "stop", "user",
               "frequency_penalty", "presence_penalty", "logit_bias", "prompt_cache_key")
"""Request options sent to the API as they are."""
NO_KEY = "not-needed"
"""What a local server without authentication gets as its key (the SDK insists on one)."""


class OpenAIProvider:
    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str | None = None,
        timeout_s: float = 600,
        provider_id: str = "openai",
        key_hint: str | None = None,
        idle_timeout_s: float = idle.DEFAULT_IDLE_TIMEOUT_S,
    ) -> None:
        import openai

        self.provider_id = provider_id
        self.idle_timeout_s = idle_timeout_s
        """Longest silence from the model before the response is given up (see idle.py)."""
        self._client = openai.AsyncOpenAI(api_key=api_key or NO_KEY, base_url=base_url, max_retries=0,
                                          timeout=timeout_s)
        self._accepted = accepted_parameters(self._client.chat.completions.create)
        """What the installed SDK's `chat.completions.create` takes: the rest of a body is left out (sdk_fit.py)."""
        self._sdk = sdk_label(openai)
        self._secrets = (api_key,) if api_key else ()
        self._name = "OpenAI" if provider_id == "openai" else f"{provider_id} (OpenAI-compatible)"
        config_key = f"provider.{provider_id}.api_key in opencode.yaml"
        self._key_hint = key_hint or (f"OPENAI_API_KEY or {config_key}" if provider_id == "openai" else config_key)
        self._converted = MessageCache(convert_message)

    def __repr__(self) -> str:
        return f"OpenAIProvider({self.provider_id!r})"  # never the client: it holds the key

    async def stream(self, request: LLMRequest) -> AsyncIterator[ProviderEvent]:
        idle_s = self.idle_timeout_s

        def silent() -> ProviderError:
            return idle.silence(self._name, self.provider_id, idle_s)

        try:
            body = fit_to_sdk(build_body(request, self._converted), self._accepted, self._sdk)
            chunks = await idle.first(self._client.chat.completions.create(**body), idle_s, silent)
            async with chunks:  # closes the connection at once if the consumer stops early
                async for event in idle.bounded(_translate(chunks), idle_s, silent):
                    yield event
        except ProviderError:
            raise
        except Exception as exc:
            raise classify(exc, self._name, key_hint=self._key_hint, secrets=self._secrets) from None


def build_body(request: LLMRequest, convert: Any = None) -> dict[str, Any]:
    """Keyword arguments for `chat.completions.create`; `convert` may be a cache in front of `convert_message`."""
    convert = convert or convert_message
    system = "\n\n".join(s for s in request.system if s)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in request.messages:
        messages.extend(convert(message))
    body: dict[str, Any] = {"model": request.model.id, "messages": messages, "stream": True,
                            "stream_options": {"include_usage": True}}
    if request.tools:
        body["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                           "parameters": t.parameters}} for t in request.tools]
        body["tool_choice"] = request.tool_choice
    limit = request.max_tokens or request.model.output
    if request.model.id.startswith(REASONING_PREFIXES) or request.model.reasoning:
        body["max_completion_tokens"] = limit
    else:
        body["max_tokens"] = limit
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.top_p is not None:
            body["top_p"] = request.top_p
    for key in PASSTHROUGH:
        if key in request.options:
            body[key] = request.options[key]
    if isinstance(request.options.get("extra_body"), dict):
        body["extra_body"] = request.options["extra_body"]  # server-specific fields, e.g. vLLM's top_k
    return body


def convert_message(message: LLMMessage) -> list[dict[str, Any]]:
    """One neutral message as Chat Completions messages (a pure function: callers cache it per message)."""
    if message.role == "tool":
        return _tool_results(message)
    if message.role == "assistant":
        text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
        calls = [{"id": b.id, "type": "function", "function": {"name": b.name, "arguments": json.dumps(b.input)}}
                 for b in message.content if isinstance(b, ToolCallBlock)]
        entry: dict[str, Any] = {"role": "assistant", "content": text}  # "" rather than null: llama.cpp wants it
        if calls:
            entry["tool_calls"] = calls
        return [entry] if text or calls else []
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            if block.text:
                parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock | FileBlock):
            parts.append(_media(block))
        elif isinstance(block, ReasoningBlock):
            continue
    if not parts:
        return []
    if all(p["type"] == "text" for p in parts):  # plain text is what every compatible server understands
        return [{"role": "user", "content": "\n\n".join(p["text"] for p in parts)}]
    return [{"role": "user", "content": parts}]


def _tool_results(message: LLMMessage) -> list[dict[str, Any]]:
    """Tool messages carry text only: images follow in one user message after all of them."""
    out: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []
    for block in message.content:
        if not isinstance(block, ToolResultBlock):
            continue
        text = block.output or "(no output)"
        out.append({"role": "tool", "tool_call_id": block.call_id, "content": f"Error: {text}" if block.is_error
                    else text})
        if block.images:
            images += [{"type": "text", "text": f"Images returned by {block.name} ({block.call_id}):"},
                       *(_media(i) for i in block.images)]
    if images:
        out.append({"role": "user", "content": images})
    return out


def _media(block: ImageBlock | FileBlock) -> dict[str, Any]:
    if isinstance(block, ImageBlock) or block.mime.startswith("image/"):
        return {"type": "image_url", "image_url": {"url": block.url}}
    if block.mime == "application/pdf":
        return {"type": "file", "file": {"filename": block.filename or "document.pdf", "file_data": block.url}}
    if block.mime.startswith("text/") or block.mime in ("application/json", "application/x-yaml"):
        text = base64.b64decode(block.data).decode("utf-8", errors="replace")
        return {"type": "text", "text": f"Contents of {block.filename or 'the attached file'}:\n{text}"}
    return {"type": "text", "text": f"[Attached {block.mime}: {block.filename or 'file'} (not readable here)]"}


async def _translate(chunks: Any) -> AsyncIterator[ProviderEvent]:
    calls: dict[int, dict[str, Any]] = {}
    reason: FinishReason | None = None
    usage = Usage()
    reasoning_open = refused = False
    async for chunk in chunks:
        if getattr(chunk, "usage", None):
            usage = _usage(chunk.usage)
        for choice in chunk.choices or []:
            delta = choice.delta
            extra = delta.model_extra or {}
            thought = extra.get("reasoning_content") or extra.get("reasoning")
            if isinstance(thought, str) and thought:
                reasoning_open = True
                yield ReasoningDelta(text=thought)
            text = delta.content or getattr(delta, "refusal", None)
            if text:
                refused = refused or bool(getattr(delta, "refusal", None))
                if reasoning_open:
                    reasoning_open = False
                    yield ReasoningEnd()
                yield TextDelta(text=text)
            for call in delta.tool_calls or []:
                for event in _call_fragment(calls, call):
                    yield event
            if choice.finish_reason:
                reason = FINISH.get(choice.finish_reason, "stop")
    if reasoning_open:
        yield ReasoningEnd()
    if reason is None:
        raise ProviderError("OpenAI stream ended without a finish reason (connection cut?)", retryable=True,
                            kind="connection")
    for index in sorted(calls):
        state = calls[index]
        yield parse_tool_input(state["name"], state["id"], "".join(state["args"]))
    if calls and reason == "stop":
        reason = "tool-calls"  # some compatible servers say stop after calling tools
    if refused:
        reason = "content-filter"
    yield StepFinish(reason=reason, usage=usage)


def _call_fragment(calls: dict[int, dict[str, Any]], call: Any) -> list[ProviderEvent]:
    """Fold one tool-call fragment in; a call is announced once its name is known."""
    index = call.index
    if index is None:  # some compatible servers omit it: a new id opens a call, anything else continues one
        index = len(calls) if call.id and all(s["id"] != call.id for s in calls.values()) else max(calls, default=0)
    state = calls.get(index)
    if state is None:
        state = calls[index] = {"id": call.id or f"call_{index}", "name": "", "args": [], "started": False}
    function = call.function
    if function is not None:
        if function.name:
            state["name"] += function.name
        if function.arguments:
            state["args"].append(function.arguments)
    if not state["started"] and state["name"]:
        state["started"] = True
        return [ToolCallStart(id=state["id"], name=state["name"])]
    return []


def _usage(raw: Any) -> Usage:
    prompt = raw.prompt_tokens or 0
    details = getattr(raw, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", 0) or 0) if details else 0
    completion = getattr(raw, "completion_tokens_details", None)
    reasoning = (getattr(completion, "reasoning_tokens", 0) or 0) if completion else 0
    total_out = raw.completion_tokens or 0
    return Usage(input=max(0, prompt - cached), output=max(0, total_out - reasoning),
                 reasoning=min(reasoning, total_out), cache_read=cached)
