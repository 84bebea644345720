"""Arguments no tool can use come back to the model as clear tool errors: no traceback, no part left pending.

Through the real loop: the scripted provider sends raw argument text (a JSON string with `\\u0000`, a lone
`\\ud800`, three megabytes, a hundred thousand levels of nesting); the wire server does the same through
the real SDKs.
"""

from __future__ import annotations

import json
import logging
import re

import pytest
from pydantic import BaseModel

from opencode_nb.session.store import SessionStore
from opencode_nb.tool.base import (
    MAX_ARGUMENT_CHARS,
    MAX_ARGUMENT_DEPTH,
    Tool,
    ToolContext,
    ToolResult,
    argument_problem,
    storable_arguments,
    well_formed,
)
from tests.provider.wire import Stream, anthropic_stream, openai_stream
from tests.session.conftest import Harness, on_wire

DEEP = '{"path": ' + "[" * 100_000 + "]" * 100_000 + "}"


@pytest.fixture
def h(make):
    return make({"permission": {"*": "allow"}})


@pytest.fixture
def logs(caplog):
    caplog.set_level(logging.DEBUG, logger="opencode_nb")
    return caplog


def assert_no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    """Our log only: an SDK client another test left to the garbage collector may log from asyncio here."""
    ours = [r for r in caplog.records if r.name.startswith("opencode_nb")]
    bad = [r for r in ours if r.levelno >= logging.ERROR or (r.exc_info and r.levelno >= logging.WARNING)]
    assert not bad, [r.getMessage() for r in bad]


def assert_stored_whole(h: Harness) -> None:
    """A fresh store reads back every part the run wrote: no write was lost to an encoding error."""
    h.ws.sessions.flush()
    with SessionStore(h.ws.store_path) as fresh:
        stored = [len(m.parts) for m in fresh.messages(h.session.id)]
    assert stored == [len(m.parts) for m in h.ws.sessions.messages(h.session.id)]


CASES = {
    "nul": ("bash", '{"command": "echo hi\\u0000 > x"}', "contains a NUL character"),
    "lone-surrogate": ("read", '{"path": "stats\\ud800.py"}', "unpaired surrogate (\\ud800)"),
    "lone-surrogate-key": ("read", '{"path": "stats.py", "\\udc00": 1}', "unpaired surrogate"),
    "3-mb-command": ("bash", json.dumps({"command": "echo " + "x" * 3_000_000}), f"{MAX_ARGUMENT_CHARS:,} characters"),
    "100k-deep": ("read", DEEP, "nested too deeply"),
    "65-deep": ("todowrite", '{"todos": ' + "[" * 70 + "]" * 70 + "}", f"more than {MAX_ARGUMENT_DEPTH} levels"),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_arguments_no_tool_can_use_are_a_tool_error_the_model_reads(h, logs, case):
    tool, raw, expected = CASES[case]
    # Usage given: the scripted model would count a 3 MB call as 750k output tokens and compact.
    h.script({"tool_calls": [{"name": tool, "input": raw}], "usage": {"input": 900, "output": 40}},
             {"text": "I will send plain arguments."})
    final = await h.prompt()
    assert final.finish == "stop"
    [part] = h.tool_parts()
    assert part.state.status == "error" and expected in part.state.error
    [result] = [b for m in h.step_requests()[1].messages if m.role == "tool" for b in m.content]
    assert result.is_error and expected in result.output
    echoed = [b for m in h.step_requests()[1].messages if m.role == "assistant" for b in m.content
              if b.type == "tool-call"]
    assert len(json.dumps(echoed[0].input)) < 10_000  # a refused 3 MB call does not ride along in every request
    assert_no_tracebacks(logs)
    assert_stored_whole(h)


async def test_a_refused_command_never_reaches_a_shell(h, tmp_path):
    h.script({"tool_calls": [{"name": "bash", "input": '{"command": "touch made.txt\\u0000"}'}]}, {"text": "ok"})
    await h.prompt()
    assert not (h.root / "made.txt").exists()


async def test_an_invalid_glob_range_is_an_error_result_without_a_traceback(h, logs):
    h.script({"tool_calls": [{"name": "glob", "input": {"pattern": "[z-a].py"}}]}, {"text": "Fixed the range."})
    final = await h.prompt()
    [part] = h.tool_parts()
    assert final.finish == "stop" and part.state.status == "error"
    assert_no_tracebacks(logs)


async def test_model_text_with_split_and_lone_surrogates_is_stored_and_sent_back_well_formed(h, logs):
    h.script({"text": "smile \ud83d", "tool_calls": [{"name": "read", "input": {"path": "stats.py"}}]},
             {"text": "done \udc00"})
    await h.prompt()
    texts = [p.text for p in h.parts("text")[1:]]
    assert texts == ["smile \ufffd", "done \ufffd"]
    [echo] = [b.text for m in h.step_requests()[1].messages if m.role == "assistant" for b in m.content
              if b.type == "text"]
    assert echo == "smile \ufffd"
    assert_no_tracebacks(logs)
    assert_stored_whole(h)


# ------------------------------------------------------------------------------------- the same through the SDKs


def deep_call(provider: str) -> Stream:
    """A call to `read` whose arguments are 100k levels deep, sent as one fragment (200k characters)."""
    if provider == "anthropic":
        stream = anthropic_stream({"tool": "read", "id": "toolu_1", "json": "{}"}, stop="tool_use")
        events = [e for e in stream.events if (e[1].get("delta") or {}).get("type") != "input_json_delta"]
        stop = next(i for i, e in enumerate(events) if e[0] == "content_block_stop")
        events.insert(stop, ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
            "type": "input_json_delta", "partial_json": DEEP}}))
        return Stream(events)
    stream = openai_stream(calls=[{"id": "call_1", "name": "read", "args": "{}"}])
    events = [e for e in stream.events if not _argument_fragment(e[1])]
    opening = next(i for i, e in enumerate(events) if isinstance(e[1], dict) and _opens_call(e[1]))
    fragment = json.loads(json.dumps(events[opening][1]))
    fragment["choices"][0]["delta"] = {"tool_calls": [{"index": 0, "function": {"arguments": DEEP}}]}
    events.insert(opening + 1, (None, fragment))
    return Stream(events)


