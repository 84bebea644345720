"""The Anthropic provider through the real SDK, against the loopback wire server."""

import asyncio
import base64
import json
import logging

import pytest

from opencode_nb.errors import ProviderError
from opencode_nb.provider import (
    FileBlock,
    ImageBlock,
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
from opencode_nb.provider.anthropic import AnthropicProvider, build_body, convert_message

from .wire_anthropic import anthropic_error_event, anthropic_failure, anthropic_stream
from .wire_server import Drop, Stream

MODEL = model_info("anthropic", "claude-sonnet-4-6")
KEY = "sk-ant-test-secret-123"
EPHEMERAL = {"type": "ephemeral"}


def provider(wire):
    return AnthropicProvider(api_key=KEY, base_url=wire.url)


def user(text):
    return LLMMessage(role="user", content=[TextBlock(text=text)])


def request(**kw):
    return LLMRequest(**{"model": MODEL, "system": ["base prompt", "env block"], "messages": [user("hi")], **kw})


async def collect(p, req):
    return [e async for e in p.stream(req)]


async def failure(wire, req=None):
    with pytest.raises(ProviderError) as err:
        await collect(provider(wire), req or request())
    return err.value


# ---------------------------------------------------------------------------------------------- streaming


async def test_text_streams_as_deltas_and_finishes_with_usage_and_cache_figures(wire):
    wire.queue(anthropic_stream({"text": "Hello there, notebook."}, usage={
        "input_tokens": 50, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 70}))
    events = await collect(provider(wire), request())
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert "".join(deltas) == "Hello there, notebook." and len(deltas) > 1
    assert events[-1] == StepFinish(reason="stop", usage={"input": 50, "output": 42, "cache_read": 900,
                                                          "cache_write": 70})
    assert wire.last.path == "/v1/messages" and wire.last.body["stream"] is True


async def test_usage_in_message_delta_is_cumulative_and_wins_over_message_start(wire):
    wire.queue(anthropic_stream({"text": "ok"}, usage={"input_tokens": 10},
                                delta_usage={"output_tokens": 300, "input_tokens": 12, "cache_read_input_tokens": 5,
                                             "output_tokens_details": {"thinking_tokens": 200}}))
    finish = (await collect(provider(wire), request()))[-1]
    assert finish.usage.model_dump() == {"input": 12, "output": 100, "reasoning": 200, "cache_read": 5,
                                         "cache_write": 0}


@pytest.mark.parametrize(("stop", "reason"), [("end_turn", "stop"), ("stop_sequence", "stop"),
                                              ("tool_use", "tool-calls"), ("max_tokens", "length"),
                                              ("refusal", "content-filter")])
async def test_stop_reasons_map_to_finish_reasons(wire, stop, reason):
    wire.queue(anthropic_stream({"text": "x"}, stop=stop))
    assert (await collect(provider(wire), request()))[-1].reason == reason


async def test_parallel_tool_calls_are_announced_early_and_arrive_whole_from_streamed_json(wire):
    wire.queue(anthropic_stream(
        {"text": "Reading both."},
        {"tool": "read", "id": "toolu_1", "json": json.dumps({"path": "a.py"})},
        {"tool": "grep", "id": "toolu_2", "json": json.dumps({"pattern": "def mean", "include": "*.py"})},
        stop="tool_use"))
    events = await collect(provider(wire), request(tools=[ToolSpec(name="read", description="r", parameters={})]))
    kinds = [(type(e).__name__, getattr(e, "id", None)) for e in events if isinstance(e, ToolCallStart | ToolCall)]
    assert kinds == [("ToolCallStart", "toolu_1"), ("ToolCall", "toolu_1"),
                     ("ToolCallStart", "toolu_2"), ("ToolCall", "toolu_2")]
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.name, c.input, c.error) for c in calls] == [
        ("read", {"path": "a.py"}, None), ("grep", {"pattern": "def mean", "include": "*.py"}, None)]
    assert calls[1].raw == json.dumps({"pattern": "def mean", "include": "*.py"})
    assert events[-1].reason == "tool-calls"
    assert wire.last.body["tools"] == [{"name": "read", "description": "r", "input_schema": {}}]
    assert wire.last.body["tool_choice"] == {"type": "auto"}


