"""A finished run's card in a real JupyterLab takes back everything the run did, files included, and puts it back:
Undo removes the file its shell command made and restores the one it edited, deletes the cell it inserted and
unbinds the name its python bound; the card then offers Redo, which brings all of it back, and Undo again."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from .lab import Lab

pytestmark = pytest.mark.e2e

RUN = [
    {"text": "Changing files, a cell and a value.", "tool_calls": [
        {"name": "bash", "input": {"command": "echo made > made.txt && sed -i 's/old/new/' kept.txt",
                                   "description": "Make a file and edit one"}},
        {"name": "notebook_edit", "input": {"action": "insert", "source": "print(df2)", "cell_type": "code"}},
        {"name": "python", "input": {"code": "df2 = 41 + 1", "description": "Make df2"}}]},
    {"text": "Made made.txt, a cell and df2."},
]


def configure(lab: Lab, script: list[dict[str, Any]]) -> None:
    (lab.root / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "scripted/e2e", "permission": {"*": "allow"}, "provider": {"scripted": {"script": script}}}))


def check(lab: Lab, expected: str) -> None:
    """Run the last cell, which says whether df2 is bound, and wait for its answer."""
    index = lab.cells().count() - 1
    lab.run_cell(index, key="Control+Enter")
    lab.wait_cell_done(index)
    lab.wait_output(index, expected)


def test_the_card_undoes_files_cells_and_names_and_redo_puts_them_back(lab: Lab) -> None:
    configure(lab, RUN)
    (lab.root / "kept.txt").write_text("the old text\n")
    lab.write_notebook("undo_redo.ipynb", ["%load_ext opencode_nb", "%%agent\nChange things.",
                                           "print('df2' in dir())"])
    lab.open_notebook("undo_redo.ipynb")
    lab.run_cell(0)
    lab.wait_cell_done(0)
    lab.run_cell(1, key="Control+Enter")
    lab.wait_cell_done(1)
    lab.wait_output(1, "Made made.txt, a cell and df2.")
    assert (lab.root / "made.txt").read_text() == "made\n"
    assert (lab.root / "kept.txt").read_text() == "the new text\n"
    assert lab.cells().count() == 4 and "print(df2)" in lab.cell(2).inner_text()

    bar = lab.cell(1).locator(".ocnb-undo")
    bar.locator(".ocnb-undo-button").wait_for(timeout=15_000)
    summary = " ".join(bar.inner_text().split())
    assert "2 files changed" in summary and "1 cell inserted" in summary and "df2" in summary, summary

    bar.locator(".ocnb-undo-button").click()
    bar.locator(".ocnb-undone").wait_for(timeout=15_000)
    said = bar.inner_text()
    for sentence in ("Restored kept.txt to how it was before this run.", "Removed made.txt, which this run created.",
                     "Took out the cell this run inserted.", "Unbound df2."):
        assert sentence in said, said
    assert not (lab.root / "made.txt").exists()
    assert (lab.root / "kept.txt").read_text() == "the old text\n"
    assert lab.cells().count() == 3, "the inserted cell is gone"
    check(lab, "False")

    redo = bar.locator(".ocnb-redo-button")
    redo.wait_for(timeout=15_000)
    redo.click()
    bar.locator(".ocnb-undo-button").wait_for(timeout=15_000)
    assert bar.locator(".ocnb-redo-button").count() == 0
    assert (lab.root / "made.txt").read_text() == "made\n"
    assert (lab.root / "kept.txt").read_text() == "the new text\n"
    assert lab.cells().count() == 4 and "print(df2)" in lab.cell(2).inner_text()
    check(lab, "True")

    bar.locator(".ocnb-undo-button").click()  # what was put back can be taken back again
    bar.locator(".ocnb-undone").wait_for(timeout=15_000)
    assert not (lab.root / "made.txt").exists() and lab.cells().count() == 3
