"""A notebook held in memory, speaking `NotebookAccess`: where inserted cells land, and what they say."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from opencode_nb.tool.context import NotebookRefused
from opencode_nb.values import Cell, CellRun, NewCell, NotebookSnapshot


class MemoryNotebook:
    """Cells in a list. `calling` is the id of the cell every session's prompt came from; `refuse` makes
    every change (and, with `unreadable`, every read) raise `NotebookRefused` with that text."""

    def __init__(self, sources: list[str] | None = None, *, calling: str | None = None, refuse: str | None = None,
                 unreadable: bool = False) -> None:
        self._ids = (f"cell-{n}" for n in itertools.count())
        self.cells = [Cell(id=next(self._ids), cell_type="code", source=s) for s in sources or []]
        self.calling = calling
        self.refuse = refuse
        self.unreadable = unreadable
        self.inserted: list[tuple[str | None, str, list[NewCell]]] = []
        """(after, session id, cells) of every insert."""
        self.live = False

    def calling_cell(self, session_id: str) -> str | None:
        return self.calling

    async def read(self, cell_ids: list[str] | None = None) -> NotebookSnapshot:
        if self.refuse and self.unreadable:
            raise NotebookRefused(self.refuse)
        cells = self.cells if cell_ids is None else [self._get(i) for i in cell_ids]
        return NotebookSnapshot(source="file", cells=list(cells), total=len(self.cells))

    async def insert(self, cells: list[NewCell], *, after: str | None, session_id: str) -> list[str]:
        if self.refuse:
            raise NotebookRefused(self.refuse)
        self.inserted.append((after, session_id, list(cells)))
        anchor = after or self.calling
        at = next((i + 1 for i, c in enumerate(self.cells) if c.id == anchor), len(self.cells))
        new = [Cell(id=next(self._ids), cell_type=c.cell_type, source=c.source, metadata=c.metadata) for c in cells]
        self.cells[at:at] = new
        return [c.id for c in new]

    async def replace(self, cell_id: str, *, source: str, cell_type: str | None, session_id: str) -> Cell:
        old = self._get(cell_id)
        index = self.cells.index(old)
        self.cells[index] = old.model_copy(update={"source": source, "cell_type": cell_type or old.cell_type})
        return old

    async def delete(self, cell_ids: list[str], *, session_id: str) -> list[Cell]:
        gone = [self._get(i) for i in cell_ids]
        self.cells = [c for c in self.cells if c.id not in cell_ids]
        return gone

    async def run(self, cell_ids: list[str], *, timeout_s: float, session_id: str,
                  on_output: Callable[[str], None]) -> list[CellRun]:
        raise NotebookRefused("This notebook cannot run cells.")

    def _get(self, cell_id: str) -> Cell:
        for cell in self.cells:
            if cell.id == cell_id:
                return cell
        raise NotebookRefused(f"No cell has the id {cell_id!r}.")
