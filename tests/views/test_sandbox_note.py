"""A command that ran without an OS sandbox says so on its card, in one line, where the person looks."""

from __future__ import annotations

from opencode_nb.session.models import ToolCompleted, ToolPart
from opencode_nb.views.render import tool_card_html, tool_card_text

NOTE = "Shell commands run without an OS sandbox here: bubblewrap (bwrap) is not installed. <Install> it."


def card(**metadata):
    state = ToolCompleted(input={"command": "echo ok"}, output="ok\n\n(exit code 0)", title="echo ok",
                          started_at=1.0, ended_at=1.5, metadata={"command": "echo ok", "exit": 0, **metadata})
    return ToolPart(session_id="s", message_id="m", call_id="c", tool="bash", state=state)


def test_the_note_is_one_warning_line_under_the_cards_head_escaped():
    html = tool_card_html(card(sandbox="none", sandbox_note=NOTE))
    assert html.count('class="ocnb-sandbox-note"') == 1
    assert "⚠ Shell commands run without an OS sandbox here" in html and "&lt;Install&gt; it." in html
    assert html.index("ocnb-tool-head") < html.index("ocnb-sandbox-note") < html.index("(exit code 0)")


def test_the_plain_text_card_carries_the_note_on_its_own_line_before_the_output():
    lines = tool_card_text(card(sandbox="none", sandbox_note=NOTE)).splitlines()
    assert lines[0].startswith("✓ bash echo ok")
    assert lines[1] == f"    ! {NOTE}" and lines[2] == "    ok"


def test_a_card_without_the_note_has_no_notice_whatever_its_sandbox():
    for metadata in ({"sandbox": "none"}, {"sandbox": "bwrap"}, {"sandbox": "none", "sandbox_note": ""}):
        assert "ocnb-sandbox-note" not in tool_card_html(card(**metadata))
        assert "    !" not in tool_card_text(card(**metadata))
