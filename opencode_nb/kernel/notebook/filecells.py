"""The notebook file as a cell store, for kernels whose front end has no extension (nbclient, VS Code, classic).

Each operation reads the file, edits its JSON (`nbfile`) and writes it back, on a worker thread, one at a
time: the kernel loop never waits on the disk, and two edits never interleave. A file that changed on
disk between the read and the write is not overwritten; the edit is refused and can be tried again.
Whether writing is allowed at all is `NotebookCells`' decision, not this module's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ...tool.context import NotebookRefused
from ...values import Cell, NotebookSnapshot
from . import nbfile
from .livecells import to_cell

T = TypeVar("T")


class FileCells:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.notes: list[str] = []
        """What the reader should know about the file (ids it had to be given)."""
        self._lock = asyncio.Lock()

    async def _edit(self, change: Callable[[nbfile.NotebookDoc], T], *, write: bool) -> T:
        def work() -> T:
            doc = self._load()
            result = change(doc)
            if write:
                try:
                    nbfile.save(self.path, doc)
                except FileExistsError as exc:
                    raise NotebookRefused(f"{exc}; nothing was changed. Try again.") from None
                except OSError as exc:
                    raise NotebookRefused(f"Could not write {self.path}: {exc}") from None
            return result

        async with self._lock:
            return await asyncio.to_thread(work)

    def _load(self) -> nbfile.NotebookDoc:
        try:
            doc = nbfile.load(self.path)
        except FileNotFoundError:
            raise NotebookRefused(f"The notebook file {self.path} does not exist; set OPENCODE_NB_NOTEBOOK to the "
                                  "notebook's path.") from None
        except (OSError, ValueError) as exc:
            raise NotebookRefused(f"Could not read the notebook file {self.path}: {exc}") from None
        if doc.ids_added:
            note = (f"{self.path.name} has no cell ids (nbformat < 4.5): its cells are called cell-0, cell-1, … by "
                    "position until the first change stores them in the file.")
            if note not in self.notes:
                self.notes.append(note)
        return doc

    def _unknown(self, cell_id: str) -> NotebookRefused:
        return NotebookRefused(f"No cell has the id {cell_id!r} in {self.path.name}.")

    async def read(self, cell_ids: list[str] | None = None, *, max_output_chars: int | None = None,
                   running_cell: str | None = None) -> NotebookSnapshot:
        limit = nbfile.MAX_OUTPUT_CHARS if max_output_chars is None else max_output_chars

        def cells(doc: nbfile.NotebookDoc) -> tuple[list[dict[str, Any]], int]:
            views = {c["id"]: nbfile.cell_view(c, max_output_chars=limit) for c in doc.cells}
            wanted = list(views) if cell_ids is None else cell_ids
            missing = [i for i in wanted if i not in views]
            if missing:
                raise self._unknown(missing[0])
            return [views[i] for i in wanted], len(doc.cells)

        found, total = await self._edit(cells, write=False)
        return NotebookSnapshot(path=str(self.path), source="file",
                                cells=[to_cell({**c, "running": c["id"] == running_cell}) for c in found],
                                total=total, running_cell=running_cell)

    async def insert(self, cells: list[dict[str, Any]], after: str | None) -> list[str]:
        def change(doc: nbfile.NotebookDoc) -> list[str]:
            try:
                return nbfile.insert(doc, cells, after)[0]
            except KeyError:
                raise self._unknown(str(after)) from None

        return await self._edit(change, write=True)

    async def replace(self, cell_id: str, **fields: Any) -> Cell:
        def change(doc: nbfile.NotebookDoc) -> dict[str, Any]:
            try:
                return nbfile.replace(doc, cell_id, fields)
            except KeyError:
                raise self._unknown(cell_id) from None

        return to_cell(await self._edit(change, write=True))

    async def delete(self, cell_ids: list[str]) -> list[tuple[Cell, int]]:
        def change(doc: nbfile.NotebookDoc) -> list[tuple[dict[str, Any], int]]:
            try:
                return nbfile.delete(doc, cell_ids)
            except KeyError as exc:
                raise self._unknown(str(exc.args[0])) from None

        return [(to_cell(c), i) for c, i in await self._edit(change, write=True)]

    async def restore(self, cell: Cell, index: int) -> str:
        return await self._edit(lambda doc: nbfile.restore(doc, cell.model_dump(), index), write=True)

    def find(self, source: str) -> str | None:
        """The id of the one cell whose source is `source` (how nbclient's running cell is found), read now."""
        try:
            doc = nbfile.load(self.path)
        except (OSError, ValueError):
            return None
        matches = [c["id"] for c in doc.cells if nbfile.cell_view(c, max_output_chars=0)["source"] == source]
        return matches[0] if len(matches) == 1 else None
