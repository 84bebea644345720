import json

import pytest

from opencode_nb.errors import ProviderError
from opencode_nb.provider import (
    LLMMessage,
    LLMRequest,
    ReasoningBlock,
    ReasoningDelta,
    ReasoningEnd,
    StepFinish,
    TextBlock,
    TextDelta,
    ToolCall,
    ToolCallBlock,
    ToolCallStart,
    ToolResultBlock,
    ToolSpec,
    model_info,
)
from opencode_nb.provider.anthropic import AnthropicProvider

from .wire import anthropic_error_event, anthropic_failure, anthropic_stream

MODEL = model_info("anthropic", "claude-sonnet-4-6")
KEY = "sk-ant-test-secret-123"


def provider(wire):
    return AnthropicProvider(api_key=KEY, base_url=wire.url)


def request(**kw):
    defaults = {"model": MODEL, "system": ["base prompt", "env block"],
                "messages": [LLMMessage(role="user", content=[TextBlock(text="hi")])]}
    return LLMRequest(**{**defaults, **kw})


async def collect(provider, req):
    return [e async for e in provider.stream(req)]


async def test_text_streams_as_deltas_and_finishes_with_usage_and_cache_figures(wire):
    wire.queue(anthropic_stream({"text": "Hello there, notebook."}, usage={
        "input_tokens": 50, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 70}))
    events = await collect(provider(wire), request())
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there, notebook."
    assert len([e for e in events if isinstance(e, TextDelta)]) > 1
    finish = events[-1]
    assert isinstance(finish, StepFinish) and finish.reason == "stop"
    assert (finish.usage.input, finish.usage.output, finish.usage.cache_read, finish.usage.cache_write) == (
        50, 42, 900, 70)


async def test_parallel_tool_calls_arrive_whole_from_streamed_json(wire):
    wire.queue(anthropic_stream(
        {"text": "Reading both."},
        {"tool": "read", "id": "toolu_1", "json": json.dumps({"path": "a.py"})},
        {"tool": "grep", "id": "toolu_2", "json": json.dumps({"pattern": "def mean", "include": "*.py"})},
        stop="tool_use"))
    events = await collect(provider(wire), request(tools=[ToolSpec(name="read", description="r", parameters={})]))
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [s.name for s in starts] == ["read", "grep"]
    assert [(c.id, c.input) for c in calls] == [("toolu_1", {"path": "a.py"}),
                                                ("toolu_2", {"pattern": "def mean", "include": "*.py"})]
    assert events[-1].reason == "tool-calls"


async def test_malformed_tool_json_is_a_call_with_an_error_not_an_exception(wire):
    wire.queue(anthropic_stream({"tool": "read", "id": "toolu_1", "json": '{"path": "a.py",,}'}, stop="tool_use"))
    [call] = [e for e in await collect(provider(wire), request()) if isinstance(e, ToolCall)]
    assert call.input is None and call.raw == '{"path": "a.py",,}' and call.error


async def test_thinking_streams_as_reasoning_and_its_signature_goes_back(wire):
    wire.queue(anthropic_stream({"thinking": "Let me think about means.", "signature": "sig-abc"},
                                {"text": "Done."}))
    events = await collect(provider(wire), request(options={"thinking": {"budget_tokens": 2048}}))
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Let me think about means."
    [end] = [e for e in events if isinstance(e, ReasoningEnd)]
    assert end.metadata == {"signature": "sig-abc"}
    sent = wire.received[0].body
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2048} and "temperature" not in sent

    wire.queue(anthropic_stream({"text": "ok"}))
    history = [LLMMessage(role="user", content=[TextBlock(text="hi")]),
               LLMMessage(role="assistant", content=[ReasoningBlock(text="Let me think", metadata=end.metadata),
                                                     TextBlock(text="Done.")]),
               LLMMessage(role="user", content=[TextBlock(text="more")])]
    await collect(provider(wire), request(messages=history, options={"thinking": {"budget_tokens": 2048}}))
    assistant = wire.received[1].body["messages"][1]
    assert assistant["content"][0] == {"type": "thinking", "thinking": "Let me think", "signature": "sig-abc"}


async def test_cache_breakpoints_sit_on_the_system_prompt_and_the_last_two_messages(wire):
    wire.queue(anthropic_stream({"text": "ok"}))
    history = [
        LLMMessage(role="user", content=[TextBlock(text="one")]),
        LLMMessage(role="assistant", content=[ToolCallBlock(id="t1", name="read", input={"path": "a"})]),
        LLMMessage(role="tool", content=[ToolResultBlock(call_id="t1", name="read", output="1: x")]),
        LLMMessage(role="user", content=[TextBlock(text="two")]),
    ]
    await collect(provider(wire), request(messages=history))
    body = wire.received[0].body
    assert [b.get("cache_control") for b in body["system"]] == [None, {"type": "ephemeral"}]
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]  # tool result joined with the user turn
    marked = [i for i, m in enumerate(messages) if any("cache_control" in b for b in m["content"])]
    assert marked == [1, 2]
    assert messages[2]["content"][0]["type"] == "tool_result" and messages[2]["content"][0]["tool_use_id"] == "t1"


async def test_the_key_goes_in_the_request_headers_and_the_sdk_does_not_retry(wire):
    wire.queue(anthropic_failure(500, "api_error"))
    with pytest.raises(ProviderError):
        await collect(provider(wire), request())
    assert len(wire.received) == 1
    headers = wire.received[0].headers
    assert KEY in (headers.get("x-api-key", "") + headers.get("authorization", ""))


@pytest.mark.parametrize(("failure", "kind", "retryable", "status"), [
    (anthropic_failure(429, "rate_limit_error", headers={"retry-after": "7"}), "rate_limit", True, 429),
    (anthropic_failure(529, "overloaded_error", "Overloaded"), "overloaded", True, 529),
    (anthropic_failure(500, "api_error"), "server", True, 500),
    (anthropic_failure(401, "authentication_error", "invalid x-api-key"), "auth", False, 401),
    (anthropic_failure(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000"),
     "context_overflow", False, 400),
    (anthropic_failure(400, "invalid_request_error", "messages: field required"), "bad_request", False, 400),
])
async def test_every_http_error_is_classified(wire, failure, kind, retryable, status):
    wire.queue(failure)
    with pytest.raises(ProviderError) as err:
        await collect(provider(wire), request())
    assert (err.value.kind, err.value.retryable, err.value.status) == (kind, retryable, status)
    if status == 429:
        assert err.value.retry_after_s == 7
    assert KEY not in str(err.value)


async def test_a_connection_dropped_mid_stream_is_a_retryable_connection_error(wire):
    wire.queue(anthropic_stream({"text": "Hello there, this will be cut"}, drop_after=5))
    got = []
    with pytest.raises(ProviderError) as err:
        async for event in provider(wire).stream(request()):
            got.append(event)
    assert err.value.kind == "connection" and err.value.retryable
    assert any(isinstance(e, TextDelta) for e in got)


async def test_an_error_event_inside_the_stream_is_classified_as_overloaded(wire):
    wire.queue(anthropic_error_event())
    with pytest.raises(ProviderError) as err:
        await collect(provider(wire), request())
    assert err.value.kind == "overloaded" and err.value.retryable


async def test_nothing_listening_is_a_retryable_connection_error():
    dead = AnthropicProvider(api_key=KEY, base_url="http://127.0.0.1:9")
    with pytest.raises(ProviderError) as err:
        await collect(dead, request())
    assert err.value.kind == "connection" and err.value.retryable
    assert KEY not in repr(dead)
