"""Rendering is pure: the same HTML for the live card and the saved transcript, and no raw model HTML."""

from __future__ import annotations

from opencode_nb.permission.events import PermissionRequest
from opencode_nb.session.models import TextPart, ToolCompleted, ToolErrored, ToolPart, ToolRunning
from opencode_nb.views.asks import always_note, permission_html
from opencode_nb.views.render import text_html, tool_card_html, tool_card_text


def part(state):
    return ToolPart(session_id="s", message_id="m", call_id="c", tool="edit", state=state)


def test_model_html_is_escaped_not_rendered():
    html = text_html(TextPart(session_id="s", message_id="m", text="**bold** <script>alert(1)</script>"))
    assert "<strong>bold</strong>" in html and "<script>" not in html and "alert(1)" in html


def test_a_completed_edit_shows_its_diff_and_collapsible_output():
    state = ToolCompleted(input={"path": "a.py"}, output="Edited a.py", title="a.py", started_at=1.0, ended_at=2.5,
                          metadata={"diff": "--- a.py\n+++ a.py\n-x = 1\n+x = 2\n"})
    html = tool_card_html(part(state))
    assert "✓ 1.5s" in html and "<details>" in html and "+x = 2" in html and "rgba(67,160,71" in html
    assert tool_card_text(part(state)).startswith("✓ edit a.py  (1.5s)")


def test_a_running_bash_card_shows_the_tail_of_its_output():
    state = ToolRunning(input={"command": "make"}, title="make", started_at=10.0,
                        metadata={"output": "\n".join(f"line {i}" for i in range(100))})
    card = ToolPart(session_id="s", message_id="m", call_id="c", tool="bash", state=state)
    html = tool_card_html(card, now=13.0)
    assert "running 3s" in html and "line 99" in html and "line 50" not in html


def test_images_a_tool_returns_are_shown_inline():
    from opencode_nb.session.models import Attachment

    state = ToolCompleted(input={"path": "plot.png"}, output="Image read", title="plot.png", started_at=1.0,
                          ended_at=1.2, attachments=[Attachment(mime="image/png", url="data:image/png;base64,iVBOR")])
    assert '<img src="data:image/png;base64,iVBOR"' in tool_card_html(part(state))


def test_a_running_card_changes_once_a_second_not_on_every_flush():
    state = ToolRunning(input={"command": "make"}, title="make", started_at=10.0)
    card = ToolPart(session_id="s", message_id="m", call_id="c", tool="bash", state=state)
    assert tool_card_html(card, now=12.1) == tool_card_html(card, now=12.9) != tool_card_html(card, now=13.0)


def test_an_error_card_shows_the_message():
    state = ToolErrored(input={"path": "x"}, error="File not found: x", started_at=1.0, ended_at=1.1)
    assert "File not found: x" in tool_card_html(part(state)) and "✗" in tool_card_html(part(state))


def test_the_permission_prompt_names_agent_patterns_and_what_always_covers():
    request = PermissionRequest(id="p", session_id="s", agent="explore", permission="bash",
                                patterns=["npm test -- --watch"], always=["npm test *"])
    html = permission_html(request)
    assert "explore" in html and "npm test -- --watch" in html
    assert always_note(request) == "bash npm test * by explore in this session"


def test_a_child_section_title_says_who_what_how_many_and_what_runs_now():
    from opencode_nb.views.run_frame import child_title

    tools = [{"tool": "glob", "status": "completed", "title": "*"},
             {"tool": "grep", "status": "running", "title": "def mean"}]
    assert child_title("explore", "Survey", tools, "running") == "@explore — Survey · 2 tools, running: grep def mean"
    assert child_title("explore", "Survey", tools[:1], "done") == "@explore — Survey · 1 tool, done"


def test_python_code_is_shown_highlighted_in_its_prompt_and_card():
    from opencode_nb.permission.events import PermissionRequest
    from opencode_nb.session.models import ToolCompleted, ToolPart
    from opencode_nb.views.asks import permission_html
    from opencode_nb.views.render import tool_card_html

    request = PermissionRequest(id="p", session_id="s", agent="build", permission="python", patterns=["live"],
                                metadata={"code": "clean = df.dropna()  # <tidy>"})
    html = permission_html(request)
    assert 'class="ocnb-code"' in html and "dropna" in html and "&lt;tidy&gt;" in html and "<span" in html
    part = ToolPart(session_id="s", message_id="m", call_id="c", tool="python",
                    state=ToolCompleted(input={"code": "x = 1"}, output="ok", title="x", started_at=0.0))
    assert "<summary>code</summary>" in tool_card_html(part)


