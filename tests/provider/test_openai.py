"""The OpenAI provider (and OpenAI-compatible servers) through the real SDK, against the wire server."""

import base64
import json
import logging

import pytest

from opencode_nb.config import Config
from opencode_nb.errors import ProviderError
from opencode_nb.provider import (
    FileBlock,
    ImageBlock,
    LLMMessage,
    LLMRequest,
    ProviderRegistry,
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
from opencode_nb.provider.openai import OpenAIProvider, build_body, convert_message

from .wire_openai import chunk, openai_error_chunk, openai_failure, openai_stream
from .wire_server import Stream

KEY = "sk-openai-test-secret-456"


def provider(wire, key=KEY):
    return OpenAIProvider(api_key=key, base_url=f"{wire.url}/v1")


def user(text):
    return LLMMessage(role="user", content=[TextBlock(text=text)])


def request(model="gpt-5", **kw):
    return LLMRequest(**{"model": model_info("openai", model), "system": ["base", "env"], "messages": [user("hi")],
                         **kw})


async def collect(p, req):
    return [e async for e in p.stream(req)]


async def failure(wire, req=None):
    with pytest.raises(ProviderError) as err:
        await collect(provider(wire), req or request())
    return err.value


# ---------------------------------------------------------------------------------------------- streaming


async def test_text_streams_and_usage_arrives_in_the_final_chunk(wire):
    wire.queue(openai_stream("Hello from the notebook.", usage={
        "prompt_tokens": 1000, "completion_tokens": 80, "prompt_tokens_details": {"cached_tokens": 600},
        "completion_tokens_details": {"reasoning_tokens": 50}}))
    events = await collect(provider(wire), request())
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert "".join(deltas) == "Hello from the notebook." and len(deltas) > 1
    # cached tokens are inside prompt_tokens and reasoning inside completion_tokens: each is counted once
    assert events[-1] == StepFinish(reason="stop", usage={"input": 400, "cache_read": 600, "output": 30,
                                                          "reasoning": 50})
    body = wire.last.body
    assert wire.last.path == "/v1/chat/completions"
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"][0] == {"role": "system", "content": "base\n\nenv"}


async def test_parallel_tool_calls_are_assembled_from_interleaved_fragments(wire):
    wire.queue(openai_stream(calls=[
        {"id": "call_a", "name": "read", "args": json.dumps({"path": "stats.py"})},
        {"id": "call_b", "name": "grep", "args": json.dumps({"pattern": "def (mean|median)", "path": "."})}]))
    events = await collect(provider(wire), request(tools=[ToolSpec(name="read", description="r", parameters={})]))
    starts = [(e.id, e.name) for e in events if isinstance(e, ToolCallStart)]
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert starts == [("call_a", "read"), ("call_b", "grep")]
    assert [(c.id, c.name, c.input) for c in calls] == [
        ("call_a", "read", {"path": "stats.py"}), ("call_b", "grep", {"pattern": "def (mean|median)", "path": "."})]
    assert events.index(next(e for e in events if isinstance(e, ToolCallStart))) < events.index(calls[0])
    assert events[-1].reason == "tool-calls"
    assert wire.last.body["tools"] == [{"type": "function", "function": {"name": "read", "description": "r",
                                                                          "parameters": {}}}]
    assert wire.last.body["tool_choice"] == "auto"


async def test_malformed_arguments_become_a_call_with_an_error(wire):
    wire.queue(openai_stream(calls=[{"id": "call_a", "name": "read", "args": '{"path": '}]))
    [call] = [e for e in await collect(provider(wire), request()) if isinstance(e, ToolCall)]
    assert call.input is None and call.raw == '{"path": ' and "position" in call.error


async def test_a_server_that_says_stop_after_calling_tools_still_finishes_with_tool_calls(wire):
    wire.queue(openai_stream(calls=[{"id": "c", "name": "list", "args": "{}"}], finish="stop"))
    assert (await collect(provider(wire), request()))[-1].reason == "tool-calls"


@pytest.mark.parametrize(("finish", "reason"), [("length", "length"), ("content_filter", "content-filter")])
async def test_finish_reasons_map(wire, finish, reason):
    wire.queue(openai_stream("partial", finish=finish))
    assert (await collect(provider(wire), request()))[-1].reason == reason


async def test_a_refusal_is_shown_as_text_and_finishes_as_content_filter(wire):
    wire.queue(Stream([chunk({"role": "assistant", "content": None}), chunk({"refusal": "I can't help with that."}),
                       chunk({}, "stop"), (None, "[DONE]")]))
    events = await collect(provider(wire), request())
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["I can't help with that."]
    assert events[-1].reason == "content-filter"


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_reasoning_from_compatible_servers_is_reasoning(wire, field):
    wire.queue(openai_stream("Answer.", reasoning="thinking it over", reasoning_field=field))
    events = await collect(provider(wire), request())
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "thinking it over"
    end = next(i for i, e in enumerate(events) if isinstance(e, ReasoningEnd))
    assert end < next(i for i, e in enumerate(events) if isinstance(e, TextDelta))


# ---------------------------------------------------------------------------------------------- request shape


async def test_reasoning_models_get_completion_limits_and_effort_passed_through(wire):
    wire.queue(openai_stream("ok"), openai_stream("ok"))
    await collect(provider(wire), request(options={"reasoning_effort": "high"}, temperature=0.3))
    body = wire.last.body
    assert body["reasoning_effort"] == "high" and body["max_completion_tokens"] == 128_000
    assert "temperature" not in body and "max_tokens" not in body
    await collect(provider(wire), request(model="gpt-4o", temperature=0.3, top_p=0.5, max_tokens=500))
    body = wire.last.body
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.3, 0.5, 500)
    assert "max_completion_tokens" not in body and "reasoning_effort" not in body


