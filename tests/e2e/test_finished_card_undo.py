"""A finished run in a real JupyterLab: its card keeps an Undo of that run while the kernel lives (also after a
reload), says what it would take back and then what it took back, and the saved notebook reopened without that
kernel shows the transcript alone. While a foreground run works, the status bar reads Busy; a `--bg` run leaves
the kernel Idle and its card says it is running."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
import yaml

from opencode_nb.kernel.card_undo import RUN_MIME

from .lab import Lab

pytestmark = pytest.mark.e2e

MAKES = [
    {"text": "Adding a cell and a value.", "tool_calls": [
        {"name": "notebook_edit", "input": {"action": "insert", "source": "print(df2)", "cell_type": "code"}},
        {"name": "python", "input": {"code": "df2 = 41 + 1", "description": "Make df2"}}]},
    {"text": "Made df2 and a cell that prints it."},
]
SLOW = [{"text": "Thinking it over slowly, one word at a time, until the answer is ready for you.", "delay": 0.75}]
STATUS_JS = "() => [...document.querySelectorAll('.jp-StatusBar-Widget')].map(e => e.innerText).join(' ')"
BUSY = re.compile(r"\|\s*Busy")
IDLE = re.compile(r"\|\s*Idle")


def configure(lab: Lab, script: list[dict[str, Any]]) -> None:
    (lab.root / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "scripted/e2e", "permission": {"*": "allow"}, "provider": {"scripted": {"script": script}}}))


def status(lab: Lab) -> str:
    return lab.page.evaluate(STATUS_JS)


def test_the_finished_card_undoes_its_run_and_the_saved_notebook_shows_only_the_transcript(lab: Lab) -> None:
    configure(lab, MAKES)
    lab.write_notebook("undo.ipynb", ["%load_ext opencode_nb", "%%agent\nMake df2 and a cell that prints it.",
                                      "print('df2' in dir())"])
    nb = lab.open_notebook("undo.ipynb")
    lab.run_cell(0)
    lab.wait_cell_done(0)
    lab.run_cell(1, key="Control+Enter")
    lab.wait_cell_done(1)
    lab.wait_output(1, "Made df2 and a cell that prints it.")
    assert lab.cells().count() == 4 and "print(df2)" in lab.cell(2).inner_text()

    bar = lab.cell(1).locator(".ocnb-undo")
    bar.locator(".ocnb-undo-button").wait_for(timeout=15_000)
    assert " ".join(bar.inner_text().split()) == "↶ Undo this run takes back 1 cell inserted, 1 binding (df2)"

    # A reload while the kernel lives keeps the Undo: the page asks the kernel about the card's run again. The
    # extension saves what the agent changed by itself; reload once that save is on disk.
    deadline = time.monotonic() + 15
    while not any(RUN_MIME in output.get("data", {}) for cell in lab.saved_cells("undo.ipynb")
                  for output in cell.get("outputs", [])):
        assert time.monotonic() < deadline, "the finished run's card was never saved"
        time.sleep(0.1)
    lab.reload()
    nb = lab.notebook
    bar = lab.cell(1).locator(".ocnb-undo")
    bar.locator(".ocnb-undo-button").wait_for(timeout=15_000)
    assert "1 cell inserted, 1 binding (df2)" in bar.inner_text()

    bar.locator(".ocnb-undo-button").click()
    bar.locator(".ocnb-undone").wait_for(timeout=15_000)
    said = bar.inner_text()
    assert said.startswith("↶") and "Took out the cell this run inserted.\nUnbound df2." in said, said
    assert bar.locator(".ocnb-undo-button").count() == 0
    assert lab.cells().count() == 3, "the inserted cell is gone"
    lab.run_cell(2, key="Control+Enter")
    lab.wait_cell_done(2)
    lab.wait_output(2, "False")

    saved = lab.save()
    card = saved["cells"][1]["outputs"]
    assert any(RUN_MIME in o.get("data", {}) and "ocnb-transcript" in "".join(o["data"].get("text/html", ""))
               for o in card)
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in card)

    # Reopened without that kernel: the transcript alone, even once opencode_nb is loaded in the new kernel.
    lab.shutdown_kernels()
    lab.reload()
    lab.cell(1).locator(".ocnb-transcript").wait_for(timeout=15_000)
    lab.run_cell(0)
    lab.wait_cell_done(0)
    time.sleep(1.5)  # the page has asked the new kernel about the card's run by now (it answers at once)
    out = lab.output_text(1)
    assert "Made df2 and a cell that prints it." in out
    assert lab.cell(1).locator(".ocnb-undo-button").count() == 0
    assert "Undone" not in out and "model not found" not in out and "Error displaying widget" not in out
    assert nb.locator(".ocnb-undo:visible").count() == 0


def test_a_card_says_what_agent_undo_took_back_of_its_run_without_a_click(lab: Lab) -> None:
    configure(lab, MAKES)
    lab.write_notebook("undo_line.ipynb", ["%load_ext opencode_nb", "%%agent\nMake df2 and a cell that prints it.",
                                           "%agent undo"])
    lab.open_notebook("undo_line.ipynb")
    lab.run_cell(0)
    lab.wait_cell_done(0)
    lab.run_cell(1, key="Control+Enter")
    lab.wait_cell_done(1)
    bar = lab.cell(1).locator(".ocnb-undo")
    bar.locator(".ocnb-undo-button").wait_for(timeout=15_000)

    lab.run_cell("%agent undo", key="Control+Enter")
    lab.wait_cell_done("%agent undo")
    bar.locator(".ocnb-undone").wait_for(timeout=15_000)  # the page asks again once a cell has run
    assert bar.locator(".ocnb-undo-button").count() == 0
    assert "Unbound df2." in bar.inner_text()


def test_the_status_bar_reads_busy_while_a_foreground_run_works_and_idle_after(lab: Lab) -> None:
    configure(lab, SLOW)
    lab.write_notebook("busy.ipynb", ["%load_ext opencode_nb", "%%agent\nThink it over slowly."])
    lab.open_notebook("busy.ipynb")
    lab.run_cell(0)
    lab.wait_cell_done(0)
    lab.run_cell(1, key="Control+Enter")

    running = lab.cell(1).locator(".ocnb-status-running")
    running.first.wait_for(timeout=15_000)
    seen: list[str] = []
    deadline = time.monotonic() + 30
    # The live view shows "running" from the run's start to its end, when the transcript replaces it; the
    # first widget of the page (this view) is when JupyterLab makes a subshell, which used to read as Idle.
    while running.count() and time.monotonic() < deadline:
        text = status(lab)
        if running.count():
            seen.append("busy" if BUSY.search(text) else "idle" if IDLE.search(text) else text)
        time.sleep(0.1)
    lab.wait_cell_done(1)
    assert len(seen) >= 6, seen
    assert set(seen) == {"busy"}, seen
    lab.wait_kernel_idle(timeout=10)


def test_a_background_run_leaves_the_kernel_idle_and_its_card_says_it_runs(lab: Lab) -> None:
    configure(lab, SLOW)
    lab.write_notebook("bg.ipynb", ["%load_ext opencode_nb", "%%agent --bg\nThink it over slowly."])
    lab.open_notebook("bg.ipynb")
    lab.run_cell(0)
    lab.wait_cell_done(0)
    lab.run_cell(1, key="Control+Enter")
    lab.wait_cell_done(1, timeout=10)  # the cell returns at once
    lab.cell(1).locator(".ocnb-status-running").first.wait_for(timeout=15_000)
    lab.wait_kernel_idle(timeout=10)
    lab.wait_output(1, "until the answer is ready for you.")
    lab.cell(1).locator(".ocnb-status-running").first.wait_for(state="detached", timeout=15_000)
