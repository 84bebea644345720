"""Which cell shows a run, and handing that cell its outputs when the executing page cannot.

A run's live view, and the transcript that replaces it, travel as messages about the cell's execute
request, which only the page that sent it routes to the cell: after a reload (or the notebook closed and
reopened) nobody would show them. So when a page connects anew while runs are in flight, each run's cell is
handed its live view again through the extension (`relink`), and the run's final transcript, and how the
cell failed, follows the same way (`hand_over`), where the extension saves it. Without the extension the
transcript is still in the session: `%agent show` prints it. A run shown by another cell (a plan's step run
from the cell that approved it) goes through its `show` callback instead, reload or not.

This is apart from `runner.py` because it depends only on the `Run` record and the comm, not on how
prompts are started, queued or stopped.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .ending import error_output
from .notebook.frontend import Frontend, FrontendError

log = logging.getLogger(__name__)


@dataclass
class Run:
    session_id: str
    task: asyncio.Task[Any] | None = None
    started: bool = False
    stop_requested: bool = False
    done: asyncio.Event = field(default_factory=asyncio.Event)
    cell_id: str | None = None
    """The id of the cell the prompt came from, when the front end sent it (JupyterLab does)."""
    cell_source: str | None = None
    """That cell's text as the kernel received it (how a cell is found in a file when no id came)."""
    attached: bool = True
    """The cell awaits the run, and fails when the run does."""
    execution_count: int | None = None
    """The count of the cell the prompt came from."""
    page: int = 0
    """`Frontend.pages` when the prompt started: a page that connected later never saw the cell run."""
    loop: asyncio.AbstractEventLoop | None = None
    live_output: dict[str, Any] | None = None
    """The live view as a cell output (nbformat), to hand to a page that connected after the run started."""
    show: Callable[[list[dict[str, Any]]], None] | None = None
    """Where the run is shown instead of the executing cell: called with the outputs (nbformat) of the cell
    that shows it, the live view first, the transcript last (a plan's step run from the cell that approved it)."""


def moved(run: Run, frontend: Frontend) -> bool:
    """Whether the run's cell is shown by a page other than the one that ran it."""
    return run.cell_id is not None and run.page > 0 and frontend.pages != run.page


def send_cell(run: Run, frontend: Frontend, **fields: Any) -> None:
    try:
        # The outputs are the kernel's own, as its execution would have sent them: trusted.
        frontend.send("replace_cell", cell_id=run.cell_id, trusted=True, **fields)
    except FrontendError as exc:  # the new page has no extension: `%agent show` still has the transcript
        log.info("could not hand the run's cell to the reloaded page: %s", exc)


def relink(run: Run, frontend: Frontend) -> None:
    """Show the run's live view in its cell on the page that connected after the run started."""
    if run.done.is_set() or run.live_output is None:
        return
    if run.show is not None:
        run.show([run.live_output])
    elif moved(run, frontend):
        send_cell(run, frontend, outputs=[run.live_output])


def hand_over(run: Run, frontend: Frontend, bundle: dict[str, Any], error: BaseException | None) -> None:
    """Give the run's transcript (and how its cell failed) to the cell that shows it, when that is not the
    executing cell on the page that ran it; called before the live view closes, so it never shows gone."""
    if run.show is None and not moved(run, frontend):
        return
    outputs: list[dict[str, Any]] = [{"output_type": "display_data", "metadata": {}, "data": bundle}]
    if error is not None:
        outputs.append(error_output(error))
    if run.show is not None:
        run.show(outputs)
    else:
        send_cell(run, frontend, outputs=outputs, execution_count=run.execution_count)
