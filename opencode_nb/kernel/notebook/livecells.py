"""The live notebook through the extension: each operation is one request of labextension/PROTOCOL.md.

The front end's own words reach the caller: a refusal (`ok: false`), a timeout or a missing extension
becomes `NotebookRefused` with the extension's message, which names the cell id it did not know.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ...tool.context import NotebookRefused
from ...values import Cell, NotebookSnapshot
from .frontend import Frontend, FrontendError, FrontendTimeout

CELL_FIELDS = frozenset(Cell.model_fields)


def to_cell(data: dict[str, Any]) -> Cell:
    """A cell as the extension describes it; fields this version does not know are left out."""
    return Cell.model_validate({k: v for k, v in data.items() if k in CELL_FIELDS})


@contextmanager
def refused() -> Iterator[None]:
    try:
        yield
    except FrontendError as exc:
        raise NotebookRefused(str(exc)) from None


class LiveCells:
    def __init__(self, frontend: Frontend) -> None:
        self.frontend = frontend

    async def read(self, cell_ids: list[str] | None = None, *, max_output_chars: int | None = None) -> NotebookSnapshot:
        params: dict[str, Any] = {}
        if cell_ids is not None:
            params["cell_ids"] = cell_ids
        if max_output_chars is not None:
            params["max_output_chars"] = max_output_chars
        with refused():
            reply = await self.frontend.request("read_cells", **params)
        return NotebookSnapshot(path=reply.get("path") or self.frontend.path, source="live",
                                cells=[to_cell(c) for c in reply.get("cells") or []],
                                total=int(reply.get("total") or 0), active_cell=reply.get("active_cell"),
                                running_cell=reply.get("running_cell"))

    async def insert(self, cells: list[dict[str, Any]], after: str | None, *, index: int | None = None) -> list[str]:
        """Below cell `after` (None: at the end), or at position `index` when given."""
        place: dict[str, Any] = {"after": after} if index is None else {"index": index}
        with refused():
            reply = await self.frontend.request("insert_cells", cells=cells, **place)
        return [str(i) for i in reply.get("ids") or []]

    async def replace(self, cell_id: str, **fields: Any) -> Cell:
        with refused():
            reply = await self.frontend.request("replace_cell", cell_id=cell_id, **fields)
        return to_cell(reply.get("previous") or {"id": cell_id, "cell_type": "code", "source": ""})

    async def delete(self, cell_ids: list[str]) -> list[tuple[Cell, int]]:
        with refused():
            reply = await self.frontend.request("delete_cells", cell_ids=cell_ids)
        return [(to_cell(c), int(c.get("index", -1))) for c in reply.get("deleted") or []]

    async def restore(self, cell: Cell, index: int) -> str:
        """Put a deleted cell back at `index`, outputs and all."""
        [new_id] = await self.insert([{"cell_type": cell.cell_type, "source": cell.source,
                                       "metadata": cell.metadata}], None, index=max(index, 0))
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None):
            await self.replace(new_id, outputs=cell.outputs, execution_count=cell.execution_count)
        return new_id

    async def active_cell(self) -> str | None:
        with refused():
            reply = await self.frontend.request("active_cell")
        return reply.get("cell_id")

    async def run(self, cell_ids: list[str], *, timeout_s: float,
                  on_event: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
        """The notebook runs the cells itself (only while no cell of the kernel is executing)."""
        try:
            reply = await self.frontend.request("run_cells", timeout_s=timeout_s, on_event=on_event,
                                                cell_ids=cell_ids, stop_on_error=True)
        except FrontendTimeout as exc:
            raise NotebookRefused(f"{exc} The cells may still be running in the notebook; read them later to see "
                                  "how they ended.") from None
        except FrontendError as exc:
            raise NotebookRefused(str(exc)) from None
        return list(reply.get("results") or [])
