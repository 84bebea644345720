"""A stopped call's card keeps what it ran and printed: live, and in the transcript a notebook saves."""

from __future__ import annotations

import asyncio
import shutil

import pytest

from opencode_nb.session.models import ToolErrored, ToolPart
from opencode_nb.views.render import STOPPED_NOTE, tool_card_html, tool_card_text
from opencode_nb.views.tool_card import ToolCardView
from opencode_nb.views.transcript import transcript_bundle
from tests.session.conftest import Harness

SLOW = "for i in 1 2 3; do echo line$i; sleep 0.3; done; sleep 30"


def stopped(output: str, **extra) -> ToolPart:
    state = ToolErrored(input={"command": SLOW, "description": "Count to three slowly"}, error="Tool execution aborted",
                        title="Count to three slowly", metadata={"output": output, "interrupted": True, **extra},
                        started_at=1.0, ended_at=2.0)
    return ToolPart(session_id="s", message_id="m", call_id="c", tool="bash", state=state)


def test_the_live_card_of_a_stopped_command_shows_its_description_output_and_the_stop():
    card = ToolCardView(stopped("line1\nline2\n"))
    card.flush(now=3.0)
    html = card.html.value
    assert "Count to three slowly" in html and "line1\nline2" in html and STOPPED_NOTE in html
    assert "output so far (2 lines)" in html and "Tool execution aborted" not in html


def test_the_text_card_of_a_stopped_command_ends_with_the_last_lines_it_printed_and_the_stop():
    text = tool_card_text(stopped("".join(f"line{i}\n" for i in range(1, 21))), output_lines=3)
    rows = text.splitlines()
    assert rows[0].startswith("✗ bash Count to three slowly")
    assert rows[1:] == ["    … 17 earlier lines", "    line18", "    line19", "    line20", f"    {STOPPED_NOTE}"]


def test_a_long_partial_output_is_bounded_from_its_end():
    html = tool_card_html(stopped("".join(f"row {i}\n" for i in range(5000))))
    assert "row 4999" in html and "row 10\n" not in html and "earlier lines" in html


def test_a_call_stopped_before_it_printed_says_so_without_an_empty_output():
    html = tool_card_html(stopped(""))
    assert "output so far" not in html and "Stopped before it finished." in html


def test_an_error_that_is_not_a_stop_still_shows_the_tools_own_message():
    part = stopped("partial\n").model_copy(update={"state": ToolErrored(
        input={"command": "x"}, error="The command could not start.", metadata={"output": "partial\n"},
        started_at=1.0)})
    html = tool_card_html(part)
    assert "partial" in html and "The command could not start." in html and STOPPED_NOTE not in html


@pytest.mark.parametrize("sandbox", ["off", pytest.param("required", marks=pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed"))])
async def test_the_saved_transcript_of_a_stopped_run_keeps_the_commands_output(tmp_path, sandbox):
    h = Harness(tmp_path, {"sandbox": sandbox})
    try:
        h.script({"tool_calls": [{"name": "bash", "input": {"command": SLOW, "description": "Count slowly"}}]})
        run = asyncio.create_task(h.prompt("Count to three"))
        for _ in range(300):
            if any("line1" in str(getattr(p.state, "metadata", {}).get("output", "")) for p in h.tool_parts()):
                break
            await asyncio.sleep(0.02)
        h.ws.abort(h.session.id)
        await run
        bundle = transcript_bundle(h.ws, h.session.id)
        html, text = bundle["text/html"], bundle["text/plain"]
        assert "Count slowly" in html and "line1" in html and STOPPED_NOTE in html
        assert "Count slowly" in text and "line1" in text and STOPPED_NOTE in text
    finally:
        h.ws.close()
