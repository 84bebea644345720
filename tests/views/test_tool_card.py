"""A finished live python run that bound names carries an Undo button; clicking it undoes that run once."""

from __future__ import annotations

from opencode_nb.session.models import ToolCompleted, ToolPart
from opencode_nb.views.tool_card import ToolCardView


def python_part(mode: str = "live", created: list[str] | None = None) -> ToolPart:
    run = {"mode": mode, "run_id": "run_1", "changes": {"created": created or [], "rebound": [], "deleted": []}}
    return ToolPart(session_id="s", message_id="m", call_id="c", tool="python",
                    state=ToolCompleted(input={"code": "x = 1"}, output="ok", title="x = 1", metadata={"run": run},
                                        started_at=0.0))


def test_the_undo_button_undoes_its_run_once_and_says_what_happened():
    undone = []
    card = ToolCardView(python_part(created=["x"]), undo=lambda run_id: undone.append(run_id) or "Undone: removed x.")
    card.flush()
    assert card.undo_button is not None
    card.undo_button.click()
    card.undo_button.click()
    assert undone == ["run_1"] and card.undo_button.disabled
    assert "Undone: removed x." in card.widget.children[-1].children[1].value


def test_sandboxed_runs_and_runs_that_bound_nothing_have_no_undo():
    for part in (python_part(mode="fork", created=["x"]), python_part(created=[])):
        card = ToolCardView(part, undo=lambda run_id: "")
        card.flush()
        assert card.undo_button is None


def test_a_proposed_cell_change_shows_its_diff_then_the_lines_that_decide_it():
    from opencode_nb.views.render import tool_card_html, tool_card_text

    metadata = {"diff": "--- cell c0\n+++ cell c0\n-x = 1\n+x = 2\n", "decide": ["%agent accept 1", "%agent reject 1"],
                "summary": "Proposed change 1 to cell [c0]: waiting for you to accept or reject it",
                "person_output": ""}
    part = ToolPart(session_id="s", message_id="m", call_id="c", tool="notebook_edit",
                    state=ToolCompleted(input={"action": "replace"}, output="Proposed change 1.",
                                        title="replace [c0] · change 1 pending", metadata=metadata,
                                        started_at=1.0, ended_at=2.0))
    html = tool_card_html(part, 3.0)
    assert html.index("+x = 2") < html.index("%agent accept 1") < html.index("%agent reject 1")
    text = tool_card_text(part)
    assert text.splitlines()[-3:] == ["    Proposed change 1 to cell [c0]: waiting for you to accept or reject it",
                                      "    %agent accept 1", "    %agent reject 1"]