def test_a_text_within_the_limits_is_not_clipped_whatever_its_last_line_break():
    from opencode_nb.views.render import clip

    assert clip("--- a.py\n+++ a.py\n-x = 1\n+x = 2\n") == "--- a.py\n+++ a.py\n-x = 1\n+x = 2"
    assert clip("one\r\ntwo\r\n") == "one\r\ntwo"
    assert "more" not in clip("x\n" * 400)


def test_a_clipped_text_counts_exactly_what_it_left_out():
    from opencode_nb.views.render import clip

    assert clip("1\n2\n3\n4\n", lines=2) == "1\n2\n… 2 more lines"
    assert clip("1\n2\n3", lines=2) == "1\n2\n… 1 more line"
    assert clip("abcdef\n", chars=4) == "abcd\n… 2 more characters"
    assert clip("abcde", chars=4) == "abcd\n… 1 more character"


def test_a_diff_under_an_edit_card_says_nothing_was_cut_when_nothing_was():
    state = ToolCompleted(input={"path": "a.py"}, output="Edited a.py", title="a.py", started_at=1.0, ended_at=2.5,
                          metadata={"diff": "--- a.py\n+++ a.py\n-x = 1\n+x = 2\n"})
    assert "more character" not in tool_card_html(part(state))


def bash_card(**metadata):
    state = ToolCompleted(input={"command": "pytest -q"}, output="1 failed\n\n(exit code 1)", title="Run the tests",
                          started_at=1.0, ended_at=3.0, metadata={"command": "pytest -q", **metadata})
    return ToolPart(session_id="s", message_id="m", call_id="c", tool="bash", state=state)


def test_a_command_that_exits_non_zero_is_shown_failed_with_its_exit_code():
    html = tool_card_html(bash_card(exit=1, timed_out=False))
    assert "✗ exit 1 2.0s" in html and "✓" not in html
    assert 'class="ocnb-tool ocnb-failed"' in html and "border-left:3px solid #e53935" in html
    assert "1 failed" in html, "the output is still there to read"
    assert tool_card_text(bash_card(exit=1, timed_out=False)).startswith("✗ bash Run the tests  (exit 1, 2.0s)")


def test_a_command_stopped_at_its_timeout_is_shown_failed():
    assert "✗ timed out 2.0s" in tool_card_html(bash_card(exit=None, timed_out=True))
    assert tool_card_text(bash_card(exit=None, timed_out=True)).startswith("✗ bash Run the tests  (timed out, 2.0s)")


def test_a_command_that_succeeds_keeps_its_tick():
    html = tool_card_html(bash_card(exit=0, timed_out=False))
    assert "✓ 2.0s" in html and 'class="ocnb-tool ocnb-completed"' in html and "exit 0" not in html
    assert tool_card_text(bash_card(exit=0, timed_out=False)).startswith("✓ bash Run the tests  (2.0s)")


def test_a_command_killed_by_a_signal_says_which():
    assert "✗ killed by signal 9 2.0s" in tool_card_html(bash_card(exit=-9, timed_out=False))


def test_a_sandboxed_python_card_says_how_the_os_confined_it_and_warns_when_nothing_did():
    def card(confinement: str | None) -> str:
        run = {"mode": "fork", "confinement": confinement}
        state = ToolCompleted(input={"code": "df.x.sum()"}, output="3", title="sum", started_at=0.0,
                              metadata={"run": run})
        return tool_card_html(ToolPart(session_id="s", message_id="m", call_id="c", tool="python", state=state))

    confined = card("confined by the OS (namespaces + seccomp)")
    assert "🔒 sandbox confined by the OS (namespaces + seccomp)" in confined and "ocnb-unconfined" not in confined
    loose = card("isolated at the Python level only")
    assert "⚠ sandbox isolated at the Python level only" in loose and "ocnb-unconfined" in loose
    assert "sandbox" not in card(None).split("</details>")[-1]  # a live run says nothing of a sandbox
