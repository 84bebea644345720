"""One undo for everything a turn did: its files, its cells and its bindings; and the redo that puts them back.

The files and the session's history are the workspace's (`ws.undo`/`ws.redo`, driven by the checkpoint
store); the cells and bindings are the journal's (`notebook/undo.py`). A journal turn names its checkpoint
turn by the prompt's user message (`link`), so taking back a turn here takes back both at once, and the
history the model reads no longer shows what was taken back.

Every undo is remembered (`Journal.redoable`) so `%agent redo` puts back exactly what it took, newest undo
first, until the session's next prompt builds on the state as it is.

Anything the person changed since the agent did (a file edited, a name rebound) is theirs: in a notebook
page the undo asks (`undo_ask.py`) and writes over it only on a yes; elsewhere it keeps it and says so.

Each part is a `Change` (`FilesChange`, `CellsChange`, `BindingChange`) and one `Engine` walks them, so the
report is the one `Outcome` they make together; a new kind of change registers in `KINDS` and nowhere else.
Every surface (`%agent undo`, `%agent redo`, a card's note) shows that outcome's sentences.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .. import id as ids
from ..checkpoint.records import UndoReport
from ..undo.change import Change, Confirm, Conflict, Description
from ..undo.engine import Engine
from ..undo.outcome import Direction, Outcome
from .notebook.journal import Files, Journal, Turn, Undone
from .notebook.undo import Agree, cell_conflicts, walk_turn
from .python.live import BindingChange, binding_conflict

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
    journal.save(turn)  # kept with its checkpoint turn's name, so `--to N` finds it after a restart
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
        journal.save(turn)


def later_in_session(journal: Journal, turn: Turn) -> list[Turn]:
    """The kept turns of `turn`'s session that started after it: an undo of `turn` takes them back too, as the
    session's files and history go back to before `turn`."""
    if turn.session_id is None:
        return []
    return [t for t in journal.turns if t is not turn and t.session_id == turn.session_id and t.started > turn.started]


class FilesChange(Change):
    """The files and the history of a span of the session's turns, through `ws.undo`/`ws.redo`.

    The checkpoint service finds the person's edits only as it walks the files, so it asks `confirm` itself, at
    the moment it would write; `conflicts` has nothing to ask beforehand. `report` keeps what it did, for the
    redo record."""

    def __init__(self, ws: Workspace, session_id: str, message_id: str | None, confirm: Confirm | None) -> None:
        self.ws, self.session_id, self.message_id, self.confirm = ws, session_id, message_id, confirm
        self.report: UndoReport | None = None

    @property
    def description(self) -> Description:
        return Description("file", self.message_id or self.session_id)

    async def conflicts(self, direction: Direction) -> list[Conflict]:
        return []

    async def apply(self, direction: Direction, overwrite: Collection[str]) -> Outcome:
        """What the service did; empty when it had no turn to take back (or put back) and nothing to say."""
        try:
            if direction == "undo":
                report = await self.ws.undo(self.session_id, to=self.message_id, confirm=self.confirm)
            else:
                report = await self.ws.redo(self.session_id, confirm=self.confirm)
        except Exception as exc:
            log.exception("the files' %s failed", direction)
            report = UndoReport(unavailable=str(exc), action=direction)
        self.report = report
        if not (report.restored or report.removed or report.kept or report.failed or report.not_undone or
                report.unavailable is not None):
            return Outcome(direction)  # no turn, or only the history: `told` says so when nothing else did
        done = report.outcome()
        removed, recreated = set(report.removed), self._recreated(report)
        done.items = [replace(i, effect="removed" if i.name in removed else "recreated" if i.name in recreated
                              else "restored") if i.kind == "file" and i.status == "restored" else i
                      for i in done.items]
        return done

    def _recreated(self, report: UndoReport) -> set[str]:
        """Files written back where they were gone: for an undo, those its turns deleted (the latest status of
        each in them); for a redo, those they created (the earliest)."""
        service = files_of(self.ws)
        if service is None:
            return set()
        try:
            records = [r for r in service.turns(self.session_id) if r.message_id in report.turns]
        except Exception:
            log.exception("could not read which files the turns created or deleted")
            return set()
        status: dict[str, str] = {}
        for record in (records if report.action == "undo" else reversed(records)):
            status.update((f.path, f.status) for f in record.files)
        gone = "deleted" if report.action == "undo" else "added"
        return {path for path, was in status.items() if was == gone}

    def told(self, outcome: Outcome) -> Outcome:
        """The outcome of a walk this change was part of: when the turns went back in the history alone and
        nothing else was done, it says which turns."""
        if not outcome.items and self.report is not None and self.report.turns:
            for index in self.report.indexes or range(1, len(self.report.turns) + 1):
                outcome.add("restored", "turn", f"turn {index}", effect="history")
        return outcome