@pytest.mark.parametrize("raw", ['{"path": "a.py",,}', '{"path": "a.py', '["a.py"]'])
async def test_malformed_or_truncated_tool_json_is_a_call_with_an_error_not_an_exception(wire, raw):
    wire.queue(anthropic_stream({"tool": "read", "id": "toolu_1", "json": raw}, stop="tool_use"))
    [call] = [e for e in await collect(provider(wire), request()) if isinstance(e, ToolCall)]
    assert call.input is None and call.raw == raw and call.error


async def test_a_tool_call_with_no_input_gets_an_empty_object(wire):
    wire.queue(anthropic_stream({"tool": "todoread", "id": "toolu_1", "json": ""}, stop="tool_use"))
    [call] = [e for e in await collect(provider(wire), request()) if isinstance(e, ToolCall)]
    assert call.input == {} and call.error is None


# ---------------------------------------------------------------------------------------------- thinking


async def test_thinking_streams_as_reasoning_and_its_signature_goes_back(wire):
    wire.queue(anthropic_stream({"thinking": "Let me think about means.", "signature": "sig-abc"},
                                {"text": "Done."}))
    events = await collect(provider(wire), request(options={"thinking": {"budget_tokens": 2048}}, temperature=0.2,
                                                   max_tokens=1000))
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Let me think about means."
    [end] = [e for e in events if isinstance(e, ReasoningEnd)]
    assert end.metadata == {"signature": "sig-abc"}
    assert events.index(end) < next(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    sent = wire.last.body
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "temperature" not in sent and sent["max_tokens"] > 2048

    wire.queue(anthropic_stream({"text": "ok"}))
    history = [user("hi"),
               LLMMessage(role="assistant", content=[ReasoningBlock(text="Let me think", metadata=end.metadata),
                                                     TextBlock(text="Done.")]),
               user("more")]
    await collect(provider(wire), request(messages=history, options={"thinking": {"budget_tokens": 2048}}))
    assistant = wire.last.body["messages"][1]
    assert assistant["content"][0] == {"type": "thinking", "thinking": "Let me think", "signature": "sig-abc"}


async def test_redacted_thinking_is_kept_and_sent_back_untouched(wire):
    wire.queue(anthropic_stream({"redacted": "EnCrYpTeD=="}, {"text": "Answer."}))
    events = await collect(provider(wire), request(options={"thinking": True}))
    [end] = [e for e in events if isinstance(e, ReasoningEnd)]
    assert end.metadata == {"redacted": "EnCrYpTeD=="}
    assert wire.last.body["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    back = convert_message(LLMMessage(role="assistant", content=[ReasoningBlock(text="", metadata=end.metadata)]))
    assert back["content"] == [{"type": "redacted_thinking", "data": "EnCrYpTeD=="}]


def test_reasoning_from_another_provider_is_not_sent_as_thinking():
    message = LLMMessage(role="assistant", content=[ReasoningBlock(text="openai thoughts"), TextBlock(text="hi")])
    assert convert_message(message)["content"] == [{"type": "text", "text": "hi"}]


@pytest.mark.parametrize(("option", "sent"), [
    (False, None), ({"type": "disabled"}, None), (1500, {"type": "enabled", "budget_tokens": 1500}),
    ({"type": "adaptive"}, {"type": "adaptive"}),
])
def test_the_thinking_option_takes_several_forms(option, sent):
    assert build_body(request(options={"thinking": option})).get("thinking") == sent


# ---------------------------------------------------------------------------------------------- request shape


async def test_cache_breakpoints_sit_on_the_system_prompt_and_the_last_two_messages(wire):
    wire.queue(anthropic_stream({"text": "ok"}))
    history = [
        user("one"),
        LLMMessage(role="assistant", content=[ToolCallBlock(id="t1", name="read", input={"path": "a"})]),
        LLMMessage(role="tool", content=[ToolResultBlock(call_id="t1", name="read", output="1: x")]),
        user("two"),
    ]
    await collect(provider(wire), request(messages=history))
    body = wire.last.body
    assert [b.get("cache_control") for b in body["system"]] == [None, EPHEMERAL]
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]  # tool result joined with the user turn
    marked = [(i, j) for i, m in enumerate(messages) for j, b in enumerate(m["content"]) if "cache_control" in b]
    assert marked == [(1, 0), (2, 1)]
    assert messages[2]["content"][0] == {"type": "tool_result", "tool_use_id": "t1",
                                         "content": [{"type": "text", "text": "1: x"}]}


def test_a_breakpoint_skips_thinking_blocks_and_never_touches_the_cached_conversion():
    thinking = ReasoningBlock(text="t", metadata={"signature": "s"})
    history = [user("q"), LLMMessage(role="assistant", content=[TextBlock(text="a"), thinking])]
    cache = {}

    def convert(message):
        return cache.setdefault(id(message), convert_message(message))

    body = build_body(request(messages=history), convert)
    assert body["messages"][1]["content"][0]["cache_control"] == EPHEMERAL
    assert "cache_control" not in body["messages"][1]["content"][1]
    assert all("cache_control" not in b for m in cache.values() for b in m["content"])
    again = build_body(request(messages=[*history, user("next")]), convert)
    assert "cache_control" not in again["messages"][0]["content"][0]


def test_the_same_message_objects_are_converted_once_across_steps(wire):
    p = provider(wire)
    history = [user("one"), LLMMessage(role="assistant", content=[TextBlock(text="two")])]
    calls = []
    p._converted._convert = lambda m: calls.append(m) or convert_message(m)
    build_body(request(messages=history), p._converted)
    build_body(request(messages=[*history, user("three")]), p._converted)
    assert len(calls) == 3


def test_images_pdfs_and_text_files_become_content_blocks():
    png = base64.b64encode(b"\x89PNG fake").decode()
    message = LLMMessage(role="user", content=[
        TextBlock(text=""),
        ImageBlock(mime="", data=f"data:image/png;base64,{png}"),
        FileBlock(mime="application/pdf", data=base64.b64encode(b"%PDF").decode(), filename="r.pdf"),
        FileBlock(data="data:text/csv,a%2Cb%0A1%2C2", mime="", filename="x.csv"),
    ])
    assert convert_message(message)["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERg=="},
         "title": "r.pdf"},
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "a,b\n1,2"},
         "title": "x.csv"},
    ]


