"""The scripted provider: an offline model replaying turns, the loop's test double."""

import asyncio
import json
import time

import pytest

from opencode_nb.errors import ConfigError, ProviderError
from opencode_nb.provider import (
    LLMMessage,
    LLMRequest,
    Provider,
    ReasoningDelta,
    ReasoningEnd,
    Scripted,
    StepFinish,
    TextBlock,
    TextDelta,
    ToolCall,
    ToolCallStart,
    Turn,
    model_info,
)

REQ = LLMRequest(model=model_info("scripted", "demo"), messages=[LLMMessage(role="user", content=[
    TextBlock(text="Summarize the sales data please")])])


async def collect(p, req=REQ):
    return [e async for e in p.stream(req)]


def test_it_is_just_another_provider():
    assert isinstance(Scripted([]), Provider)


async def test_turns_are_replayed_in_order_and_text_is_streamed_in_chunks():
    p = Scripted([{"text": "x" * 100}, Turn(tool_calls=[{"name": "read", "input": {"path": "a"}}])])
    first = await collect(p)
    assert len([e for e in first if isinstance(e, TextDelta)]) > 1 and first[-1].reason == "stop"
    second = await collect(p)
    assert [type(e) for e in second] == [ToolCallStart, ToolCall, StepFinish]
    assert second[1].input == {"path": "a"} and second[1].id == second[0].id and second[-1].reason == "tool-calls"
    assert p.requests == [REQ, REQ]


async def test_tool_call_ids_can_be_scripted():
    events = await collect(Scripted([{"tool_calls": [{"name": "read", "input": {}, "id": "call_7"}]}]))
    assert events[1].id == "call_7"


async def test_a_raw_string_input_plays_a_model_writing_malformed_json():
    [call] = [e for e in await collect(Scripted([{"tool_calls": [{"name": "read", "input": "{oops"}]}]))
              if isinstance(e, ToolCall)]
    assert call.input is None and call.raw == "{oops" and call.error


async def test_reasoning_usage_and_finish_can_be_scripted():
    events = await collect(Scripted([{"reasoning": "hmm", "text": "cut", "finish": "length",
                                      "usage": {"input": 5, "output": 7}}]))
    assert [type(e) for e in events] == [ReasoningDelta, ReasoningEnd, TextDelta, StepFinish]
    assert events[-1] == StepFinish(reason="length", usage={"input": 5, "output": 7})


def test_a_misspelt_finish_reason_is_refused():
    with pytest.raises(ValueError, match="finish"):
        Scripted([{"finish": "tool_calls"}])


async def test_usage_is_estimated_at_four_characters_a_token_when_not_given():
    events = await collect(Scripted([{"text": "abcd" * 10}]))
    size = len(REQ.messages[0].model_dump_json())
    assert events[-1].usage.output == 10 and events[-1].usage.input == int(size / 4 + 0.5)


async def test_an_async_function_decides_each_turn_from_the_request():
    async def respond(request):
        return {"text": f"you said {request.messages[-1].content[0].text}"}

    events = await collect(Scripted(respond=respond))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "you said Summarize the sales data please"


async def test_a_plain_function_may_return_a_turn_or_just_text():
    answers = iter([Turn(text="first"), "second"])
    p = Scripted(respond=lambda request: next(answers))
    assert [e.text for e in await collect(p) if isinstance(e, TextDelta)] == ["first"]
    assert [e.text for e in await collect(p) if isinstance(e, TextDelta)] == ["second"]


async def test_delay_is_waited_before_each_chunk_without_blocking_the_loop():
    p = Scripted([{"text": "y" * 72, "delay": 0.05}])  # three chunks
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    started = time.monotonic()
    await collect(p)
    task.cancel()
    assert time.monotonic() - started >= 0.15 and ticks >= 3


async def test_a_scripted_error_is_raised_as_a_provider_error_after_the_text():
    p = Scripted([{"text": "par", "error": {"status": 529, "retry_after_s": 2}}])
    seen = []
    with pytest.raises(ProviderError) as err:
        async for event in p.stream(REQ):
            seen.append(event)
    assert [e.text for e in seen] == ["par"]
    assert (err.value.status, err.value.kind, err.value.retryable, err.value.retry_after_s) == (
        529, "overloaded", True, 2)


@pytest.mark.parametrize(("error", "kind", "retryable"), [
    ({"status": 429}, "rate_limit", True), ({"status": 500}, "server", True), ({"status": 401}, "auth", False),
    ({"status": 400, "message": "prompt is too long"}, "bad_request", False),
    ({"status": 500, "retryable": False, "kind": "provider"}, "provider", False),
])
async def test_a_scripted_error_takes_its_kind_from_the_status_unless_given(error, kind, retryable):
    with pytest.raises(ProviderError) as err:
        await collect(Scripted([{"error": error}]))
    assert (err.value.kind, err.value.retryable) == (kind, retryable)


async def test_running_out_of_turns_is_a_clear_error_that_is_not_retried():
    p = Scripted([{"text": "only one"}])
    await collect(p)
    with pytest.raises(ProviderError, match="no more turns") as err:
        await collect(p)
    assert not err.value.retryable and len(p.requests) == 2


async def test_title_requests_never_consume_a_turn():
    p = Scripted([{"text": "real answer"}])
    events = await collect(p, REQ.model_copy(update={"purpose": "title"}))
    assert events[0].text == "Summarize the sales data please"
    assert len(p.turns) == 1


def test_a_script_file_is_loaded_relative_to_the_project(tmp_path):
    (tmp_path / "script.yaml").write_text("- text: hello\n- tool_calls: [{name: list, input: {path: .}}]\n")
    (tmp_path / "script.json").write_text(json.dumps([{"text": "hi"}]))
    assert len(Scripted.from_config("script.yaml", tmp_path).turns) == 2
    assert Scripted.from_config(str(tmp_path / "script.json")).turns == [Turn(text="hi")]
    assert Scripted.from_config([{"text": "a"}, {"text": "b"}]).turns[1].text == "b"


def test_a_bad_script_names_the_file_the_turn_and_the_key(tmp_path):
    with pytest.raises(ConfigError, match="cannot be read"):
        Scripted.from_config("missing.yaml", tmp_path)
    (tmp_path / "bad.yaml").write_text("text: not a list\n")
    with pytest.raises(ConfigError, match="must be a list of turns"):
        Scripted.from_config("bad.yaml", tmp_path)
    with pytest.raises(ConfigError, match=r"provider\.scripted\.script\[1\]\.txet: .*turn keys: text"):
        Scripted.from_config([{"text": "ok"}, {"txet": "typo"}])
