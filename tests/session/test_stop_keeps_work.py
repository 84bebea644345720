"""A stop keeps what a call ran and printed, and a session stopped in its first run still gets its title."""

from __future__ import annotations

import asyncio
import shutil

import pytest

from opencode_nb.session.title import DEFAULT_PREFIXES

SLOW = "for i in 1 2 3; do echo line$i; sleep 0.3; done; sleep 30"
MODES = ["off", pytest.param("required", marks=pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed"))]


async def stop_mid_command(h):
    h.script({"tool_calls": [{"name": "bash", "input": {"command": SLOW, "description": "Count to three slowly"}}]})
    run = asyncio.create_task(h.prompt("Count to three, slowly, then wait"))
    for _ in range(300):
        running = [p for p in h.tool_parts() if p.state.status == "running"]
        if running and "line1" in str(running[0].state.metadata.get("output", "")):
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError("the command's output never reached its part")
    assert h.ws.abort(h.session.id)
    return await run


@pytest.mark.parametrize("sandbox", MODES)
async def test_a_stopped_command_keeps_its_description_and_the_output_it_printed(make, sandbox):
    h = make({"sandbox": sandbox})
    final = await stop_mid_command(h)
    assert final.finish == "aborted"
    [tool] = h.tool_parts()
    state = tool.state
    assert state.status == "error"
    assert state.title == "Count to three slowly" and state.input["description"] == "Count to three slowly"
    assert "line1" in state.metadata["output"]
    assert "line3" not in state.metadata["output"]  # stopped before it printed the rest
    assert state.error == "Tool execution aborted"
    assert state.metadata["interrupted"] is True


@pytest.mark.parametrize("sandbox", MODES)
async def test_the_model_reads_the_partial_output_of_a_stopped_command(make, sandbox):
    h = make({"sandbox": sandbox})
    await stop_mid_command(h)
    h.script({"text": "Stopped, as asked."})
    await h.prompt("never mind")
    [result] = [b for m in h.step_requests()[-1].messages for b in m.content if getattr(b, "is_error", False)]
    assert "line1" in result.output and "stopped" in result.output.lower()


async def test_a_session_stopped_in_its_first_run_still_gets_a_title(h):
    await stop_mid_command(h)
    await h.ws.loop.titles.wait()
    title = h.ws.sessions.get(h.session.id).title
    assert not title.startswith(DEFAULT_PREFIXES) and "Count" in title