class CellsChange(Change):
    """One journal turn's cells and the live runs inside it, in one walk (`walk_turn`).

    A name the person rebound is asked through `agree` just before its run is walked, so the agent's own later
    runs count as the agent's; a cell the person edited since is asked about beforehand (`conflicts`), as a file is."""

    def __init__(self, journal: Journal, notebook: NotebookCells | None, turn: Turn, agree: Agree | None) -> None:
        self.journal, self.notebook, self.turn, self.agree = journal, notebook, turn, agree

    @property
    def description(self) -> Description:
        return Description("cell", self.turn.cell_id or self.turn.id)

    async def conflicts(self, direction: Direction) -> list[Conflict]:
        """The cells the person edited since the agent (or the undo) left them: asked before anything is written,
        as files are ("Keep mine" keeps them)."""
        store = self.notebook.store_or_why()[0] if self.notebook is not None else None
        return await cell_conflicts(self.turn, store, direction) if store is not None else []

    async def apply(self, direction: Direction, overwrite: Collection[str]) -> Outcome:
        """Undo: the turn leaves the journal, its cells and names go back. Redo: they come back and so does it.
        Without a notebook an undo only forgets the turn and a redo has nothing to put back."""
        if direction == "undo":
            self.journal.remove(self.turn)
        if self.notebook is None:
            return Outcome(direction)
        store, why_not = self.notebook.store_or_why()  # the refusal `take_back` reports too
        done = await walk_turn(self.turn, store, self.notebook.runner, direction, why_not=why_not, agree=self.agree,
                               overwrite=overwrite)
        if direction == "redo":
            self.journal.put_back(self.turn)
        return done


KINDS: Sequence[type[Change]] = (FilesChange, CellsChange, BindingChange)
"""Every kind of change an undo here takes back: the engine refuses any other."""


