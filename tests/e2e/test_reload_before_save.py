"""A page reloaded before the notebook was saved, in a real JupyterLab: the cell of the prompt that is running is
not in the notebook as saved, so the run is shown again in a new cell at the end, asks and all, and a notification
names what it waits for and scrolls to it. Answering the ask there finishes the run, whose card offers its Undo, also
after a reload of the saved notebook."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

import opencode_nb

from .lab import Lab
from .test_cards_contrast import use_theme

pytestmark = pytest.mark.e2e

PROMPT = "Write a note through the shell."
WRITES = [
    {"text": "Writing it.", "tool_calls": [
        {"name": "bash", "input": {"command": "echo kept > note.txt", "description": "Write the note"}},
        {"name": "python", "input": {"code": "note = 'kept'", "description": "Keep the note"}}]},
    {"text": "Done: the note is written."},
]
ADD_CELL_JS = """(text) => {
  const notebook = window.jupyterapp.shell.currentWidget.content;
  notebook.model.sharedModel.insertCell(notebook.model.cells.length, {cell_type: 'code', source: text});
}"""
TOASTS = ".Toastify__toast"


@pytest.fixture(scope="module")
def lab_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The extension as this checkout builds it (`jlpm build` writes it into the package), found before any
    installed copy: JUPYTER_PATH comes first in the labextensions path."""
    shared = tmp_path_factory.mktemp("jupyter-path")
    (shared / "labextensions").mkdir()
    (shared / "labextensions" / "opencode-nb").symlink_to(Path(opencode_nb.__file__).parent / "labextension")
    return {"OPENCODE_NB_DATA_DIR": str(tmp_path_factory.mktemp("ocnb-data")), "JUPYTER_PATH": str(shared)}


def artifacts(tmp_path: Path) -> Path:
    return Path(os.environ.get("OPENCODE_NB_E2E_ARTIFACTS", tmp_path))


def configure(lab: Lab, script: list[dict[str, Any]]) -> None:
    (lab.root / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "scripted/e2e", "permission": {"*": "allow", "bash": "ask"},
        "provider": {"scripted": {"script": script}}}))


def shoot(lab: Lab, tmp_path: Path, name: str) -> None:
    """Screenshots at 800 and 1,600 px wide, light and dark, to look at."""
    for theme, background, suffix in (("JupyterLab Dark", "#111", "dark"), ("JupyterLab Light", "white", "light")):
        use_theme(lab, theme, background)
        for width in (800, 1600):
            lab.page.set_viewport_size({"width": width, "height": 900})
            time.sleep(0.3)
            lab.screenshot(artifacts(tmp_path) / f"{name}-{width}-{suffix}.png", full_page=False)
    lab.page.set_viewport_size({"width": 1280, "height": 900})


def test_a_run_whose_cell_was_never_saved_is_shown_again_after_a_reload_and_its_ask_can_be_answered(
        lab: Lab, tmp_path: Path) -> None:
    configure(lab, WRITES)
    lab.write_notebook("unsaved.ipynb", ["%load_ext opencode_nb"])
    nb = lab.open_notebook("unsaved.ipynb")
    lab.run_cell(0, key="Control+Enter")
    lab.wait_cell_done(0)
    lab.page.evaluate(ADD_CELL_JS, f"%%agent\n{PROMPT}")  # typed, run, never saved
    lab.run_cell(1, key="Control+Enter")
    nb.locator("button.jupyter-button", has_text="Allow once").wait_for(timeout=30_000)
    assert len(lab.saved_cells("unsaved.ipynb")) == 1, "the agent cell is not on disk"

    lab.reload(wait_idle=False)  # the kernel is busy with the agent's cell
    page = lab.notebook
    toast = lab.page.locator(TOASTS, has_text="waits for your answer")
    toast.wait_for(timeout=60_000)
    said = " ".join(toast.inner_text().split())
    assert said == f"The run of “{PROMPT}” waits for your answer (bash: echo kept > note.txt): it is shown again " \
                   "in a new cell. Show the cell", said
    shoot(lab, tmp_path, "reload-before-save-notification")

    toast.get_by_role("button", name="Show the cell").click()
    cell = page.locator(".jp-Notebook-cell").nth(1)
    assert f"# Shown again after a reload: the run of the prompt “{PROMPT}”." in cell.inner_text()
    allow = cell.locator("button.jupyter-button", has_text="Allow once")
    allow.wait_for(timeout=30_000)
    assert allow.is_visible()
    shoot(lab, tmp_path, "reload-before-save-cell")
    allow.click()
    lab.wait_output(1, "Done: the note is written.")
    lab.wait_kernel_idle(30)
    assert (lab.root / "note.txt").read_text() == "kept\n"

    bar = cell.locator(".ocnb-undo")
    bar.locator(".ocnb-undo-button").wait_for(timeout=15_000)
    said = " ".join(bar.inner_text().split())
    assert said.startswith("↶ Undo this run takes back") and "1 binding (note)" in said, said
    shoot(lab, tmp_path, "reload-before-save-finished")

    lab.save()
    lab.reload()
    bar = lab.cell(1).locator(".ocnb-undo")
    bar.locator(".ocnb-undo-button").wait_for(timeout=15_000)
    assert "1 binding (note)" in bar.inner_text(), "the page asked the kernel about the saved card's run again"


def test_a_run_shown_again_in_its_saved_cell_after_a_reload_keeps_the_undo_of_its_run(lab: Lab) -> None:
    configure(lab, WRITES)
    lab.write_notebook("saved.ipynb", ["%load_ext opencode_nb", f"%%agent\n{PROMPT}"])
    nb = lab.open_notebook("saved.ipynb")
    lab.run_cell(0, key="Control+Enter")
    lab.wait_cell_done(0)
    lab.run_cell(1, key="Control+Enter")
    nb.locator("button.jupyter-button", has_text="Allow once").wait_for(timeout=30_000)

    lab.reload(wait_idle=False)
    cell = lab.notebook.locator(".jp-Notebook-cell").nth(1)
    allow = cell.locator("button.jupyter-button", has_text="Allow once")
    allow.wait_for(timeout=60_000)
    assert lab.cells().count() == 2, "the page has the cell: nothing is added"
    allow.click()
    lab.wait_output(1, "Done: the note is written.")
    bar = cell.locator(".ocnb-undo")
    bar.locator(".ocnb-undo-button").wait_for(timeout=15_000)
    assert "1 binding (note)" in bar.inner_text()
