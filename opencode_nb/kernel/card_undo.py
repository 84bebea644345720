"""The Undo on a finished run's card: what a page asks about a run's turn, and the undo it asks for.

When a run ends its live view gives way to the static transcript, which must read the same without a
kernel (the saved notebook, nbviewer, GitHub). So the Undo is not a widget: a saved widget whose model is
gone reads "Error displaying widget: model not found" (measured in JupyterLab 4.6 with the kernel shut
down). Instead the transcript carries `RUN_MIME`, naming the run's turn. The JupyterLab extension draws
the transcript's HTML with an Undo bar under it and asks the kernel over the comm what the turn would take
back (`undo_state`); only a kernel whose journal holds the turn offers anything, so a card saved by
another kernel (or before a restart) shows the transcript alone, as every reader without the extension
does. A reloaded page asks again, so the Undo lasts as long as the kernel does.

The Undo takes back the turn's files too (and every later turn of its session, as `%agent undo --to`
does), and the session's history with them. After an undo the card offers Redo (`redoable` in the state)
while that undo is the latest one and no new prompt of the session built on it. A file or a name the
person changed since is kept: the card has no place to ask, so the report names it and `%agent undo` in a
cell asks instead. The report is the undo's `Outcome` as sentences, one a line (the card's note keeps the
line breaks), the same sentences `%agent undo` prints.

Requests arrive on the comm's thread. The journal and the notebook belong to the kernel's loop, so the
work is handed to it (`handoff.run_on`) and the reply sent from there.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..handoff import run_on
from ..undo.engine import Engine
from .notebook.journal import KEEP_TURNS, Journal, Turn
from .notebook.undo import conflicts, takes_back
from .rewind import KINDS, CellsChange, Rewind, later_in_session

if TYPE_CHECKING:
    from ..workspace import Workspace
    from .notebook.cells import NotebookCells
    from .notebook.frontend import Frontend

log = logging.getLogger(__name__)

RUN_MIME = "application/vnd.opencode-nb.run+json"
"""The mime type of a finished run's transcript in the extension's eyes: `{"turn": <id>}` beside its HTML."""

Reply = Callable[[dict[str, Any]], None]


def run_data(turn: Turn) -> dict[str, str] | None:
    """What a transcript carries under `RUN_MIME`; None for a turn that changed nothing (nothing to undo) and
    proposed no cell change that accepting would make part of it."""
    return {"turn": turn.id} if turn.changes or turn.proposed else None


class CardUndo:
    """Answers the page about turns (`undo_state`) and undoes the one a card names (`undo`)."""

    def __init__(self, journal: Journal, notebook: Callable[[], NotebookCells | None],
                 loop: Callable[[], asyncio.AbstractEventLoop | None],
                 workspace: Callable[[], Workspace | None] = lambda: None) -> None:
        """
        Args:
            notebook: the notebook's cells once the workspace is built, else None (no run yet: no turn either).
            loop: the kernel's loop, known once a prompt ran (before that no turn exists).
            workspace: the workspace once built, for the turn's files and history.
        """
        self.journal = journal
        self.notebook = notebook
        self.loop = loop
        self.workspace = workspace
        self._tasks: set[asyncio.Task[None]] = set()

    def attach(self, frontend: Frontend) -> None:
        frontend.answer("undo_state", self._state_asked)
        frontend.answer("undo", self._undo_asked)
        frontend.answer("redo", self._redo_asked)

    # ------------------------------------------------------------------------------------------ answers

    def state(self, turn_id: str) -> dict[str, Any]:
        """What the turn's card should offer: `undoable` (with `summary`), `undone` (with `report`), `forgotten`,
        or `unknown` (not a turn of this kernel, or nothing of it is left to undo)."""
        turn = self.journal.find(turn_id)
        notebook = self.notebook()
        if turn is not None and notebook is not None:
            summary = takes_back(turn, notebook.runner)
            if not summary:
                return {"state": "unknown"}
            later = len(later_in_session(self.journal, turn))
            if later:
                summary += f", and the {later} later run{'s' * (later != 1)} of its session"
            return {"state": "undoable", "summary": summary}
        undone = self.journal.undone.get(turn_id)
        if undone is not None:
            state: dict[str, Any] = {"state": "undone", "report": undone.report or "Undone."}
            latest = self.journal.redoable[-1] if self.journal.redoable else None
            if latest is not None and any(t is undone for t in latest.turns):
                state["redoable"] = True
            return state
        if turn_id in self.journal.forgotten:
            return {"state": "forgotten", "report": f"Too old to undo: the latest {KEEP_TURNS} runs that changed "
                                                    "something can be undone."}
        return {"state": "unknown"}

    async def undo(self, turn_id: str) -> dict[str, Any]:
        """Undo the turn, unless it is gone, already undone, or a later turn changed the same cells or names."""
        turn = self.journal.find(turn_id)
        notebook = self.notebook()
        if turn is None or notebook is None:
            state = self.state(turn_id)
            why = {"undone": f"Already undone: {state.get('report')}", "forgotten": state.get("report")}.get(
                state["state"], "This kernel has no record of that run (it was restarted, or the run was made by "
                                "another kernel), so it cannot undo it.")
            return {"ok": False, "error": why, **state}
        blocked = conflicts(turn, self.journal.later(turn), notebook.runner)
        if blocked is not None:
            return {"ok": False, "error": blocked, **self.state(turn_id)}
        ws = self.workspace()
        if ws is None:  # no workspace yet, so no files: the turn's cells and names, told the same way
            done = await Engine(KINDS).run([CellsChange(self.journal, notebook, turn, None)], "undo")
            turn.report = done.report()
        else:
            done = await Rewind(self.journal, ws, notebook).undo(turn.session_id, turn=turn)
        return {"ok": True, **self.state(turn_id), "report": done.report()}

    async def redo(self, turn_id: str) -> dict[str, Any]:
        """Put back what the undo of this turn took, if that undo is still the latest one."""
        turn = self.journal.undone.get(turn_id)
        notebook, ws = self.notebook(), self.workspace()
        if turn is None or notebook is None or ws is None:
            return {"ok": False, "error": "This run is not undone here, so there is nothing to redo.",
                    **self.state(turn_id)}
        if self.state(turn_id).get("redoable") is None:
            return {"ok": False, "error": "Only the latest undo can be redone, and only until the next prompt of "
                                          "its session: this one cannot be redone any more.", **self.state(turn_id)}
        done = await Rewind(self.journal, ws, notebook).redo(turn=turn)
        return {"ok": True, **self.state(turn_id), "report": done.report()}

    # ------------------------------------------------------------------------------------------ the comm

    def _state_asked(self, request: dict[str, Any], reply: Reply) -> None:
        turns = [t for t in request.get("turns") or [] if isinstance(t, str)]
        run_on(self.loop(), lambda: reply({"states": {t: self.state(t) for t in turns}}))

    def _undo_asked(self, request: dict[str, Any], reply: Reply) -> None:
        self._start(request, reply, "undo")

    def _redo_asked(self, request: dict[str, Any], reply: Reply) -> None:
        self._start(request, reply, "redo")

    def _start(self, request: dict[str, Any], reply: Reply, action: str) -> None:
        turn_id = request.get("turn")
        loop = self.loop()
        if not isinstance(turn_id, str) or loop is None or loop.is_closed():
            reply({"ok": False, "error": f"This kernel has no record of that run, so it cannot {action} it."})
            return

        def start() -> None:
            task = asyncio.ensure_future(self._do_and_reply(turn_id, reply, action))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

        run_on(loop, start)

    async def _do_and_reply(self, turn_id: str, reply: Reply, action: str) -> None:
        try:
            result = await (self.undo(turn_id) if action == "undo" else self.redo(turn_id))
        except Exception as exc:
            log.exception("%s of a run from its card failed", action)
            result = {"ok": False, "error": f"The {action} failed: {exc}"}
        reply(result)
