"""Faults end to end: whatever breaks, the run ends with every part finished and a message that says why.

Providers are the real anthropic and openai SDKs talking to the loopback wire server, cut or stalled at
chosen points; a killed kernel is a real subprocess killed with SIGKILL; the new process is a new
`Workspace` on the same SQLite file.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from opencode_nb import Workspace
from opencode_nb.provider.retry import RetryPolicy
from opencode_nb.session.models import AssistantMessage, ToolPart
from opencode_nb.session.processor import CUT_SHORT
from opencode_nb.session.store import INTERRUPTED
from tests.provider.wire import Stream, anthropic_stream, openai_stream
from tests.session.conftest import Harness, on_wire

PROVIDERS = ["anthropic", "openai"]


def with_call(provider: str, args: str) -> Stream:
    """Some text, then a call to `read` with `args` as its JSON text."""
    if provider == "anthropic":
        return anthropic_stream({"text": "Reading it."}, {"tool": "read", "id": "toolu_1", "json": args},
                                stop="tool_use")
    return openai_stream("Reading it.", calls=[{"id": "call_1", "name": "read", "args": args}])


def answer(provider: str, text: str = "The mean divides by n - 1.") -> Stream:
    return anthropic_stream({"text": text}) if provider == "anthropic" else openai_stream(text)


def first_argument_fragment(stream: Stream) -> int:
    """Index of the first event carrying a non-empty piece of a call's arguments."""
    for i, (_, data) in enumerate(stream.events):
        if not isinstance(data, dict):
            continue
        delta = data.get("delta") or {}
        if delta.get("type") == "input_json_delta" and delta.get("partial_json"):
            return i
        for choice in data.get("choices") or []:
            for call in choice["delta"].get("tool_calls") or []:
                if call.get("function", {}).get("arguments"):
                    return i
    raise AssertionError("no argument fragment in the stream")


def unfinished(h: Harness) -> list[ToolPart]:
    return [p for p in h.tool_parts() if p.state.status in ("pending", "running")]


def answers(h: Harness) -> list[AssistantMessage]:
    return [m.message for m in h.ws.sessions.messages(h.session.id) if isinstance(m.message, AssistantMessage)]


# ------------------------------------------------------------------------------------- a stream cut mid-call


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_stream_cut_inside_a_tool_call_ends_that_call_as_an_error_and_the_retry_answers(make, wire, provider):
    h = on_wire(make, wire, provider)
    cut = with_call(provider, json.dumps({"path": "stats.py", "offset": 1}))
    cut.drop_after = first_argument_fragment(cut) + 1
    wire.queue(cut, answer(provider))
    final = await h.prompt("Why is the mean wrong?")
    assert final.finish == "stop" and final.error is None
    failed = answers(h)[0]
    assert failed.finish == "error" and failed.error.retryable and "connection" in failed.error.message
    [call] = h.tool_parts()
    assert call.state.status == "error" and call.state.error.startswith(CUT_SHORT)
    assert "connection" in call.state.error  # and says what failed
    assert not unfinished(h)
    retry = [e for e in h.of("session.status") if e.status == "retry"]
    assert retry and "connection" in retry[0].message  # what the person sees while it waits
    assert [p.text for p in h.parts("text")][1] == "Reading it."  # what streamed before the cut is kept


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_when_every_attempt_is_cut_the_run_ends_with_a_clear_retryable_error(make, wire, provider):
    h = on_wire(make, wire, provider)
    h.ws.loop.retry = RetryPolicy(max_attempts=2, base_s=0.01, cap_s=0.05)
    for _ in range(2):
        cut = with_call(provider, json.dumps({"path": "stats.py"}))
        cut.drop_after = first_argument_fragment(cut) + 1
        wire.queue(cut)
    final = await h.prompt("Why?")
    assert final.finish == "error" and final.error.retryable and "connection" in final.error.message
    assert [p.state.status for p in h.tool_parts()] == ["error", "error"] and not unfinished(h)
    assert [e.kind for e in h.of("session.error")] == ["provider"]
    assert h.of("session.status")[-1].status == "idle"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_stream_cut_mid_text_keeps_the_text_and_retries(make, wire, provider):
    h = on_wire(make, wire, provider)
    whole = answer(provider, "A long answer that will be cut somewhere in the middle.")
    wire.queue(Stream(whole.events, drop_after=8), answer(provider))
    final = await h.prompt("Explain")
    assert final.finish == "stop"
    cut_text = h.parts("text")[1]
    assert cut_text.text.startswith("A lo") and cut_text.ended_at is not None
    assert answers(h)[0].error.retryable


# ------------------------------------------------------------------------------------- a silent provider


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_provider_that_goes_silent_mid_call_is_given_up_after_the_idle_timeout(make, wire, provider):
    h = on_wire(make, wire, provider, {"idle_timeout_s": 0.3})
    stalled = with_call(provider, json.dumps({"path": "stats.py"}))
    stalled.stall_after = first_argument_fragment(stalled) + 1
    wire.queue(stalled, answer(provider))
    started = time.monotonic()
    final = await h.prompt("Why?")
    assert time.monotonic() - started < 10  # the SDK alone would have waited 600 s
    assert final.finish == "stop"
    failed = answers(h)[0]
    assert failed.error.retryable and "sent nothing for 0.3 s" in failed.error.message
    [call] = h.tool_parts()
    assert call.state.status == "error" and "sent nothing for 0.3 s" in call.state.error


