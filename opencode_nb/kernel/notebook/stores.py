"""The two ways to the notebook's cells: through the extension (`LiveCells`) or the file (`FileCells`). Writing
a cell's outputs and taking a turn back work on either, so they name this, not the `NotebookCells` that
chooses."""

from __future__ import annotations

from .filecells import FileCells
from .livecells import LiveCells

CellStore = LiveCells | FileCells
