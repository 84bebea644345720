"""The normalized stream every provider produces."""

from opencode_nb.provider import StepFinish, TextDelta, ToolCall
from opencode_nb.provider.events import parse_tool_input, provider_event_adapter


def test_events_load_through_one_discriminated_union():
    events = [TextDelta(text="a"), ToolCall(id="c", name="read", input={"path": "x"}, raw='{"path": "x"}'),
              StepFinish(reason="tool-calls")]
    assert [provider_event_adapter.validate_json(e.model_dump_json()) for e in events] == events


def test_tool_input_must_be_a_json_object():
    assert parse_tool_input("read", "c", '  {"path": "a"} ').input == {"path": "a"}
    assert parse_tool_input("todoread", "c", "").input == {}
    listed = parse_tool_input("read", "c", '["a"]')
    assert listed.input is None and listed.error == "expected a JSON object, got list" and listed.raw == '["a"]'
    broken = parse_tool_input("read", "c", '{"path": ')
    assert broken.input is None and broken.error.startswith("Expecting value")


def test_json_nested_past_the_parsers_limit_is_a_malformed_call_not_a_recursion_error():
    deep = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    call = parse_tool_input("read", "c", deep)
    assert call.input is None and call.error.startswith("nested too deeply") and call.raw == deep