def test_options_pass_through_and_server_specific_fields_go_in_extra_body():
    body = build_body(request(model="gpt-4.1", tool_choice="none",
                              tools=[ToolSpec(name="read", description="r", parameters={})],
                              options={"seed": 7, "parallel_tool_calls": False, "extra_body": {"top_k": 20},
                                       "thinking": {"budget_tokens": 1}}))
    assert (body["seed"], body["parallel_tool_calls"], body["extra_body"], body["tool_choice"]) == (
        7, False, {"top_k": 20}, "none")
    assert "thinking" not in body


async def test_history_with_tool_calls_and_results_goes_out_in_chat_form(wire):
    wire.queue(openai_stream("ok"))
    history = [user("go"),
               LLMMessage(role="assistant", content=[ReasoningBlock(text="hmm"), TextBlock(text="Reading."),
                                                     ToolCallBlock(id="c1", name="read", input={"path": "a"})]),
               LLMMessage(role="tool", content=[ToolResultBlock(call_id="c1", name="read", output="boom",
                                                                is_error=True)])]
    await collect(provider(wire), request(messages=history))
    sent = wire.last.body["messages"][1:]
    assert sent == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "Reading.", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"path": "a"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Error: boom"},
    ]


def test_an_assistant_turn_with_only_tool_calls_sends_empty_content_not_null():
    message = LLMMessage(role="assistant", content=[ToolCallBlock(id="c", name="list", input={})])
    assert convert_message(message)[0]["content"] == ""


def test_tool_images_follow_all_tool_messages_in_one_user_message():
    image = ImageBlock(mime="image/png", data="aGk=")
    message = LLMMessage(role="tool", content=[
        ToolResultBlock(call_id="a", name="python", output="plot", images=[image]),
        ToolResultBlock(call_id="b", name="read", output="text")])
    out = convert_message(message)
    assert [m["role"] for m in out] == ["tool", "tool", "user"]
    assert out[2]["content"][1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGk="}}


def test_user_images_and_files_become_content_parts():
    text = base64.b64encode(b"a,b\n1,2").decode()
    message = LLMMessage(role="user", content=[
        TextBlock(text="look"), ImageBlock(data="data:image/jpeg;base64,aGk=", mime=""),
        FileBlock(mime="application/pdf", data="JVBERg==", filename="r.pdf"),
        FileBlock(mime="text/csv", data=text, filename="x.csv")])
    assert convert_message(message)[0]["content"] == [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,aGk="}},
        {"type": "file", "file": {"filename": "r.pdf", "file_data": "data:application/pdf;base64,JVBERg=="}},
        {"type": "text", "text": "Contents of x.csv:\na,b\n1,2"},
    ]


# ---------------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(("response", "kind", "retryable", "status"), [
    (openai_failure(429, "rate_limit_exceeded", headers={"retry-after-ms": "1500"}), "rate_limit", True, 429),
    (openai_failure(429, "insufficient_quota", "You exceeded your current quota"), "quota", False, 429),
    (openai_failure(529, "overloaded"), "overloaded", True, 529),
    (openai_failure(500, "server_error"), "server", True, 500),
    (openai_failure(502, "bad_gateway"), "server", True, 502),
    (openai_failure(401, "invalid_api_key", "Incorrect API key"), "auth", False, 401),
    (openai_failure(403, "unsupported_country_region_territory"), "auth", False, 403),
    (openai_failure(400, "context_length_exceeded", "This model's maximum context length is 128000"),
     "context_overflow", False, 400),
    (openai_failure(400, "content_policy_violation", "Your request was rejected"), "content_filter", False, 400),
    (openai_failure(422, "invalid_request_error", "messages[1].content: null"), "bad_request", False, 422),
])
async def test_http_errors_are_classified(wire, response, kind, retryable, status):
    wire.queue(response)
    err = await failure(wire)
    assert (err.kind, err.retryable, err.status) == (kind, retryable, status)
    if kind == "rate_limit":
        assert err.retry_after_s == 1.5
    assert KEY not in str(err)
    assert len(wire.received) == 1  # the SDK's own retries are off