def test_tool_results_carry_errors_and_images():
    image = ImageBlock(mime="image/png", data="aGk=")
    message = LLMMessage(role="tool", content=[ToolResultBlock(call_id="c", name="read", output="", is_error=True,
                                                               images=[image])])
    assert convert_message(message)["content"] == [{
        "type": "tool_result", "tool_use_id": "c", "is_error": True,
        "content": [{"type": "text", "text": "(no output)"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGk="}}]}]


def test_sampling_tool_choice_and_passthrough_options_reach_the_body():
    body = build_body(request(temperature=0.3, top_p=0.9, tool_choice="none", max_tokens=123,
                              tools=[ToolSpec(name="read", description="r", parameters={"type": "object"})],
                              options={"top_k": 40, "stop_sequences": ["END"], "unknown": 1}))
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["top_k"]) == (0.3, 0.9, 123, 40)
    assert body["tool_choice"] == {"type": "none"} and body["stop_sequences"] == ["END"] and "unknown" not in body
    assert build_body(request())["max_tokens"] == MODEL.output


# ---------------------------------------------------------------------------------------------- errors


async def test_the_key_goes_in_the_request_headers_and_the_sdk_does_not_retry(wire):
    wire.queue(anthropic_failure(500, "api_error"))
    await failure(wire)
    assert len(wire.received) == 1
    headers = wire.last.headers
    assert KEY in (headers.get("x-api-key", "") + headers.get("authorization", ""))
    assert headers.get("x-stainless-retry-count", "0") == "0"


@pytest.mark.parametrize(("response", "kind", "retryable", "status"), [
    (anthropic_failure(429, "rate_limit_error", headers={"retry-after": "7"}), "rate_limit", True, 429),
    (anthropic_failure(529, "overloaded_error", "Overloaded"), "overloaded", True, 529),
    (anthropic_failure(500, "api_error"), "server", True, 500),
    (anthropic_failure(503, "api_error"), "server", True, 503),
    (anthropic_failure(401, "authentication_error", "invalid x-api-key"), "auth", False, 401),
    (anthropic_failure(403, "permission_error", "not allowed"), "auth", False, 403),
    (anthropic_failure(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"),
     "context_overflow", False, 400),
    (anthropic_failure(413, "request_too_large", "Request exceeds the maximum size"), "context_overflow", False, 413),
    (anthropic_failure(400, "invalid_request_error", "messages: field required"), "bad_request", False, 400),
    (anthropic_failure(404, "not_found_error", "model: claude-nope"), "bad_request", False, 404),
])
async def test_every_http_error_is_classified(wire, response, kind, retryable, status):
    wire.queue(response)
    err = await failure(wire)
    assert (err.kind, err.retryable, err.status) == (kind, retryable, status)
    assert KEY not in str(err)


async def test_retry_after_is_read_from_either_header_milliseconds_first(wire):
    wire.queue(anthropic_failure(429, "rate_limit_error", headers={"retry-after": "7"}),
               anthropic_failure(429, "rate_limit_error", headers={"retry-after": "7", "retry-after-ms": "250"}),
               anthropic_failure(529, "overloaded_error", headers={"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}))
    assert [(await failure(wire)).retry_after_s for _ in range(3)] == [7, 0.25, 0]


async def test_an_auth_failure_says_which_variable_or_config_key_to_check(wire):
    wire.queue(anthropic_failure(401, "authentication_error", f"invalid x-api-key {KEY}"))
    err = await failure(wire)
    assert "ANTHROPIC_API_KEY or provider.anthropic.api_key" in str(err)
    assert KEY not in str(err) and "***" in str(err)


async def test_a_connection_dropped_mid_stream_is_a_retryable_connection_error(wire):
    wire.queue(anthropic_stream({"text": "Hello there, this will be cut"}, drop_after=5))
    got = []
    with pytest.raises(ProviderError) as err:
        async for event in provider(wire).stream(request()):
            got.append(event)
    assert err.value.kind == "connection" and err.value.retryable
    assert [type(e) for e in got] == [TextDelta, TextDelta]


async def test_a_stream_that_ends_without_message_stop_is_a_retryable_connection_error(wire):
    whole = anthropic_stream({"text": "cut short"})
    wire.queue(Stream(whole.events[:-2]))
    err = await failure(wire)
    assert err.kind == "connection" and err.retryable


async def test_a_connection_closed_before_any_response_is_retryable(wire):
    wire.queue(Drop())
    err = await failure(wire)
    assert err.kind == "connection" and err.retryable


async def test_nothing_listening_is_a_retryable_connection_error():
    dead = AnthropicProvider(api_key=KEY, base_url="http://127.0.0.1:9")
    with pytest.raises(ProviderError) as err:
        await collect(dead, request())
    assert err.value.kind == "connection" and err.value.retryable
    assert KEY not in repr(dead) and KEY not in str(err.value)


@pytest.mark.parametrize(("kind", "message", "expected", "retryable"), [
    ("overloaded_error", "Overloaded", "overloaded", True),
    ("api_error", "Internal server error", "server", True),
    ("rate_limit_error", "Slow down", "rate_limit", True),
    ("invalid_request_error", "bad thing", "provider", False),
])
async def test_an_error_event_inside_the_stream_is_classified_by_its_type(wire, kind, message, expected, retryable):
    wire.queue(anthropic_error_event(kind, message))
    err = await failure(wire)
    assert (err.kind, err.retryable) == (expected, retryable)
    assert message in str(err)


async def test_the_key_never_reaches_the_logs(wire, caplog):
    wire.queue(anthropic_stream({"text": "ok"}), anthropic_failure(401, "authentication_error", "bad key"))
    with caplog.at_level(logging.DEBUG):
        await collect(provider(wire), request())
        await failure(wire)
    assert caplog.records and KEY not in caplog.text


async def test_stopping_early_closes_the_connection_at_once(wire):
    wire.queue(Stream(anthropic_stream({"text": "a long answer " * 100}).events, delay_s=0.01))
    stream = provider(wire).stream(request())
    assert isinstance(await anext(stream), TextDelta)
    await asyncio.wait_for(stream.aclose(), timeout=2)
    for _ in range(200):
        if wire.disconnects:
            break
        await asyncio.sleep(0.01)
    assert wire.disconnects == 1