# ------------------------------------------------------------------------------------- a killed kernel

CHILD = """
import asyncio, pathlib, sys
from pydantic import BaseModel
from opencode_nb import Workspace
from opencode_nb.provider import Scripted
from opencode_nb.tool.base import Tool, ToolResult

root, data, home, marker = sys.argv[1:5]

class Nothing(BaseModel):
    pass

class Hang(Tool[Nothing]):
    id = "hang"
    params = Nothing
    description = "Waits for a long time."

    async def execute(self, params, ctx):
        ctx.update(metadata={"output": "started, waiting"})
        pathlib.Path(marker).write_text(ctx.session_id)
        await asyncio.sleep(600)
        return ToolResult("hang", "never")

ws = Workspace(root, {"model": "scripted/demo"}, data_dir=data, env={"XDG_CONFIG_HOME": home, "HOME": home})
ws.tools.register(Hang())
ws.providers.register("scripted", Scripted([{"text": "Waiting on it.", "tool_calls": [{"name": "hang"}]}]))
asyncio.run(ws.prompt(ws.sessions.create().id, "wait for it"))
"""


def test_a_kernel_killed_mid_run_leaves_nothing_running_once_a_new_process_opens_the_store(tmp_path):
    root, data, home = tmp_path / "proj", tmp_path / "data", tmp_path / "home"
    (root / ".git").mkdir(parents=True)
    home.mkdir()
    marker = tmp_path / "started"
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(CHILD))
    child = subprocess.Popen([sys.executable, str(script), str(root), str(data), str(home), str(marker)],
                             stderr=subprocess.PIPE)

    def workspace() -> Workspace:
        return Workspace(root, {"model": "scripted/demo"}, data_dir=data, env={"XDG_CONFIG_HOME": str(home),
                                                                              "HOME": str(home)})

    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
            assert time.monotonic() < deadline, "the child never started its tool"
            time.sleep(0.05)
        session_id = marker.read_text()
        with workspace() as other_kernel:  # the child is alive: its run is not a leftover
            [_, running] = other_kernel.sessions.messages(session_id)
            assert running.message.completed_at is None
            assert [p.state.status for p in running.parts if isinstance(p, ToolPart)] == ["running"]
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(30)
        if child.stderr:
            child.stderr.close()
    assert child.returncode == -signal.SIGKILL

    with workspace() as ws:
        [_, killed] = ws.sessions.messages(session_id)
        message = killed.message
        assert message.finish == "aborted" and message.completed_at is not None
        assert message.error.kind == "aborted" and INTERRUPTED in message.error.message
        [call] = [p for p in killed.parts if isinstance(p, ToolPart)]
        assert call.state.status == "error" and INTERRUPTED in call.state.error
        assert call.state.metadata["output"] == "started, waiting"
        assert [p.text for p in killed.parts if p.type == "text"] == ["Waiting on it."]

        # The session carries on, and the model reads the interrupted call as an error result.
        from opencode_nb.provider import Scripted

        model = Scripted([{"text": "It was interrupted; shall I retry?"}])
        ws.providers.register("scripted", model)
        result = asyncio.run(ws.prompt(session_id, "what happened?"))
        assert result.text == "It was interrupted; shall I retry?"
        # (the session's title may be asked for too, from this prompt, since the interrupted one got no answer)
        [answered] = [r for r in model.requests if any(m.role == "tool" for m in r.messages)]
        [sent] = [b for m in answered.messages if m.role == "tool" for b in m.content]
        assert sent.is_error and INTERRUPTED in sent.output and "started, waiting" in sent.output


async def test_a_second_workspace_on_the_same_store_never_finalises_a_live_run(make):
    from tests.session.test_loop import NapTool

    h = make()
    nap = NapTool()
    h.ws.tools.register(nap)
    h.script({"tool_calls": [{"name": "nap", "input": {"seconds": 0.5}}]}, {"text": "rested"})
    run = asyncio.create_task(h.prompt())
    while not [p for p in h.tool_parts() if p.state.status == "running"]:
        await asyncio.sleep(0.01)
    second = Workspace(h.root, {"model": "scripted/demo"}, data_dir=h.ws.data_dir, env=h.ws.env)
    try:
        assert [p.state.status for m in second.sessions.messages(h.session.id) for p in m.parts
                if isinstance(p, ToolPart)] == ["running"]
    finally:
        second.close()
    final = await run
    assert final.finish == "stop" and [p.state.status for p in h.tool_parts()] == ["completed"]


# ------------------------------------------------------------------------------------- a stopped run, a bug


async def test_a_provider_bug_mid_call_ends_the_step_as_an_error_with_no_call_left_running(make):
    from opencode_nb.provider.events import TextDelta, ToolCallStart

    class Broken:
        async def stream(self, request):
            if request.purpose == "title":
                raise RuntimeError("no titles here")
            yield TextDelta(text="Let me")
            yield ToolCallStart(id="c1", name="read")
            raise RuntimeError("the provider module has a bug")

    h = make({"small_model": "scripted/demo", "model": "broken/x", "provider": {"broken": {"type": "scripted"}}})
    h.ws.providers.register("broken", Broken())
    with pytest.raises(RuntimeError):
        await h.prompt()
    [message] = answers(h)
    assert message.finish == "error" and message.error.kind == "unknown" and "has a bug" in message.error.message
    [call] = h.tool_parts()
    assert call.state.status == "error" and "the step failed" in call.state.error