def _argument_fragment(data: object) -> bool:
    if not isinstance(data, dict):
        return False
    return any(call.get("function", {}).get("arguments") and "id" not in call
               for choice in data.get("choices") or [] for call in choice["delta"].get("tool_calls") or [])


def _opens_call(data: dict) -> bool:
    return any("id" in call for choice in data.get("choices") or [] for call in choice["delta"].get("tool_calls") or [])


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_100k_deep_arguments_through_the_real_sdks_are_a_tool_error(make, wire, logs, provider):
    h = on_wire(make, wire, provider)
    done = anthropic_stream({"text": "Sorry."}) if provider == "anthropic" else openai_stream("Sorry.")
    wire.queue(deep_call(provider), done)
    final = await h.prompt("read it")
    assert final.finish == "stop" and final.error is None
    [part] = h.tool_parts()
    assert part.state.status == "error" and "nested too deeply" in part.state.error
    assert len(wire.received) == 2 and len(json.dumps(wire.received[1].body)) < 100_000
    assert_no_tracebacks(logs)


# ------------------------------------------------------------------------------------- the generic layer itself


def test_argument_problem_walks_deep_input_without_recursion():
    deep: object = "x"
    for _ in range(100_000):
        deep = [deep]
    assert "nested more than 64 levels" in argument_problem({"a": deep})
    assert argument_problem({"command": "ls", "todos": [{"content": "ok", "status": "pending"}]}) is None


def test_storable_arguments_are_short_well_formed_and_shallow():
    deep: object = {}
    for _ in range(1000):
        deep = {"a": deep}
    stored = storable_arguments({"command": "x" * 3_000_000 + "\ud800", "nul": "a\0b", "deep": deep})
    text = json.dumps(stored, ensure_ascii=False)
    text.encode("utf-8")  # encodable at all
    assert len(text) < 10_000 and stored["nul"] == "a\ufffdb" and "3,000,000" not in stored["command"]
    assert "2,998,001 more characters" in stored["command"]


def test_well_formed_joins_split_pairs_and_replaces_lone_halves():
    assert well_formed("a\ud83d" + "\ude00b\udc00") == "a\U0001f600b\ufffd"
    assert well_formed("plain") == "plain"


class PatternParams(BaseModel):
    pattern: str


class PatternTool(Tool[PatternParams]):
    """Compiles what the model gives it, as grep and glob do, with no checks of its own."""

    id = "pattern"
    params = PatternParams
    description = "Compiles a pattern."  # type: ignore[assignment]

    async def execute(self, params: PatternParams, ctx: ToolContext) -> ToolResult:
        if params.pattern == "bug":
            raise KeyError("a real bug")
        re.compile(params.pattern)
        return ToolResult("pattern", "ok")


async def test_input_the_standard_library_rejects_is_a_result_with_a_warning_and_a_bug_keeps_its_traceback(h, logs):
    h.ws.tools.register(PatternTool())
    h.script({"tool_calls": [{"name": "pattern", "input": {"pattern": "[z-a]"}},
                             {"name": "pattern", "input": {"pattern": "bug"}}]}, {"text": "ok"})
    await h.prompt()
    bad_range, bug = h.tool_parts()
    assert bad_range.state.status == "error" and "bad character range z-a" in bad_range.state.error
    assert bug.state.status == "error" and "a real bug" in bug.state.error
    errors = [r for r in logs.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info and "pattern failed" in errors[0].getMessage()
    [warning] = [r for r in logs.records if r.levelno == logging.WARNING]
    assert "could not use its input" in warning.getMessage() and not warning.exc_info
