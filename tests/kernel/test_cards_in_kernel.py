"""Tool cards in a real kernel: live in the widgets, in the transcript a finished cell keeps, and in
`%agent show`, a card says how its call really ended."""

from __future__ import annotations

from typing import Any

from .frontend import FakeFrontend

NO_KEY_EXPLORE = {"agent": {"explore": {"model": "anthropic/claude-sonnet-4-5"}}}
NO_KEY = {"ANTHROPIC_API_KEY": ""}
SURVEY = {"tool_calls": [{"name": "task", "input": {"description": "Survey", "prompt": "look around",
                                                    "subagent_type": "explore"}}]}


def live_cards(fe: FakeFrontend) -> list[str]:
    """The HTML of every tool card widget the kernel opened, as the front end holds it now."""
    with fe._lock:
        return [str(s.get("value", "")) for s in fe.models.values()
                if s.get("_model_name") == "HTMLModel" and 'class="ocnb-tool ' in str(s.get("value", ""))]


def child_titles(fe: FakeFrontend) -> list[Any]:
    with fe._lock:
        return [s.get("titles") for s in fe.models.values() if s.get("_model_name") == "AccordionModel"]


def test_a_task_whose_subagent_cannot_start_ends_as_an_error_everywhere(kernel):
    fe = kernel([SURVEY, {"text": "Explore could not run; I looked myself."}], permission={"*": "allow"},
                extra=NO_KEY_EXPLORE, env=NO_KEY)
    msg = fe.execute("%%agent\nsurvey the project")
    assert fe.done(msg, 60)["content"]["status"] == "ok"
    [card] = live_cards(fe)
    assert 'class="ocnb-tool ocnb-error"' in card and "No API key for anthropic" in card and "running" not in card
    assert child_titles(fe) == [["@explore — Survey · 0 tools, failed"]]
    saved = fe.html(msg)
    assert "ocnb-tool ocnb-error" in saved and "ocnb-running" not in saved and "0 tools, failed" in saved
    assert "Traceback" not in fe.text(msg)
    show = fe.text(fe.run_id("%agent show"))
    assert "✗ task Survey" in show and "0 tools, failed" in show and "▸" not in show


def test_an_agent_mention_whose_subagent_cannot_start_does_not_leave_its_card_running(kernel):
    fe = kernel([{"text": "Explore could not run; the mean is in stats.py."}], permission={"*": "allow"},
                extra=NO_KEY_EXPLORE, env=NO_KEY)
    msg = fe.execute("%%agent\n@explore where is the mean computed?")
    assert fe.done(msg, 60)["content"]["status"] == "ok"
    assert all("ocnb-running" not in card for card in live_cards(fe))
    saved = fe.html(msg)
    assert "ocnb-tool ocnb-error" in saved and "ocnb-running" not in saved
    assert "the mean is in stats.py" in saved, "the primary read the failure and answered"
    show = fe.text(fe.run_id("%agent show"))
    assert "✗ task" in show and "▸ task" not in show


def test_a_task_card_shows_the_answer_and_never_the_block_meant_for_the_model(kernel):
    fe = kernel([SURVEY, {"text": "One file: a.py."}, {"text": "Surveyed."}], permission={"*": "allow"})
    msg = fe.execute("%%agent\nsurvey the project")
    assert fe.done(msg, 60)["content"]["status"] == "ok"
    assert all("task_metadata" not in card for card in live_cards(fe))
    assert "One file: a.py." in fe.html(msg) and "task_metadata" not in fe.html(msg)
    show = fe.run_id("%agent show")
    assert "task_metadata" not in fe.text(show) and "task_metadata" not in fe.html(show)


def test_a_command_that_exits_non_zero_is_shown_failed_with_its_exit_code(kernel):
    fe = kernel([{"tool_calls": [{"name": "bash", "input": {"command": "echo broken; exit 3"}}]},
                 {"text": "The command failed with exit code 3."}], permission={"*": "allow"})
    msg = fe.execute("%%agent\nrun it")
    assert fe.done(msg, 60)["content"]["status"] == "ok"
    [card] = live_cards(fe)
    assert "ocnb-tool ocnb-failed" in card and "✗ exit 3" in card and "✓" not in card and "broken" in card
    saved = fe.html(msg)
    assert "ocnb-tool ocnb-failed" in saved and "✗ exit 3" in saved
    assert "✗ bash echo broken; exit 3  (exit 3," in fe.text(msg)
