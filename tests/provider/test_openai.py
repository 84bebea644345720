import json

import pytest

from opencode_nb.errors import ProviderError
from opencode_nb.provider import (
    LLMMessage,
    LLMRequest,
    ReasoningDelta,
    StepFinish,
    TextBlock,
    TextDelta,
    ToolCall,
    ToolCallBlock,
    ToolResultBlock,
    ToolSpec,
    model_info,
)
from opencode_nb.provider.openai import OpenAIProvider

from .wire import openai_failure, openai_stream

KEY = "sk-openai-test-secret-456"


def provider(wire, key=KEY):
    return OpenAIProvider(api_key=key, base_url=f"{wire.url}/v1")


def request(model="gpt-5", **kw):
    defaults = {"model": model_info("openai", model), "system": ["base", "env"],
                "messages": [LLMMessage(role="user", content=[TextBlock(text="hi")])]}
    return LLMRequest(**{**defaults, **kw})


async def collect(p, req):
    return [e async for e in p.stream(req)]


async def test_text_streams_and_usage_arrives_in_the_final_chunk(wire):
    wire.queue(openai_stream("Hello from the notebook.", usage={
        "prompt_tokens": 1000, "completion_tokens": 80, "prompt_tokens_details": {"cached_tokens": 600},
        "completion_tokens_details": {"reasoning_tokens": 50}}))
    events = await collect(provider(wire), request())
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello from the notebook."
    finish = events[-1]
    assert isinstance(finish, StepFinish) and finish.reason == "stop"
    assert (finish.usage.input, finish.usage.cache_read, finish.usage.output, finish.usage.reasoning) == (
        400, 600, 30, 50)
    body = wire.received[0].body
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"][0] == {"role": "system", "content": "base\n\nenv"}


async def test_parallel_tool_calls_are_assembled_from_interleaved_fragments(wire):
    wire.queue(openai_stream(calls=[
        {"id": "call_a", "name": "read", "args": json.dumps({"path": "stats.py"})},
        {"id": "call_b", "name": "grep", "args": json.dumps({"pattern": "def (mean|median)", "path": "."})}]))
    events = await collect(provider(wire), request(tools=[ToolSpec(name="read", description="r", parameters={})]))
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.id, c.name, c.input) for c in calls] == [
        ("call_a", "read", {"path": "stats.py"}), ("call_b", "grep", {"pattern": "def (mean|median)", "path": "."})]
    assert events[-1].reason == "tool-calls"
    assert wire.received[0].body["tools"][0]["function"]["name"] == "read"


async def test_malformed_arguments_become_a_call_with_an_error(wire):
    wire.queue(openai_stream(calls=[{"id": "call_a", "name": "read", "args": '{"path": '}]))
    [call] = [e for e in await collect(provider(wire), request()) if isinstance(e, ToolCall)]
    assert call.input is None and call.raw == '{"path": ' and "position" in call.error


async def test_reasoning_models_get_completion_limits_and_effort_passed_through(wire):
    wire.queue(openai_stream("ok"))
    await collect(provider(wire), request(options={"reasoning_effort": "high"}, temperature=0.3))
    body = wire.received[0].body
    assert body["reasoning_effort"] == "high" and "max_completion_tokens" in body
    assert "temperature" not in body and "max_tokens" not in body
    wire.queue(openai_stream("ok"))
    await collect(provider(wire), request(model="gpt-4o", temperature=0.3))
    body = wire.received[1].body
    assert body["temperature"] == 0.3 and "max_tokens" in body


async def test_reasoning_content_from_compatible_servers_is_reasoning(wire):
    wire.queue(openai_stream("Answer.", reasoning="thinking it over"))
    events = await collect(provider(wire), request())
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "thinking it over"


async def test_history_with_tool_calls_and_results_goes_out_in_chat_form(wire):
    wire.queue(openai_stream("ok"))
    history = [LLMMessage(role="user", content=[TextBlock(text="go")]),
               LLMMessage(role="assistant", content=[ToolCallBlock(id="c1", name="read", input={"path": "a"})]),
               LLMMessage(role="tool", content=[ToolResultBlock(call_id="c1", name="read", output="boom",
                                                                is_error=True)])]
    await collect(provider(wire), request(messages=history))
    sent = wire.received[0].body["messages"][1:]
    assert sent[1] == {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"path": "a"}'}}]}
    assert sent[2] == {"role": "tool", "tool_call_id": "c1", "content": "Error: boom"}


@pytest.mark.parametrize(("failure", "kind", "retryable"), [
    (openai_failure(429, "rate_limit_exceeded", headers={"retry-after-ms": "1500"}), "rate_limit", True),
    (openai_failure(529, "overloaded"), "overloaded", True),
    (openai_failure(500, "server_error"), "server", True),
    (openai_failure(401, "invalid_api_key", "Incorrect API key"), "auth", False),
    (openai_failure(400, "context_length_exceeded", "This model's maximum context length is 128000"),
     "context_overflow", False),
])
async def test_http_errors_are_classified(wire, failure, kind, retryable):
    wire.queue(failure)
    with pytest.raises(ProviderError) as err:
        await collect(provider(wire), request())
    assert (err.value.kind, err.value.retryable) == (kind, retryable)
    if kind == "rate_limit":
        assert err.value.retry_after_s == 1.5
    assert KEY not in str(err.value)
    assert len(wire.received) == 1  # the SDK's own retries are off


async def test_a_dropped_stream_is_a_retryable_connection_error(wire):
    wire.queue(openai_stream("a long answer that gets cut", drop_after=3))
    with pytest.raises(ProviderError) as err:
        await collect(provider(wire), request())
    assert err.value.retryable and err.value.kind == "connection"


async def test_an_openai_compatible_server_needs_no_real_key(wire):
    wire.queue(openai_stream("local model says hi"))
    events = await collect(provider(wire, key="not-needed"), request(model="qwen3:8b"))
    assert events[-1].reason == "stop"
    body = wire.received[0].body
    assert body["model"] == "qwen3:8b" and "max_tokens" in body
