"""One undo for everything a turn did: its files, its cells and its bindings; and the redo that puts them back.

The files and the session's history are the workspace's (`ws.undo`/`ws.redo`, driven by the checkpoint
store); the cells and bindings are the journal's (`notebook/undo.py`). A journal turn names its checkpoint
turn by the prompt's user message (`link`), so taking back a turn here takes back both at once, and the
history the model reads no longer shows what was taken back.

Every undo is remembered (`Journal.redoable`) so `%agent redo` puts back exactly what it took, newest undo
first, until the session's next prompt builds on the state as it is.

Anything the person changed since the agent did (a file edited, a name rebound) is theirs: in a notebook
page the undo asks (`undo_ask.py`) and writes over it only on a yes; elsewhere it keeps it and says so.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from .. import id as ids
from ..checkpoint.records import UndoReport
from ..undo.change import Confirm
from .notebook.journal import Files, Journal, Turn, Undone
from .notebook.undo import Agree
from .python.live import binding_conflict

if TYPE_CHECKING:
    from ..workspace import Workspace
    from .notebook.cells import NotebookCells

log = logging.getLogger(__name__)


def files_of(ws: Workspace) -> Any | None:
    """The workspace's checkpoint service, or None where this workspace records none."""
    return getattr(ws, "checkpoints", None)


def link(ws: Workspace, turn: Turn, journal: Journal, floor: str) -> None:
    """After a run: name the run's checkpoint turn in `turn` (its first typed user message from `floor` on),
    and record in the journal that the turn changed files, so it is kept, offered and undone with them."""
    if turn.session_id is None or floor == ids.NOT_STARTED:
        return
    try:
        messages = ws.sessions.messages(turn.session_id, since=floor)
    except Exception:
        log.exception("could not read the run's messages")
        return
    turn.message_id = next((m.message.id for m in messages
                            if m.message.role == "user" and not getattr(m.message, "synthetic", False)), None)
    service = files_of(ws)
    if turn.message_id is None or service is None:
        return
    try:
        record = next((r for r in service.turns(turn.session_id) if r.message_id == turn.message_id), None)
    except Exception:
        log.exception("could not read the run's checkpoints")
        return
    if record is not None and record.files:
        if not any(t is turn for t in journal.turns):
            journal.turns.append(turn)
        turn.record(Files(len(record.files)))


def later_in_session(journal: Journal, turn: Turn) -> list[Turn]:
    """The kept turns of `turn`'s session that started after it: an undo of `turn` takes them back too, as the
    session's files and history go back to before `turn`."""
    if turn.session_id is None:
        return []
    return [t for t in journal.turns if t is not turn and t.session_id == turn.session_id and t.started > turn.started]