class Rewind:
    """`%agent undo [--to N|MESSAGE]`, `%agent redo` and a card's Undo and Redo, over files, cells and names."""

    def __init__(self, journal: Journal, ws: Workspace, notebook: NotebookCells | None) -> None:
        self.journal = journal
        self.ws = ws
        self.notebook = notebook
        self.engine = Engine(KINDS)

    # ------------------------------------------------------------------------------------------ undo

    async def undo(self, session_id: str | None, *, to: str | int | None = None, turn: Turn | None = None,
                   confirm: Confirm | None = None) -> Outcome:
        """Take back `turn` (and the later turns of its session), the turns from `to` on in `session_id`, or the
        latest turn; returns one outcome of files, cells and names."""
        if turn is None and to is None:
            turn = self.journal.latest()
            if turn is None:
                return await self._files_only(session_id, confirm)
        if turn is not None:
            session_id, message_id = turn.session_id, turn.message_id
            turns = sorted([turn, *later_in_session(self.journal, turn)], key=lambda t: t.latest, reverse=True)
        else:
            session_id = session_id or self._kept_session()
            if session_id is None:
                return Outcome("undo", nothing="No session yet in this notebook: there is no turn to take back.")
            message_id, ids = self._from(session_id, to)
            turns = self.journal.session_turns(session_id, ids)
        files = self._files("undo", session_id, message_id, confirm) if message_id else None
        agree = self._agree(confirm)
        cells: list[Change] = [CellsChange(self.journal, self.notebook, t, agree) for t in reversed(turns)]
        # The files are the turns' latest change to undo, so they go back (and are told) first.
        done = await self.engine.run([*cells, *([files] if files else [])], "undo", confirm)
        done = files.told(done) if files else done
        done.runs = _runs(turns, files)
        report = done.report()
        for taken in turns:
            taken.report = report
        took_files = files is not None and files.report is not None and bool(files.report.turns)
        self.journal.push_undo(Undone(session_id, turns, took_files, report))
        return done

    def _kept_session(self) -> str | None:
        """The session of this notebook's latest kept turn: after a restart the kernel has chosen none yet."""
        latest = self.journal.latest()
        return latest.session_id if latest is not None else None

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

    async def _files_only(self, session_id: str | None, confirm: Confirm | None) -> Outcome:
        """No kept turn changed cells, names or files: bindings made outside any run, or only the history."""
        runner = self.notebook.runner if self.notebook is not None else None
        if runner is not None and runner.records:
            latest = BindingChange(runner, next(reversed(runner.records)))
            return await self.engine.run([latest], "undo", confirm)
        files = self._files("undo", session_id, None, confirm)
        done = await self.engine.run([files], "undo", confirm) if files is not None else Outcome("undo")
        if files is None or files.report is None or not files.report.turns:
            return Outcome("undo", nothing="There is no agent change to the namespace left to undo.")
        done = files.told(done)
        done.runs = _runs([], files)
        self.journal.push_undo(Undone(session_id, [], True, done.report()))
        return done

    # ------------------------------------------------------------------------------------------ redo

    async def redo(self, *, turn: Turn | None = None, confirm: Confirm | None = None) -> Outcome:
        """Put back what the latest undo took (`turn`: only if that undo took it)."""
        if not self.journal.redoable:
            return Outcome("redo", nothing="Nothing to redo: no undo of this kernel is left to put back (a new "
                                           "prompt after an undo builds on the state as it is, so its undo cannot "
                                           "be redone).")
        undone = self.journal.redoable[-1]
        if turn is not None and not any(t is turn for t in undone.turns):
            return Outcome("redo", nothing="Only the latest undo can be redone: redo the runs undone after this one "
                                           "first (%agent redo).")
        self.journal.pop_undo()
        turns = list(reversed(undone.turns))
        files = self._files("redo", undone.session_id, None, confirm) if undone.files else None
        agree = self._agree(confirm)
        cells: list[Change] = [CellsChange(self.journal, self.notebook, t, agree) for t in turns] \
            if self.notebook else []
        done = await self.engine.run([*([files] if files else []), *cells], "redo", confirm)
        done = files.told(done) if files else done
        done.runs = _runs(turns, files)
        for put in turns:
            put.report = None
        return done

    # ------------------------------------------------------------------------------------------ parts

    def _files(self, action: Direction, session_id: str | None, message_id: str | None,
               confirm: Confirm | None) -> FilesChange | None:
        """The session's files as a change, or None where this workspace keeps no checkpoints to undo them by."""
        if session_id is None or files_of(self.ws) is None or not hasattr(self.ws, action):
            return None
        return FilesChange(self.ws, session_id, message_id, confirm)

    def _agree(self, confirm: Confirm | None) -> Agree | None:
        """Asks, name by name, whether to write over what the person rebound (once per name and step)."""
        runner = self.notebook.runner if self.notebook is not None else None
        if runner is None or confirm is None:
            return None

        async def agree(run_id: str, names: list[str], redo: bool) -> set[str]:
            return {n for n in names if await confirm(binding_conflict(runner, run_id, n, redo))}

        return agree


def _runs(turns: list[Turn], files: FilesChange | None) -> int:
    """How many runs a walk took back or put back, for its sentences: the journal's turns, or the history's."""
    taken = len(files.report.turns) if files is not None and files.report is not None else 0
    return max(len(turns), taken, 1)
