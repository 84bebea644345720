"""Fix and Explain under a failed cell, in a real JupyterLab: a pandas KeyError gets both buttons once the kernel has
opencode_nb loaded (not before), also after a reload of the saved notebook; they read at 4.5:1 in the light theme and
the dark one, are real buttons the keyboard reaches, and a press inserts `%agent fix <id>` (or `explain`) right below
the failed cell and runs it. An error of an agent's own cell offers nothing, and a rerun without the error takes the
buttons away."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
import yaml

from .lab import KERNELSPEC_METADATA, Lab
from .test_cards_contrast import failing, measured, use_theme
from .test_own_notebook import THEMES, photograph

pytestmark = pytest.mark.e2e

FRAME = "import pandas as pd\nprices = pd.DataFrame({'price': [3, 5], 'item': ['tea', 'jam']})"
FAILS = "prices['prices'].sum()"
LOAD = "%load_ext opencode_nb"
OWN = "1 / 0"
"""A cell an agent's Fix left: metadata `fix_of`, so its own error offers no fix of the fix."""
ANSWERS = [
    {"text": "The frame has no column 'prices': it is called 'price'. Use prices['price'].sum()."},
    {"text": "KeyError: the column is 'price', singular. Nothing was changed."},
]
NOTEBOOK_JS = "window.jupyterapp.shell.currentWidget.content"
CELL_JS = f"""(i) => {{
  const m = {NOTEBOOK_JS}.model.cells.get(i);
  return {{id: m.id, source: m.sharedModel.getSource(), metadata: m.sharedModel.getMetadata()}};
}}"""
FOCUS_JS = """() => {
  const el = document.activeElement;
  return {cls: String(el?.className ?? ''), text: el?.textContent ?? '', outline: getComputedStyle(el).outlineStyle,
          title: el?.title ?? '', tag: el?.tagName ?? ''};
}"""
BAR = ".jp-NotebookPanel:not(.lm-mod-hidden) .ocnb-fix-bar:not(.lm-mod-hidden)"


def write(lab: Lab, name: str) -> list[str]:
    """The notebook, with the agent's cell marked as one; returns the cells' ids (JupyterLab keeps them)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = dict(KERNELSPEC_METADATA)
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [nbformat.v4.new_code_cell(src) for src in (FRAME, FAILS, LOAD, OWN)]
    nb.cells[3].metadata["opencode_nb"] = {"fix_of": nb.cells[1].id}
    nbformat.write(nb, lab.root / name)
    return [cell.id for cell in nb.cells]


def run(lab: Lab, index: int, timeout: float = 60) -> None:
    lab.run_cell(index, key="Control+Enter")
    lab.wait_cell_done(index, timeout=timeout)


def cell(lab: Lab, index: int) -> dict[str, Any]:
    return lab.page.evaluate(CELL_JS, index)


def test_a_failed_cell_offers_fix_and_explain_which_insert_and_run_the_magic_below(lab: Lab, tmp_path: Path) -> None:
    (lab.root / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "scripted/e2e", "provider": {"scripted": {"script": ANSWERS}}}))
    ids = write(lab, "keyerror.ipynb")
    lab.open_notebook("keyerror.ipynb")
    run(lab, 0)
    run(lab, 1)
    lab.wait_output(1, "KeyError")
    lab.page.wait_for_timeout(1000)
    assert lab.cell(1).locator(".ocnb-fix-button:visible").count() == 0, "no buttons before opencode_nb is loaded"

    run(lab, 2)
    fix = lab.cell(1).locator("button.ocnb-fix-button", has_text="Fix")
    fix.wait_for(timeout=15_000)  # the error already shown gets them as soon as the kernel has opencode_nb
    explain = lab.cell(1).locator("button.ocnb-fix-button", has_text="Explain")
    fix.wait_for(timeout=15_000)
    assert explain.is_visible()
    assert "%agent fix" in (fix.get_attribute("title") or "") and "changes nothing" in (
        explain.get_attribute("title") or "")
    run(lab, 3)
    lab.wait_output(3, "ZeroDivisionError")
    assert lab.cell(3).locator(".ocnb-fix-button:visible").count() == 0, "an agent's own cell offers no fix of it"
    assert lab.cell(1).locator(".jp-RenderedText[data-mime-type='application/vnd.jupyter.stderr']").count() == 1, \
        "the traceback is drawn by JupyterLab's own error renderer, as before"

    for theme, background in THEMES:
        use_theme(lab, theme, background)
        texts = measured(lab, BAR)
        assert {t["text"] for t in texts} >= {"Fix", "Explain"}, texts
        assert failing(texts) == []
    use_theme(lab, *THEMES[0])
    photograph(lab, tmp_path, "fix-buttons", show=fix)

    # Saved with its error and reopened: the buttons are back, under the error loaded from the file.
    lab.save()
    lab.reload()
    fix = lab.cell(1).locator("button.ocnb-fix-button", has_text="Fix")
    fix.wait_for(timeout=15_000)

    # The keyboard: Tab goes from Fix to Explain and back, with a focus ring; Enter presses the button.
    fix.focus()
    lab.page.keyboard.press("Tab")
    focused = lab.page.evaluate(FOCUS_JS)
    assert focused["tag"] == "BUTTON" and focused["text"] == "Explain" and focused["outline"] == "solid", focused
    lab.page.keyboard.press("Shift+Tab")
    focused = lab.page.evaluate(FOCUS_JS)
    assert focused["text"] == "Fix" and focused["outline"] == "solid", focused
    lab.page.keyboard.press("Enter")

    lab.cell(f"%agent fix {ids[1]}").wait_for(timeout=15_000)
    inserted = cell(lab, 2)
    assert inserted["source"] == f"%agent fix {ids[1]}", inserted
    assert inserted["metadata"].get("opencode_nb") == {"fix_of": ids[1]}, inserted
    lab.wait_cell_done(2, timeout=60)
    lab.wait_output(2, "it is called 'price'")  # an error raised before the load: read from its saved output
    assert lab.cells().count() == 5

    lab.cell(1).locator("button.ocnb-fix-button", has_text="Explain").click()
    lab.cell(f"%agent explain {ids[1]}").wait_for(timeout=15_000)
    assert cell(lab, 2)["source"] == f"%agent explain {ids[1]}" and cell(lab, 3)["source"] == f"%agent fix {ids[1]}"
    assert cell(lab, 2)["metadata"].get("opencode_nb") == {"fix_of": ids[1]}
    lab.wait_cell_done(2, timeout=60)
    lab.wait_output(2, "the column is 'price', singular")
    for index in (2, 3):
        assert lab.cell(index).locator(".ocnb-fix-button:visible").count() == 0
    photograph(lab, tmp_path, "fix-explained", show=lab.cell(2))

    # Rerun without the error: the buttons go with it.
    lab.page.evaluate(f"(text) => {NOTEBOOK_JS}.widgets[1].model.sharedModel.setSource(text)", "prices['price'].sum()")
    run(lab, 1)
    lab.wait_output(1, "8")
    assert lab.cell(1).locator(".ocnb-fix-button").count() == 0
    saved = json.dumps(lab.save()["cells"])
    assert "ocnb-fix" not in saved, "the buttons are not part of the notebook"
