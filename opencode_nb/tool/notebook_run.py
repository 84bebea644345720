"""notebook_run: run cells of the notebook in the person's live kernel, as Shift+Enter would, in order.

Running a cell changes the person's namespace and the notebook's outputs, so it asks first (`notebook_run`,
one pattern per cell id) with the sources to be run in the prompt. The cells run one after another and stop
at the first error: the failing cell comes back as a tool error with its traceback, what ran before it and
which cells were not run, so the model can fix the cell and run it again. Outputs reach the card while they
stream; the model gets each cell's outputs as bounded text and its images as images.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..errors import ToolError
from ..values import Attachment, CellRun
from .base import Tool, ToolContext, ToolResult, for_person
from .notebook import access, bounded_error, error_text, images, outputs_text, refused_as_error
from .support.stream import OutputStream

TIMEOUT_S = 600
"""For the whole run: a cell that trains a model for longer is the person's to run."""
MAX_IMAGES = 8
"""Images attached to one result; later ones are named in the text and shown only in the notebook."""


class NotebookRunParams(BaseModel):
    cell_ids: list[str] = Field(min_length=1, description=(
        "Ids of the cells to run, in the order to run them (notebook_read lists the ids)"))


class NotebookRunTool(Tool[NotebookRunParams]):
    id = "notebook_run"
    params = NotebookRunParams

    async def execute(self, params: NotebookRunParams, ctx: ToolContext) -> ToolResult:
        notebook = access(ctx)
        ids = list(dict.fromkeys(i.strip() for i in params.cell_ids if i.strip()))
        if not ids:
            raise ToolError("cell_ids holds no cell id. Give the ids of the cells to run, from notebook_read.")
        snapshot = await refused_as_error(notebook.read(ids))
        cells = {c.id: c for c in snapshot.cells}
        calling = notebook.calling_cell(ctx.session_id)
        if calling in ids:
            raise ToolError(f"Cell {calling} is the cell this agent was called from; running it again would start "
                            "another agent. Leave it out of cell_ids.")
        waiting = ctx.review.pending_cells() if ctx.review is not None else {}
        held = [f"cell {i} (change {waiting[i]})" for i in ids if i in waiting]
        if held:
            raise ToolError(f"A change you proposed is pending for {', '.join(held)}: the person has not accepted it "
                            "yet, so running now would run the cell's old source. Nothing was run. Wait for the "
                            "person's decision (you are told it at the start of your next turn); accepting reruns "
                            "the cell.")
        title = run_title(ids)
        metadata = {"cell_ids": ids, "cells": [{"id": i, "cell_type": cells[i].cell_type, "source": cells[i].source}
                                               for i in ids if i in cells]}
        await ctx.ask("notebook_run", ids, always=ids, metadata=metadata)
        ctx.update(title, metadata)
        stream = OutputStream(ctx)
        try:
            runs = await refused_as_error(notebook.run(ids, timeout_s=TIMEOUT_S, session_id=ctx.session_id,
                                                       on_output=stream.write))
        finally:
            stream.close()
        done = {run.id: run for run in runs}
        runs = [done.get(i) or CellRun(id=i, status="aborted") for i in ids]
        summary = {"runs": [{"id": r.id, "status": r.status, "execution_count": r.execution_count} for r in runs]}
        failed = next((r for r in runs if r.status != "ok"), None)
        if failed is not None:
            # An error result carries no images: the earlier cells' are named, and stay in the notebook.
            ctx.update(None, summary)
            raise bounded_error(ctx, failure_text(runs, failed))
        attached: list[Attachment] = []
        blocks = []
        for run in runs:
            found = images(run.outputs)
            fits = len(attached) + len(found) <= MAX_IMAGES
            attached += found if fits else []
            blocks.append(run_block(run, attach=fits))
        text = "\n\n".join([f"Ran {len(runs)} cell{'s' * (len(runs) != 1)} in the person's kernel.", *blocks])
        said = f"Ran {', '.join(f'[{r.id}]' for r in runs)} in your kernel; the outputs are in the notebook"
        return ToolResult(title, text, {**metadata, **summary, **for_person(said, "")}, attached)


def run_title(ids: list[str]) -> str:
    """Worded as the views label a call before it has a title of its own (views/labels.py)."""
    return "run " + ", ".join(f"[{i}]" for i in ids)


def run_block(run: CellRun, *, attach: bool = True) -> str:
    """One cell's run: its heading, then its outputs (an error's traceback in full)."""
    count = f" · In [{run.execution_count}]" if run.execution_count is not None else ""
    head = f"[cell {run.id}] {run.status}{count}"
    errors = [o for o in run.outputs if o.get("output_type") == "error"]
    others = [o for o in run.outputs if o.get("output_type") != "error"]
    shown = outputs_text(others, attached=attach)
    parts = [head, shown if shown else "(no output)"]
    parts += [error_text(e) for e in errors]
    return "\n".join(parts)


def failure_text(runs: list[CellRun], failed: CellRun) -> str:
    """What the model reads when a cell failed: which one, why, what ran before it, and what did not run."""
    index = runs.index(failed)
    before, after = runs[:index], [r for r in runs[index + 1:] if r.status != "ok"]
    if failed.status == "error":
        lead = f"Cell {failed.id} raised an error"
    else:
        lead = f"Cell {failed.id} did not finish (the run was stopped, timed out, or could not start it)"
    ran = ", ".join(r.id for r in before) or "none"
    text = [f"{lead}. Ran before it: {ran}.",
            f"Not run: {', '.join(r.id for r in after)}." if after else "No cells were left to run.",
            "Fix the cell (notebook_edit replace) and run it again, with the cells after it."
            if failed.status == "error" else "Run the cells again once the cause is dealt with.",
            *(run_block(r, attach=False) for r in runs[:index + 1])]
    return "\n\n".join(text)
