"""In a real kernel, a finished cell shows the state its run ended in: a plain Reject closes the run with a
sentence and a "rejected" header, and an item a failed subagent left in progress stops spinning, in the live
widgets and in the transcript the cell keeps."""

from __future__ import annotations

from .frontend import FakeFrontend

TODO = {"name": "todowrite", "input": {"todos": [{"content": "Survey the project", "status": "in_progress",
                                                  "priority": "high"}]}}


def live_html(fe: FakeFrontend, css_class: str) -> list[str]:
    """The HTML widgets the kernel opened that carry `css_class`, as the front end holds them now."""
    with fe._lock:
        return [str(s.get("value", "")) for s in fe.models.values()
                if s.get("_model_name") == "HTMLModel" and f'class="{css_class}' in str(s.get("value", ""))]


def test_a_plain_reject_ends_the_cell_as_rejected_with_a_closing_sentence(kernel):
    fe = kernel([{"text": "Looking.", "tool_calls": [TODO, {"name": "bash", "input": {"command": "echo hi",
                                                                                      "description": "Say hi"}}]},
                 {"text": "Never reached."}])
    msg = fe.execute("%%agent\nsay hi")
    fe.click(fe.wait_button("Reject"))
    assert fe.done(msg, 60)["content"]["status"] == "ok", "the person's refusal is not a failure of the cell"
    html, text = fe.html(msg), fe.text(msg)
    assert ">rejected</span>" in html and "ocnb-status-done" not in html
    assert "Stopped by your reply: you rejected the bash call" in html and "Never reached." not in html
    assert " · rejected · " in text.splitlines()[0] and "Reject with feedback" in text
    assert "◐" not in html and "[ ] Survey the project (ended by a refusal)" in text
    [header] = live_html(fe, "ocnb-header")
    assert ">rejected</span>" in header, "the live header said so too before the transcript replaced it"
    assert all("◐" not in todo for todo in live_html(fe, "ocnb-todos"))


def test_after_a_subagent_failed_no_item_is_left_spinning(kernel):
    fe = kernel([{"text": "Surveying.", "tool_calls": [TODO, {"name": "task", "input": {
        "description": "Survey the project", "prompt": "look around", "subagent_type": "explore"}}]},
                 {"text": "The survey could not run, so I stop here."}], permission={"*": "allow"},
                extra={"agent": {"explore": {"model": "anthropic/claude-sonnet-4-5"}}}, env={"ANTHROPIC_API_KEY": ""})
    msg = fe.execute("%%agent\nsurvey the project")
    assert fe.done(msg, 60)["content"]["status"] == "ok"
    html = fe.html(msg)
    assert "◐" not in html and "Survey the project" in html and "unfinished when the run ended" in html
    assert "0 tools, failed" in html and ">done</span>" in html
    todos = live_html(fe, "ocnb-todos")
    assert todos and all("◐" not in todo for todo in todos)
    assert "session_id" not in html, "the failed task's card says what happened, not the id the model reads"
