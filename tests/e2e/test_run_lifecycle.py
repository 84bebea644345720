"""A run's life in a real JupyterLab: a page reloaded while an agent runs still gets the run's cell (live, then
its transcript, saved), and a stopped agent cell stops Run All as an interrupt does.

Runs wait on something the test controls, never on a guessed delay: a permission ask (the run waits for
Allow) or a long `sleep` the test stops.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
import yaml

from opencode_nb.kernel.stopped import STOPPED

from .lab import Lab

pytestmark = pytest.mark.e2e

ASKS = [
    {"text": "Let me check.", "tool_calls": [{"name": "bash", "input": {"command": "echo browser-hi",
                                                                        "description": "Say hi"}}]},
    {"text": "Done: the shell said hi."},
]
WAITS = [
    {"text": "Working on it.", "tool_calls": [{"name": "bash", "input": {"command": "sleep 60",
                                                                         "description": "Wait a long time"}}]},
    {"text": "This must not be reached."},
]


def configure(lab: Lab, script: list[dict[str, Any]]) -> None:
    (lab.root / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "scripted/e2e", "permission": {"bash": {"*": "ask", "sleep *": "allow"}},
        "provider": {"scripted": {"script": script}}}))


def outputs_text(cell: dict[str, Any]) -> str:
    parts = []
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        parts += [data.get("text/html", ""), data.get("text/plain", ""), output.get("text", ""),
                  "\n".join(output.get("traceback", []))]
    return "\n".join(parts)


def saved(lab: Lab, name: str, index: int, wanted: str, timeout: float = 20.0) -> dict[str, Any]:
    """The cell as saved on disk, once it holds `wanted` (the extension saves shortly after a change)."""
    deadline = time.monotonic() + timeout
    cell: dict[str, Any] = {}
    while time.monotonic() < deadline:
        cells = lab.saved_cells(name)
        cell = cells[index] if index < len(cells) else {}
        if wanted in outputs_text(cell):
            return cell
        time.sleep(0.2)
    raise AssertionError(f"the saved cell never showed {wanted!r}: {outputs_text(cell)[:500]!r}")


def test_a_page_reloaded_mid_run_shows_the_live_run_then_its_transcript_and_saves_it(lab: Lab) -> None:
    configure(lab, ASKS)
    lab.write_notebook("reload.ipynb", ["%load_ext opencode_nb", "%%agent\nSay hi through the shell."])
    nb = lab.open_notebook("reload.ipynb")
    lab.run_cell(0)
    lab.wait_cell_done(0)
    lab.run_cell(1, key="Control+Enter")
    nb.locator("button.jupyter-button", has_text="Allow once").wait_for(timeout=30_000)

    lab.reload(wait_idle=False)  # the kernel is busy with the agent's cell: it never reads Idle now
    page = lab.notebook
    page.locator(".jp-Notebook-cell").nth(1).wait_for(timeout=60_000)
    # The new page never saw the cell run, yet it shows the live run: the ask is still there to answer.
    allow = page.locator(".jp-Notebook-cell").nth(1).locator("button.jupyter-button", has_text="Allow once")
    allow.wait_for(timeout=30_000)
    allow.click()
    lab.wait_output(1, "Done: the shell said hi.")
    lab.wait_output(1, "allowed once")
    assert page.locator(".jp-Notebook-cell").nth(1).locator(".ocnb-transcript").count() == 1

    cell = saved(lab, "reload.ipynb", 1, "Done: the shell said hi.")
    assert 'class="ocnb-transcript"' in outputs_text(cell) and "browser-hi" in outputs_text(cell)
    assert isinstance(cell["execution_count"], int)
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in cell["outputs"])


def test_stopping_the_agent_cell_during_run_all_stops_the_cells_after_it(lab: Lab) -> None:
    configure(lab, WAITS)
    lab.write_notebook("stop.ipynb", ["%load_ext opencode_nb", "%%agent\nWait a long time.",
                                      "print('the third cell ran')"])
    nb = lab.open_notebook("stop.ipynb")
    # Not awaited here: the command's promise settles only when every cell has run.
    lab.page.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")

    agent_cell = lab.cell(1)
    agent_cell.locator(".ocnb-tool.ocnb-running").first.wait_for(timeout=30_000)
    assert lab.prompt(2) == "[*]", "Run All queued the third cell behind the agent"
    started = time.monotonic()
    agent_cell.locator("button.jupyter-button", has_text="Stop").click()

    lab.wait_cell_done(1)
    assert time.monotonic() - started < 15, "long before the 60 s command would end"
    lab.wait_output(1, STOPPED)
    lab.wait_output(1, "Working on it.")
    assert agent_cell.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 1
    assert "Traceback" not in lab.output_text(1)
    # The third cell was dropped by the kernel, as after an interrupt: never run, no output.
    deadline = time.monotonic() + 10
    while lab.prompt(2) == "[*]" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert lab.prompt(2) == "[ ]"
    assert "the third cell ran" not in lab.output_text(2)
    assert nb.locator(".jp-Notebook-cell").count() == 3
