"""The demo model reads the session's history as a person would be told it: a failed subagent's result names
its child session for the model, and the demo's answer leaves that id out."""

from __future__ import annotations

from pathlib import Path

from opencode_nb import Workspace
from opencode_nb.demo import DEMO_PERMISSIONS
from opencode_nb.demo.scratch import copy_sample
from opencode_nb.provider.builtin import WEATHER_PROMPT
from opencode_nb.provider.builtin.history import first_line
from opencode_nb.views.render import error_text


def test_a_first_line_leaves_out_the_child_session_id_a_failed_task_names_for_the_model():
    said = "Task failed: No API key for anthropic. Set ANTHROPIC_API_KEY. (session_id: ses_1a2b3cXYZ)\nmore"
    assert first_line(said) == "Task failed: No API key for anthropic. Set ANTHROPIC_API_KEY."
    assert first_line("plain line\nsecond") == "plain line"


async def test_a_survey_that_cannot_run_leaves_the_session_id_out_of_the_answer_and_the_card(tmp_path: Path):
    project = copy_sample(tmp_path)
    ws = Workspace(project, {"model": "scripted/demo", "permission": DEMO_PERMISSIONS,
                             "agent": {"explore": {"model": "anthropic/claude-sonnet-4-5"}}},
                   data_dir=tmp_path / "data", env={"OPENCODE_NB_PERMISSION": "allow", "ANTHROPIC_API_KEY": ""})
    session = ws.sessions.create(str(project))
    result = await ws.prompt(session.id, WEATHER_PROMPT)
    assert result.text.startswith("I stop here: the survey could not run (Task failed:")
    assert "session_id" not in result.text and "ses_" not in result.text
    [task] = [p for m in ws.sessions.messages(session.id) for p in m.parts if getattr(p, "tool", "") == "task"]
    assert "(session_id: ses_" in task.state.error, "the model still reads the id, to continue the task"
    shown = error_text(task)
    assert shown.rstrip().endswith("--model scripted/demo") and "session_id" not in shown, \
        "the card's suggestion of the demo model ends there"
    await ws.aclose()
