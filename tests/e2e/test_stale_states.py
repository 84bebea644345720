"""Every header, todo and card in a real JupyterLab shows the state its run ended in: a plan step a person
refused is not "done", a ticked last step and a failed subagent leave nothing spinning, a plain Reject closes
its run with a sentence that says so, and a stop mid-command keeps what the command printed.

Runs wait on something the test controls (an ask, a long `sleep` it stops), never on a guessed delay.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from opencode_nb.views.colors import HUES

from .lab import Lab

pytestmark = pytest.mark.e2e

STALE = ("◐", "fa-spin", "ocnb-running", "ocnb-status-running", "ocnb-status-done")
"""What a finished cell that did not end well must not show: a spinning todo or card, a running or done header."""

PLAN = """# Check the greeting

Goal: a greeting on the console.

1. Print the greeting with `echo`.
"""
SETUP = """from opencode_nb.kernel import current
_ws = current().workspace()
_plan = _ws.sessions.create()
_ws.sessions.update(_plan, slug={slug!r})
"""


@pytest.fixture(scope="module")
def lab_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A private store, and no Anthropic key: a subagent given an Anthropic model cannot start."""
    return {"OPENCODE_NB_DATA_DIR": str(tmp_path_factory.mktemp("ocnb-data")), "ANTHROPIC_API_KEY": ""}


def configure(lab: Lab, script: list[dict[str, Any]], *, permission: Any = None, **extra: Any) -> None:
    (lab.root / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "scripted/e2e", "permission": permission or {"bash": "ask", "sleep *": "allow"},
        "provider": {"scripted": {"script": script}}, **extra}))


def plan_notebook(lab: Lab, name: str, slug: str) -> None:
    """A plan of one step, its session, and the step's cell (as approving a plan saves it)."""
    plans = lab.root / ".opencode" / "plans"
    plans.mkdir(parents=True, exist_ok=True)
    (plans / f"{slug}.md").write_text(PLAN)
    lab.write_notebook(name, ["%load_ext opencode_nb", SETUP.format(slug=slug),
                              f"%%agent --plan {slug} --step 1\nPrint the greeting with `echo`."])


def output_html(lab: Lab, index: int) -> str:
    return lab.cell(index).locator(".jp-Cell-outputWrapper").first.inner_html()


def status_of(lab: Lab, index: int) -> Any:
    """The run's state in the header of the cell's transcript."""
    return lab.cell(index).locator(".ocnb-transcript .ocnb-header .ocnb-status").first


def test_a_plan_step_whose_call_is_refused_is_not_done_and_its_header_says_so_in_red(lab: Lab) -> None:
    configure(lab, [{"text": "Greeting.", "tool_calls": [{"name": "bash", "input": {
        "command": "echo hello", "description": "Print the greeting"}}]}, {"text": "Never reached."}])
    plan_notebook(lab, "refused_step.ipynb", "e2e-refused")
    nb = lab.open_notebook("refused_step.ipynb")
    for index in (0, 1):
        lab.run_cell(index)
        lab.wait_cell_done(index)
    lab.run_cell(2, key="Control+Enter")
    nb.locator("button.jupyter-button", has_text="Reject").first.wait_for(timeout=30_000)
    nb.locator("button.jupyter-button", has_text="Reject").first.click()

    lab.wait_cell_done(2)
    lab.wait_output(2, "did not finish")
    status = status_of(lab, 2)
    status.wait_for(timeout=30_000)
    assert status.inner_text() == "rejected"
    assert HUES["error"] in (status.get_attribute("style") or ""), "a refused step reads red, as a stop does"
    html = output_html(lab, 2)
    assert "Stopped by your reply" in html
    assert not [s for s in STALE if s in html], html
    assert "☐" in html and "☑" not in html, "the step is back to not done on the todo list, not ticked"