class Rewind:
    """`%agent undo [--to N|MESSAGE]`, `%agent redo` and a card's Undo and Redo, over files, cells and names."""

    def __init__(self, journal: Journal, ws: Workspace, notebook: NotebookCells | None) -> None:
        self.journal = journal
        self.ws = ws
        self.notebook = notebook

    # ------------------------------------------------------------------------------------------ undo

    async def undo(self, session_id: str | None, *, to: str | int | None = None, turn: Turn | None = None,
                   confirm: Confirm | None = None) -> str:
        """Take back `turn` (and the later turns of its session), the turns from `to` on in `session_id`, or the
        latest turn; returns one report of files, cells and names."""
        if turn is None and to is None:
            turn = self.journal.latest()
            if turn is None:
                return await self._files_only(session_id, confirm)
        if turn is not None:
            session_id, message_id = turn.session_id, turn.message_id
            turns = sorted([turn, *later_in_session(self.journal, turn)], key=lambda t: t.latest, reverse=True)
        else:
            if session_id is None:
                return "No session yet in this notebook: there is no turn to take back."
            message_id, ids = self._from(session_id, to)
            turns = self.journal.session_turns(session_id, ids)
        files = await self._files("undo", session_id, message_id, confirm) if message_id else None
        said = []
        for taken in turns:
            if self.notebook is not None:
                said.append(await self.notebook.take_back(taken, agree=self._agree(confirm)))
            else:
                self.journal.remove(taken)
        report = _report(files, said, "undo")
        for taken in turns:
            taken.report = report
        self.journal.redoable.append(Undone(session_id, turns, files is not None and bool(files.turns), report))
        return report

    def _from(self, session_id: str, to: str | int | None) -> tuple[str, set[str]]:
        """The message id of turn `to` (1-based index or message id) and those of it and every later turn."""
        service = files_of(self.ws)
        if service is None:
            raise LookupError("This workspace keeps no checkpoints, so turns cannot be named: %agent undo takes "
                              "back the latest turn.")
        records = service.turns(session_id)
        if isinstance(to, str) and to.isdigit():
            to = int(to)
        chosen = next((r for r in records if (r.index == to if isinstance(to, int) else r.message_id == to)), None)
        if chosen is None:
            known = ", ".join(str(r.index) for r in records) or "none yet"
            raise LookupError(f"No turn {to} in this session (turns: {known}); %agent checkpoints lists them.")
        if chosen.undone:
            raise LookupError(f"Turn {chosen.index} is taken back already; %agent redo puts back the latest undo.")
        return chosen.message_id, {r.message_id for r in records if r.index >= chosen.index and not r.undone}

    async def _files_only(self, session_id: str | None, confirm: Confirm | None) -> str:
        """No kept turn changed cells, names or files: bindings made outside any run, or only the history."""
        runner = self.notebook.runner if self.notebook is not None else None
        if runner is not None and runner.records:
            return runner.undo()
        files = await self._files("undo", session_id, None, confirm)
        if files is None or not files.turns:
            return "There is no agent change to the namespace left to undo."
        report = files.text()
        self.journal.redoable.append(Undone(session_id, [], True, report))
        return report

    # ------------------------------------------------------------------------------------------ redo

    async def redo(self, *, turn: Turn | None = None, confirm: Confirm | None = None) -> str:
        """Put back what the latest undo took (`turn`: only if that undo took it)."""
        if not self.journal.redoable:
            return "Nothing to redo: no undo of this kernel is left to put back (a new prompt after an undo " \
                   "builds on the state as it is, so its undo cannot be redone)."
        undone = self.journal.redoable[-1]
        if turn is not None and not any(t is turn for t in undone.turns):
            return "Only the latest undo can be redone: redo the runs undone after this one first (%agent redo)."
        self.journal.redoable.pop()
        turns = list(reversed(undone.turns))
        files = await self._files("redo", undone.session_id, None, confirm) if undone.files else None
        agree = self._agree(confirm)
        said = [await self.notebook.put_back(t, agree=agree) for t in turns] if self.notebook else []
        for put in turns:
            put.report = None
        return _report(files, said, "redo")

    # ------------------------------------------------------------------------------------------ parts

    async def _files(self, action: str, session_id: str | None, message_id: str | None,
                     confirm: Confirm | None) -> UndoReport | None:
        if session_id is None or files_of(self.ws) is None or not hasattr(self.ws, action):
            return None
        try:
            if action == "undo":
                return await self.ws.undo(session_id, to=message_id, confirm=confirm)  # type: ignore[attr-defined]
            return await self.ws.redo(session_id, confirm=confirm)  # type: ignore[attr-defined]
        except Exception as exc:
            log.exception("the files' %s failed", action)
            return UndoReport(unavailable=str(exc), action="undo" if action == "undo" else "redo")

    def _agree(self, confirm: Confirm | None) -> Agree | None:
        """Asks, name by name, whether to write over what the person rebound (once per name and step)."""
        runner = self.notebook.runner if self.notebook is not None else None
        if runner is None or confirm is None:
            return None

        async def agree(run_id: str, names: list[str], redo: bool) -> set[str]:
            return {n for n in names if await confirm(binding_conflict(runner, run_id, n, redo))}

        return agree


def _report(files: UndoReport | None, said: list[str], action: str) -> str:
    """One report: the files' summary (which turns, restored, removed, kept), then the cells and names."""
    lines = [s for s in said if s and not s.startswith("Nothing ")]
    if files is not None and (files.restored or files.removed or files.unavailable or files.kept or
                              (files.turns and not lines)):
        lines.insert(0, files.text())
    if not lines:
        return "Nothing of this turn was left to undo." if action == "undo" else "Nothing was left to redo."
    return "\n".join(lines)
