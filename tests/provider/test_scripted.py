import pytest

from opencode_nb.errors import ConfigError, ProviderError
from opencode_nb.provider import (
    LLMMessage,
    LLMRequest,
    ReasoningDelta,
    Scripted,
    StepFinish,
    TextBlock,
    TextDelta,
    ToolCall,
    model_info,
)

REQ = LLMRequest(model=model_info("scripted", "demo"), messages=[LLMMessage(role="user", content=[
    TextBlock(text="Summarize the sales data please")])])


async def collect(p, req=REQ):
    return [e async for e in p.stream(req)]


async def test_turns_are_replayed_in_order_and_text_is_streamed_in_chunks():
    p = Scripted([{"text": "x" * 100}, {"tool_calls": [{"name": "read", "input": {"path": "a"}}]}])
    first = await collect(p)
    assert len([e for e in first if isinstance(e, TextDelta)]) > 1 and first[-1].reason == "stop"
    second = await collect(p)
    [call] = [e for e in second if isinstance(e, ToolCall)]
    assert call.input == {"path": "a"} and second[-1].reason == "tool-calls"
    assert len(p.requests) == 2


async def test_a_raw_string_input_plays_a_model_writing_malformed_json():
    [call] = [e for e in await collect(Scripted([{"tool_calls": [{"name": "read", "input": "{oops"}]}]))
              if isinstance(e, ToolCall)]
    assert call.input is None and call.error


async def test_reasoning_usage_and_finish_can_be_scripted():
    events = await collect(Scripted([{"reasoning": "hmm", "text": "cut", "finish": "length",
                                      "usage": {"input": 5, "output": 7}}]))
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["hmm"]
    assert events[-1] == StepFinish(reason="length", usage={"input": 5, "output": 7})


async def test_usage_is_estimated_from_the_request_when_not_given():
    events = await collect(Scripted([{"text": "abcd" * 10}]))
    assert events[-1].usage.output == 10 and events[-1].usage.input > 0


async def test_a_function_decides_each_turn_from_the_request():
    async def respond(request):
        return {"text": f"you said {request.messages[-1].content[0].text}"}

    events = await collect(Scripted(respond=respond))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "you said Summarize the sales data please"


async def test_a_scripted_error_is_raised_as_a_provider_error():
    p = Scripted([{"text": "par", "error": {"status": 529, "kind": "overloaded", "retry_after_s": 2}}])
    with pytest.raises(ProviderError) as err:
        await collect(p)
    assert (err.value.status, err.value.retryable, err.value.retry_after_s) == (529, True, 2)


async def test_running_out_of_turns_is_a_clear_error():
    with pytest.raises(ProviderError, match="no more turns"):
        await collect(Scripted([]))


async def test_title_requests_never_consume_a_turn():
    p = Scripted([{"text": "real answer"}])
    events = await collect(p, REQ.model_copy(update={"purpose": "title"}))
    assert events[0].text == "Summarize the sales data please"
    assert len(p.turns) == 1


def test_a_script_file_is_loaded_relative_to_the_project(tmp_path):
    (tmp_path / "script.yaml").write_text("- text: hello\n- tool_calls: [{name: list, input: {path: .}}]\n")
    assert len(Scripted.from_config("script.yaml", tmp_path).turns) == 2
    with pytest.raises(ConfigError, match="cannot be read"):
        Scripted.from_config("missing.yaml", tmp_path)
    with pytest.raises(ConfigError, match=r"provider\.scripted\.script"):
        Scripted.from_config([{"txet": "typo"}])
