"""A person in JupyterLab: run a %%agent cell, approve a command while the cell is busy, open the child
session, then reopen the saved notebook without a kernel and read the transcript."""

from __future__ import annotations

import time

import pytest
import yaml

from .lab import Lab

pytestmark = pytest.mark.e2e

SCRIPT = [
    {"text": "Let me survey first.", "tool_calls": [{"name": "task", "input": {
        "description": "Survey the files", "prompt": "List the files here.", "subagent_type": "explore"}}]},
    {"tool_calls": [{"name": "glob", "input": {"pattern": "*.txt"}}]},
    {"text": "There is one text file, notes.txt."},
    {"text": "Now a quick check.", "tool_calls": [{"name": "bash", "input": {
        "command": "echo browser-ok", "description": "Check the shell"}}]},
    {"text": "All good: the survey found **notes.txt** and the shell answered."},
]


@pytest.fixture(scope="module")
def lab_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return {"OPENCODE_NB_DATA_DIR": str(tmp_path_factory.mktemp("ocnb-data"))}


def test_approve_while_busy_open_the_child_and_reread_the_saved_transcript(lab: Lab) -> None:
    (lab.root / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "scripted/e2e", "permission": {"bash": "ask"}, "provider": {"scripted": {"script": SCRIPT}}}))
    (lab.root / "notes.txt").write_text("hello\n")
    lab.write_notebook("agent.ipynb", ["%load_ext opencode_nb", "%%agent\nSurvey the project, then check the shell."])
    nb = lab.open_notebook("agent.ipynb")

    lab.run_cell(0)
    lab.wait_cell_done(0)
    lab.run_cell(1, key="Control+Enter")

    allow = nb.locator("button.jupyter-button", has_text="Allow once")
    allow.wait_for(timeout=30_000)
    assert lab.prompt(1) == "[*]", "the agent cell stays busy while it waits for the person"

    # The child session is a collapsed section under its task call; open it and see the subagent's work.
    child = nb.locator(".ocnb-child .lm-AccordionPanel-title, .ocnb-child .jupyter-widget-Collapse-header").first
    child.wait_for()
    assert "@explore — Survey the files" in child.inner_text()
    child.click()
    nb.locator(".ocnb-child-session", has_text="There is one text file, notes.txt.").first.wait_for(state="visible")

    started = time.monotonic()
    allow.click()
    lab.wait_cell_done(1, timeout=30)
    assert time.monotonic() - started < 15
    lab.wait_output(1, "All good: the survey found notes.txt")
    lab.wait_output(1, "allowed once")

    saved = lab.save()
    html = "".join(o.get("data", {}).get("text/html", "") for o in saved["cells"][1]["outputs"])
    assert 'class="ocnb-transcript"' in html and "browser-ok" in html

    # Without a kernel, the saved transcript still reads: text, the tool card, the decision, the child.
    lab.shutdown_kernels()
    lab.reload(wait_idle=False)
    lab.page.locator(".jp-NotebookPanel:visible .ocnb-transcript").first.wait_for(timeout=60_000)
    out = lab.page.locator(".jp-NotebookPanel:visible .jp-Cell-outputWrapper").nth(1)
    text = out.inner_text()
    assert "All good: the survey found notes.txt" in text and "allowed once" in text
    child_details = out.locator("details.ocnb-child").first
    summary = child_details.locator("summary").first
    assert "@explore — Survey the files" in summary.inner_text()
    summary.click()
    child_details.locator(".ocnb-text", has_text="There is one text file, notes.txt.").first.wait_for(state="visible")