async def test_an_error_chunk_inside_the_stream_is_a_retryable_server_error(wire):
    wire.queue(openai_error_chunk("server_error", "The server had an error while processing your request"))
    err = await failure(wire)
    assert (err.kind, err.retryable) == ("server", True) and "processing your request" in str(err)


async def test_a_dropped_stream_is_a_retryable_connection_error(wire):
    wire.queue(openai_stream("a long answer that gets cut", drop_after=3))
    err = await failure(wire)
    assert err.retryable and err.kind == "connection"


async def test_a_stream_without_a_finish_reason_is_a_retryable_connection_error(wire):
    wire.queue(Stream([chunk({"role": "assistant", "content": "Hi"}), (None, "[DONE]")]))
    err = await failure(wire)
    assert err.retryable and err.kind == "connection"


async def test_the_key_never_reaches_the_logs_or_errors(wire, caplog):
    wire.queue(openai_stream("ok"), openai_failure(401, "invalid_api_key", f"Incorrect API key provided: {KEY}"))
    with caplog.at_level(logging.DEBUG):
        await collect(provider(wire), request())
        err = await failure(wire)
    assert caplog.records and KEY not in caplog.text
    assert KEY not in str(err) and "OPENAI_API_KEY or provider.openai.api_key" in str(err)
    assert wire.received[0].headers["authorization"] == f"Bearer {KEY}"


# ---------------------------------------------------------------------------------------------- compatible


async def test_an_openai_compatible_server_needs_no_key(wire):
    config = Config.model_validate({"provider": {"local": {"type": "openai-compatible",
                                                           "base_url": f"{wire.url}/v1"}}})
    p, model = ProviderRegistry(config, {}).resolve("local/qwen3:8b")
    wire.queue(openai_stream("local model says hi"), openai_failure(401, "unauthorized", "key required"))
    events = await collect(p, LLMRequest(model=model, messages=[user("hi")], temperature=0.2))
    assert events[-1].reason == "stop" and model.context == 128_000
    assert wire.last.headers["authorization"] == "Bearer not-needed"
    body = wire.last.body
    assert (body["model"], body["max_tokens"], body["temperature"]) == ("qwen3:8b", 8_192, 0.2)
    assert body["messages"] == [{"role": "user", "content": "hi"}]  # no empty system message
    with pytest.raises(ProviderError, match=r"local \(OpenAI-compatible\).*provider\.local\.api_key"):
        await collect(p, LLMRequest(model=model, messages=[user("hi")]))


async def test_fragments_without_an_index_still_make_one_call(wire):
    wire.queue(Stream([
        chunk({"role": "assistant", "content": ""}),
        chunk({"tool_calls": [{"id": "x1", "type": "function", "function": {"name": "read", "arguments": '{"pa'}}]}),
        chunk({"tool_calls": [{"function": {"arguments": 'th": "a"}'}}]}),
        chunk({}, "tool_calls"), (None, "[DONE]")]))
    [call] = [e for e in await collect(provider(wire), request()) if isinstance(e, ToolCall)]
    assert (call.id, call.name, call.input) == ("x1", "read", {"path": "a"})
