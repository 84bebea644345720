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
