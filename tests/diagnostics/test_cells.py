"""After `notebook_edit` inserts or replaces a code cell, the model reads ruff's findings in that cell; names
the kernel holds and names the cells above define are not "undefined", and IPython's magics are no syntax
errors. Markdown cells, deletions and proposals under review are not checked."""

from __future__ import annotations

import pytest

from opencode_nb.tool.notebook_edit import NotebookEditTool
from tests.tool.memory_notebook import MemoryNotebook

from .kernel import Kernel


@pytest.fixture
def notebook() -> MemoryNotebook:
    return MemoryNotebook(["import pandas as pd\nprices = pd.Series([1, 2])", "%%agent\nsummarise the prices"],
                          calling="cell-1")


@pytest.fixture
def nb_ctx(ctx, notebook):
    ctx.notebook = notebook
    ctx.kernel = Kernel({"df": object(), "threshold": 3})
    return ctx


async def test_a_live_variable_is_not_an_undefined_name_but_a_missing_one_is(nb_ctx, diagnostics):
    source = "df.head()\nprint(prices.mean(), thresold)\n"
    result = await NotebookEditTool(diagnostics()).run({"action": "insert", "source": source}, nb_ctx)
    assert result.output == ("Inserted code cell cell-2 below the agent's cell cell-1. It has not been run: run it "
                             "with notebook_run.\n\n"
                             "Problems found in cell cell-2 after this edit, please fix:\n"
                             "ERROR [2:22] F821 Undefined name `thresold`")
    assert result.metadata["diagnostics"]["where"] == "cell cell-2"


async def test_magics_shell_lines_and_top_level_await_are_cell_syntax(nb_ctx, diagnostics):
    source = "%matplotlib inline\n!ls data\nfiles = !ls\nawait asyncio_sleep(0)\ndisplay(df)\n"
    result = await NotebookEditTool(diagnostics()).run({"action": "insert", "source": source}, nb_ctx)
    assert [f["message"] for f in result.metadata["diagnostics"]["findings"]] == [
        "Undefined name `asyncio_sleep`"]


async def test_a_replaced_cell_is_checked_at_its_own_lines_not_its_neighbours(ctx, diagnostics):
    ctx.notebook = MemoryNotebook(["broken = (\n", "old = 1", "print(also_undefined)", "%%agent\nfix it"],
                                  calling="cell-3")
    result = await NotebookEditTool(diagnostics()).run(
        {"action": "replace", "cell_id": "cell-1", "source": "x = 1\ny = undefined_here\n"}, ctx)
    assert [(f["line"], f["code"]) for f in result.metadata["diagnostics"]["findings"]] == [(2, "F821")]


async def test_a_name_a_later_cell_defines_is_still_undefined_here(ctx, diagnostics):
    ctx.notebook = MemoryNotebook(["x = 1", "later = 2"], calling="cell-0")
    result = await NotebookEditTool(diagnostics()).run({"action": "insert", "source": "print(x, later)"}, ctx)
    assert result.output.endswith("ERROR [1:10] F821 Undefined name `later`")


async def test_markdown_and_deleted_cells_are_not_checked(nb_ctx, diagnostics):
    made = await NotebookEditTool(diagnostics()).run(
        {"action": "insert", "source": "Uses `undefined` names", "cell_type": "markdown"}, nb_ctx)
    gone = await NotebookEditTool(diagnostics()).run({"action": "delete", "cell_id": "cell-0"}, nb_ctx)
    assert "diagnostics" not in made.metadata and "diagnostics" not in gone.metadata


async def test_off_means_off_for_cells_too(nb_ctx, diagnostics):
    result = await NotebookEditTool(diagnostics(diagnostics={"enabled": False})).run(
        {"action": "insert", "source": "print(nothing_here)"}, nb_ctx)
    assert "Problems found" not in result.output and "diagnostics" not in result.metadata


async def test_a_notebook_that_cannot_be_read_back_leaves_the_edit_made(nb_ctx, notebook, diagnostics):
    async def unreadable(cell_ids=None):
        raise OSError("the notebook went away")

    notebook.read = unreadable
    result = await NotebookEditTool(diagnostics()).run({"action": "insert", "source": "print(nothing_here)"}, nb_ctx)
    assert result.output.startswith("Inserted code cell cell-2") and "Problems found" not in result.output
    assert result.metadata["diagnostics"]["notes"] == ["the checks after the edit failed: the notebook went away"]


async def test_a_proposal_under_review_is_not_checked_until_it_is_in_the_notebook(nb_ctx, diagnostics):
    from tests.tool.test_notebook_review import RecordingReview

    nb_ctx.review = RecordingReview()
    result = await NotebookEditTool(diagnostics()).run({"action": "insert", "source": "print(nothing_here)"}, nb_ctx)
    assert result.metadata["review"] == "pending" and "diagnostics" not in result.metadata
