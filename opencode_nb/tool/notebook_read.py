"""notebook_read: the notebook's cells as the model reads them, one block per cell, headed by its id.

Ids are what the other notebook tools take, so every block starts with one; positions are shown only when
the whole notebook is read, since a partial read does not know them. The text says where the reading came
from: the live model sees the person's unsaved edits, the file on disk does not.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field

from ..values import NotebookSnapshot
from .base import Tool, ToolContext, ToolResult, for_person
from .notebook import access, cell_heading, outputs_text, refused_as_error

WHERE = {
    "live": "read from the live notebook (the person's unsaved edits included)",
    "file": "read from the file on disk (edits not yet saved in an open editor are not seen)",
}


class NotebookReadParams(BaseModel):
    cell_ids: list[str] | None = Field(None, description=(
        "Ids of the cells to read, as a previous notebook_read showed them; leave it out to read every cell"))


class NotebookReadTool(Tool[NotebookReadParams]):
    id = "notebook_read"
    params = NotebookReadParams

    async def execute(self, params: NotebookReadParams, ctx: ToolContext) -> ToolResult:
        notebook = access(ctx)
        wanted = [i.strip() for i in params.cell_ids or [] if i.strip()] or None
        await ctx.ask("notebook_read", wanted or ["*"], always=["*"])
        snapshot = await refused_as_error(notebook.read(wanted))
        calling = notebook.calling_cell(ctx.session_id)
        title = f"all {snapshot.total} cell{'s' * (snapshot.total != 1)}" if wanted is None else \
            "cells " + ", ".join(f"[{i}]" for i in wanted)
        metadata = {"source": snapshot.source, "path": snapshot.path, "total": snapshot.total,
                    "cell_ids": [c.id for c in snapshot.cells], "running_cell": snapshot.running_cell}
        read = f"Read {len(snapshot.cells)} of the notebook's {snapshot.total} cell{'s' * (snapshot.total != 1)}"
        pending = ctx.review.pending_cells() if ctx.review is not None else {}
        return ToolResult(title, snapshot_text(snapshot, whole=wanted is None, calling=calling, pending=pending),
                          {**metadata, **for_person(read, "")})


def snapshot_text(snapshot: NotebookSnapshot, *, whole: bool, calling: str | None = None,
                  pending: Mapping[str, int] | None = None) -> str:
    """The cells of `snapshot`, each a block: heading, source, then its outputs summarised; `pending`: cell id →
    the number of the change to it that waits for the person."""
    name = f"Notebook {snapshot.path}" if snapshot.path else "The notebook"
    count = f"{snapshot.total} cell{'s' * (snapshot.total != 1)}"
    head = f"{name}, {WHERE[snapshot.source]}: {count}"
    if not whole:
        head += f"; showing {len(snapshot.cells)}"
    head += "."
    if snapshot.running_cell:
        head += f" Cell {snapshot.running_cell} is running."
    blocks = [head]
    for index, cell in enumerate(snapshot.cells, 1):
        block = cell_heading(cell, position=index if whole else None, calling=calling,
                             pending=(pending or {}).get(cell.id))
        block += "\n" + (cell.source.rstrip("\n") if cell.source.strip() else "(empty)")
        shown = outputs_text(cell.outputs)
        if shown:
            block += "\n--- outputs ---\n" + shown
        blocks.append(block)
    if whole and not snapshot.cells:
        blocks.append("(no cells)")
    return "\n\n".join(blocks)
