"""A step's cell filled by the kernel while another cell executes: the step run on that cell's behalf.

Cells the front end runs queue behind the busy cell on the kernel's shell channel, so the steps of a plan
approved in a cell (or run by `%agent plan run`) cannot run as cells of their own before that cell ends,
and Run All would go on with the cells it queued before them. The kernel runs each step itself instead, in
order, while the approving cell awaits it, and shows the step in the step's own cell through the
extension's `replace_cell` (labextension/PROTOCOL.md): a line saying what runs, the run's live view, then
its transcript and how it ended, with the approving cell's execution count. The outputs are the kernel's
own, so they are sent trusted (widgets and HTML render as an execution's would); the extension saves the
notebook after each change, so what a step did survives a reload.
"""

from __future__ import annotations

import logging
from typing import Any

from ..notebook.frontend import Frontend, FrontendError

log = logging.getLogger(__name__)


def text_output(text: str, *, stream: str = "stdout") -> dict[str, Any]:
    return {"output_type": "stream", "name": stream, "text": text.rstrip("\n") + "\n"}


class StepCellOutputs:
    """The outputs of one step's cell: a leading line, the run's outputs, and the line that ends it."""

    def __init__(self, frontend: Frontend, cell_id: str, *, lead: str, execution_count: int | None) -> None:
        self.frontend = frontend
        self.cell_id = cell_id
        self.execution_count = execution_count
        self.lead = [text_output(lead)]
        self.run: list[dict[str, Any]] = []
        self.tail: list[dict[str, Any]] = []
        self.ended = False

    def show(self, outputs: list[dict[str, Any]]) -> None:
        """The runner's outputs for the cell: the live view, later the transcript (and how the run failed)."""
        self.run = list(outputs)
        self._send()

    def end(self, *, said: str | None = None, error: dict[str, Any] | None = None) -> None:
        """The step is over: its cell gets the count of the cell that ran it, and `said` or `error` last.

        An `error` stands in for the runner's own error output: one failure reads as one message.
        """
        if error is not None:
            self.run = [o for o in self.run if o.get("output_type") != "error" and o.get("name") != "stderr"]
        self.tail = [error] if error is not None else [text_output(said)] if said else []
        self.ended = True
        self._send()

    def _send(self) -> None:
        try:
            self.frontend.send("replace_cell", cell_id=self.cell_id, trusted=True,
                               outputs=[*self.lead, *self.run, *self.tail],
                               execution_count=self.execution_count if self.ended else None)
        except FrontendError as exc:  # the page went away: the session and the planning cell still say it
            log.info("could not show the step in its cell: %s", exc)
