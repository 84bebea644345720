"""The loop driving the real SDKs against the loopback wire server."""

import json

import pytest

from opencode_nb.session import system as system_prompt
from tests.provider.wire import (
    anthropic_failure,
    anthropic_stream,
    openai_failure,
    openai_stream,
)
from tests.session.conftest import on_wire


def after_first_step(wire) -> list:
    """The messages of the first request that carries the first step's answer back."""
    return next(r.body["messages"] for r in wire.received if len(r.body.get("messages", [])) > 1)


async def test_anthropic_tool_call_round_trip_through_the_loop(make, wire):
    h = on_wire(make, wire, "anthropic")
    wire.queue(anthropic_stream({"text": "Reading."}, {"tool": "read", "id": "toolu_9",
                                                       "json": json.dumps({"path": "stats.py"})}, stop="tool_use"),
               anthropic_failure(529, "overloaded_error", "Overloaded"),
               anthropic_stream({"text": "The mean divides by n - 1."}))
    final = await h.prompt("Why is the mean wrong?")
    assert final.finish == "stop" and final.error is None
    [tool] = h.tool_parts()
    assert tool.state.status == "completed" and tool.call_id == "toolu_9"
    second = after_first_step(wire)
    result = next(b for m in second for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
    assert result["tool_use_id"] == "toolu_9" and "def mean" in result["content"][0]["text"]
    assert any(e.status == "retry" for e in h.of("session.status"))
    assert "sk-test-key-789" not in h.ws.store_path.read_bytes().decode(errors="replace")


async def test_openai_tool_call_round_trip_through_the_loop(make, wire):
    h = on_wire(make, wire, "openai")
    wire.queue(openai_stream(calls=[{"id": "call_1", "name": "grep", "args": json.dumps({"pattern": "def mean"})}]),
               openai_failure(500, "server_error"),
               openai_stream("Found it in stats.py."))
    final = await h.prompt("Find the mean")
    assert final.finish == "stop"
    tool_message = next(m for r in wire.received for m in r.body.get("messages", []) if m["role"] == "tool")
    assert tool_message["tool_call_id"] == "call_1" and "def mean" in tool_message["content"]


async def test_an_auth_failure_ends_the_run_with_a_clear_error(make, wire):
    h = on_wire(make, wire, "anthropic")
    wire.queue(anthropic_failure(401, "authentication_error", "invalid x-api-key"))
    final = await h.prompt("hi")
    assert final.error.kind == "auth" and "api_key" in final.error.message
    assert len(wire.received) == 1


async def test_stop_during_a_real_stream_ends_within_half_a_second(make, wire):
    import asyncio
    import time

    from tests.provider.wire import Stream

    h = on_wire(make, wire, "anthropic")
    slow = anthropic_stream({"text": "A very long answer, word by word. " * 20})
    wire.queue(Stream(slow.events, delay_s=0.05), anthropic_stream({"text": "Title"}))
    run = asyncio.create_task(h.prompt("Explain everything"))
    while len(h.parts("text")) < 2:
        await asyncio.sleep(0.02)
    started = time.monotonic()
    h.ws.abort(h.session.id)
    final = await run
    assert time.monotonic() - started < 0.5
    assert final.finish == "aborted" and h.parts("text")[1].text.startswith("A ver")


async def test_thinking_is_stored_as_reasoning_and_sent_back_with_its_signature(make, wire):
    h = on_wire(make, wire, "anthropic", agent={"build": {"options": {"thinking": {"budget_tokens": 2048}}}})
    wire.queue(anthropic_stream({"thinking": "The mean looks off.", "signature": "sig-xyz"},
                                {"tool": "read", "id": "toolu_1", "json": json.dumps({"path": "stats.py"})},
                                stop="tool_use"),
               anthropic_stream({"text": "It divides by n - 1."}))
    await h.prompt("why?")
    [reasoning] = h.parts("reasoning")
    assert reasoning.text == "The mean looks off." and reasoning.metadata == {"signature": "sig-xyz"}
    sent = after_first_step(wire)[1]["content"][0]
    assert sent == {"type": "thinking", "thinking": "The mean looks off.", "signature": "sig-xyz"}


@pytest.mark.parametrize("redacting", [True, False], ids=["redacted", "control"])
async def test_secrets_in_the_system_prompt_never_reach_the_wire(make, wire, tmp_path, monkeypatch, redacting):
    """Every system block passes redaction: an agent prompt quoting the API key, and an instruction file that is a
    `.env` outside the project (its values learnt as it is read), reach the real SDK's request only redacted. The
    control sends requests as assembled, and the secrets are on the wire."""
    if not redacting:
        monkeypatch.setattr(system_prompt, "outgoing", lambda request: request)
    secret_file = tmp_path / "h0" / "deploy" / ".env"  # beside the harness's project, in its $HOME
    secret_file.parent.mkdir(parents=True)
    secret_file.write_text("DEPLOY_TOKEN=tok-7f3a9c1e5b2d4f6a8e0c\n")
    h = on_wire(make, wire, "anthropic", agent={"build": {"prompt": "Sign requests with sk-test-key-789."}},
                instructions=[str(secret_file)])
    wire.queue(anthropic_stream({"text": "Done."}))
    await h.prompt("hi")
    [request] = [r for r in wire.received if r.body.get("system")]
    system = json.dumps(request.body["system"])
    assert "Sign requests with" in system and "DEPLOY_TOKEN" in system  # the blocks are there
    if not redacting:
        assert "sk-test-key-789" in system and "tok-7f3a9c1e5b2d4f6a8e0c" in system
        return
    assert "sk-test-key-789" not in system and "tok-7f3a9c1e5b2d4f6a8e0c" not in system
    assert "[redacted:" in system