def test_the_last_step_ticked_and_a_failed_subagent_leave_nothing_in_progress(lab: Lab) -> None:
    configure(lab, [
        {"text": "Greeting.", "tool_calls": [{"name": "bash", "input": {"command": "echo hello",
                                                                        "description": "Print the greeting"}}]},
        {"text": "Step 1 done: it printed hello."},
        {"text": "Surveying.", "tool_calls": [
            {"name": "todowrite", "input": {"todos": [{"content": "Survey the **project**", "status": "in_progress",
                                                       "priority": "high"}]}},
            {"name": "task", "input": {"description": "Survey the project", "prompt": "Look around.",
                                       "subagent_type": "explore"}}]},
        {"text": "The survey could not run, so I stop here."}],
        agent={"explore": {"model": "anthropic/claude-sonnet-4-5"}})
    plan_notebook(lab, "ticked.ipynb", "e2e-ticked")
    lab.write_notebook("ticked.ipynb", [
        "%load_ext opencode_nb", SETUP.format(slug="e2e-ticked"),
        "%%agent --plan e2e-ticked --step 1\nPrint the greeting with `echo`.",
        "%%agent --new\nSurvey the project, then fix it."])
    nb = lab.open_notebook("ticked.ipynb")
    for index in (0, 1):
        lab.run_cell(index)
        lab.wait_cell_done(index)
    lab.run_cell(2)
    allow = nb.locator("button.jupyter-button", has_text="Allow once").first
    allow.wait_for(timeout=30_000)
    allow.click()
    lab.wait_cell_done(2)
    lab.wait_output(2, "ticked in")
    step = output_html(lab, 2)
    assert "☑" in step and not [s for s in ("◐", "fa-spin", "ocnb-running") if s in step], step
    assert status_of(lab, 2).inner_text() == "done"

    lab.run_cell(3, key="Control+Enter")
    lab.wait_cell_done(3, timeout=60)
    lab.wait_output(3, "I stop here")
    survey = output_html(lab, 3)
    assert not [s for s in ("◐", "fa-spin", "ocnb-running") if s in survey], survey
    assert "Survey the <strong>project</strong>" in survey, "a todo's markdown renders inline"
    assert "unfinished when the run ended" in survey
    assert "0 tools, failed" in survey, "the child section says how its run ended"


def test_a_plain_reject_closes_its_run_with_a_sentence_and_a_header_that_is_not_done(lab: Lab) -> None:
    configure(lab, [{"text": "Let me look.", "tool_calls": [{"name": "bash", "input": {
        "command": "echo secret-plan", "description": "Look around"}}]}, {"text": "Never reached."}])
    lab.write_notebook("reject.ipynb", ["%load_ext opencode_nb", "%%agent\nLook around."])
    nb = lab.open_notebook("reject.ipynb")
    lab.run_cell(0)
    lab.wait_cell_done(0)
    lab.run_cell(1, key="Control+Enter")
    reject = nb.locator("button.jupyter-button", has_text="Reject").first
    reject.wait_for(timeout=30_000)
    reject.click()
    lab.wait_cell_done(1)
    lab.wait_output(1, "Stopped by your reply")
    assert status_of(lab, 1).inner_text() == "rejected"
    text = lab.output_text(1)
    assert "you rejected the bash call" in text and "Reject with feedback" in text
    assert "Never reached." not in text
    assert not [s for s in STALE if s in output_html(lab, 1)]


def test_a_stop_mid_command_keeps_the_cards_description_and_what_it_printed(lab: Lab) -> None:
    configure(lab, [{"text": "Working.", "tool_calls": [{"name": "bash", "input": {
        "command": "echo printed-before-the-stop; sleep 60", "description": "Print then wait"}}]},
        {"text": "Never reached."}], permission={"bash": "allow"})
    lab.write_notebook("stop_bash.ipynb", ["%load_ext opencode_nb", "%%agent\nPrint, then wait."])
    nb = lab.open_notebook("stop_bash.ipynb")
    lab.run_cell(0)
    lab.wait_cell_done(0)
    lab.run_cell(1, key="Control+Enter")
    cell = lab.cell(1)
    cell.locator(".ocnb-tool.ocnb-running", has_text="printed-before-the-stop").first.wait_for(timeout=30_000)
    cell.locator("button.jupyter-button", has_text="Stop").click()

    lab.wait_cell_done(1)
    card = cell.locator(".ocnb-transcript .ocnb-tool").first
    card.wait_for(timeout=30_000)
    text = card.inner_text()
    assert "Print then wait" in text, "the card keeps its description"
    assert "printed-before-the-stop" in text, "and what the command printed before the stop"
    assert "Tool execution aborted" not in text
    assert status_of(lab, 1).inner_text() == "stopped"
    assert not [s for s in ("◐", "fa-spin", "ocnb-running") if s in output_html(lab, 1)]
    assert nb.locator(".jp-Notebook-cell").count() == 2
