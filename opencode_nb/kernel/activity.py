"""Which cell the kernel is executing now, from IPython's `pre_run_cell`/`post_run_cell` events.

Cells the front end sends run one after another on the kernel's main shell: while one is executing
(an attached `%%agent` cell awaiting its agent included), any other waits behind it. So whether a cell
is running decides whether the front end may be asked to run cells for an agent, and the running cell's
source, as the kernel received it, is how a cell is recognised in a notebook file that has no ids in
its requests (nbclient sends none).

ipykernel fires `post_run_cell` in a `finally`, with `None` when the cell was interrupted, so one slot
(not a counter matched by result) keeps the state right.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunningCell:
    source: str
    """The cell's text as the kernel received it, before any transformation."""
    cell_id: str | None
    """The front end's id for the cell, when its request carried one (JupyterLab does; nbclient does not)."""
    started: float
    """`time.time()` when it started."""


class CellActivity:
    def __init__(self) -> None:
        self.running: RunningCell | None = None
        self.last_finished: float = 0.0
        """`time.time()` when the latest cell ended; 0 when none has since the extension loaded."""
        self._shell: Any = None

    @property
    def busy(self) -> bool:
        """A cell is executing on the main shell, so cells the front end runs now would queue behind it."""
        return self.running is not None

    def register(self, shell: Any) -> None:
        self._shell = shell
        shell.events.register("pre_run_cell", self._started)
        shell.events.register("post_run_cell", self._ended)

    def unregister(self) -> None:
        if self._shell is None:
            return
        for event, callback in (("pre_run_cell", self._started), ("post_run_cell", self._ended)):
            with contextlib.suppress(ValueError):
                self._shell.events.unregister(event, callback)
        self._shell = None

    def _started(self, info: Any) -> None:
        self.running = RunningCell(source=getattr(info, "raw_cell", "") or "",
                                   cell_id=getattr(info, "cell_id", None), started=time.time())

    def _ended(self, result: Any) -> None:
        self.running = None
        self.last_finished = time.time()
