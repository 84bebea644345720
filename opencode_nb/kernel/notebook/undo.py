"""Taking back one turn: its cell changes and its live bindings, newest first, never over the person's edits;
and putting back what an undo took (`redo_turn`), oldest first, with the same care.

A cell is changed back only if it still reads exactly as the agent left it; otherwise the person has
edited it since, and it is named in the report and left as it is. A deleted cell comes back at its old
place with its outputs.

Any kept turn can be taken back, not only the latest (a finished run's card offers its own turn), so
before that `conflicts` looks for later turns that changed the same cells or names: undoing the earlier
turn under them would pull the ground from under the later one's work, so the person is told which run to
undo first. `takes_back` says in a few words what an undo would take back, for the card's button.

A name the person rebound since the run is left as it is unless `agree` (asked just before that run is
undone, so the agent's own later runs count as the agent's) says the person wants it written over. Files
are not this module's: the checkpoint store takes them back.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import astuple
from typing import TYPE_CHECKING

from ...tool.context import NotebookRefused
from ...undo.change import Conflict
from ...undo.outcome import Direction, Outcome
from ...values import Cell
from ..python.live import LiveRunner
from .journal import Deleted, Files, GoneRun, Inserted, LiveRun, Reinsert, Replaced, Restored, Turn

if TYPE_CHECKING:
    from .stores import CellStore


Agree = Callable[[str, list[str], bool], Awaitable[Collection[str]]]
"""(run id, names the person rebound since, redo?) → the names the person agrees to have written over."""


async def _agreed(agree: Agree | None, runner: LiveRunner, run_id: str, redo: bool) -> Collection[str]:
    changed = runner.changed_since(run_id, redo=redo)
    return await agree(run_id, changed, redo) if changed and agree is not None else ()


async def undo_turn(turn: Turn, store: CellStore | None, runner: LiveRunner, *, why_not: str | None = None,
                    agree: Agree | None = None) -> str:
    """Undo `turn`; returns one short report. `store` is None when cells cannot be changed (`why_not` says why);
    `agree`: asks about names the person rebound since (none: they are kept)."""
    return _said(await walk_turn(turn, store, runner, "undo", why_not=why_not, agree=agree))


async def redo_turn(turn: Turn, store: CellStore | None, runner: LiveRunner, *, why_not: str | None = None,
                    agree: Agree | None = None) -> str:
    """Put back what the latest undo of `turn` took, oldest first; the turn's changes become what was put back,
    so it can be undone again. A cell the person changed since the undo is left as it is and named."""
    return _said(await walk_turn(turn, store, runner, "redo", why_not=why_not, agree=agree))


def _said(outcome: Outcome) -> str:
    return f"Nothing of this turn was left to {outcome.direction}." if outcome.empty else outcome.text()


async def walk_turn(turn: Turn, store: CellStore | None, runner: LiveRunner, direction: Direction, *,
                    why_not: str | None = None, agree: Agree | None = None,
                    overwrite: Collection[str] = ()) -> Outcome:
    """The one walk both take: undo over the turn's changes newest first, redo over what its latest undo did,
    newest of those first (so oldest of the turn's own first); each step leaves what the other direction
    walks next."""
    walk = _Walk(store, runner, direction, overwrite)
    for step in _steps(turn, direction):
        await walk.step(step, agree)
    if direction == "undo":
        turn.undid = [m for m in walk.made if isinstance(m, LiveRun | Reinsert | Replaced | Restored)]
    else:
        files = [c for _, c in turn.changes if isinstance(c, Files)]
        turn.changes = []
        for change in [*walk.made, *files]:
            if isinstance(change, LiveRun | Inserted | Replaced | Deleted | Files):
                turn.record(change)
        turn.undid = []
    outcome = walk.outcome(why_not)
    if direction == "undo":
        turn.report = _said(outcome)
    return outcome


Step = Inserted | Replaced | Deleted | LiveRun | Reinsert | Restored
"""A step either walk takes: a change of the turn (undo) or what an undo did (redo)."""


def _steps(turn: Turn, direction: Direction) -> list[Step]:
    if direction == "undo":
        return [c for _, c in reversed(turn.changes) if not isinstance(c, Files)]
    return list(reversed(turn.undid))


async def cell_conflicts(turn: Turn, store: CellStore, direction: Direction) -> list[Conflict]:
    """The cells the person changed since the agent (or the undo) left them, which walking `direction` would
    write over or delete: one `Conflict` each, by cell id, its diff from what was left to what is there now.
    Only each cell's first step counts: later steps of the walk meet what the earlier ones leave."""
    try:
        current = {c.id: c for c in (await store.read(max_output_chars=0)).cells}
    except NotebookRefused:
        return []
    seen: set[str] = set()
    found: list[Conflict] = []
    for step in _steps(turn, direction):
        if isinstance(step, LiveRun | Deleted | Reinsert) or step.cell_id in seen:
            continue
        seen.add(step.cell_id)
        cell = current.get(step.cell_id)
        left = step.source if isinstance(step, Inserted | Restored) else \
            step.after_source if direction == "undo" else step.before_source
        if cell is None or cell.source == left:
            continue
        diff = "".join(difflib.unified_diff(left.splitlines(True), cell.source.splitlines(True),
                                            f"cell {step.cell_id} as left", f"cell {step.cell_id} now"))
        what = "delete it" if isinstance(step, Inserted | Restored) else "write the other version over it"
        found.append(Conflict(step.cell_id, diff, f"you edited this cell ({_named(step.cell_id, cell.source)}) "
                                                  f"after the agent; {direction} would {what}"))
    return found

_SAID: dict[Direction, list[tuple[str, str]]] = {
    "undo": [("delete", "deleted the inserted {}"), ("replace", "restored the source of {}"),
             ("restore", "put back the deleted {}")],
    "redo": [("restore", "put back the inserted {}"), ("replace", "changed the source of {} again"),
             ("delete", "deleted {} again")],
}
"""What each direction says it did to cells, in the order it says it."""


class _Walk:
    """One walk's state: the cells as they are now, what was done by how, and what the next walk will undo."""

    def __init__(self, store: CellStore | None, runner: LiveRunner, direction: Direction,
                 overwrite: Collection[str] = ()) -> None:
        self.store, self.runner, self.direction = store, runner, direction
        self.overwrite = set(overwrite)
        """Cells the person agreed to have written over (asked through the undo's `Confirm`)."""
        self.done: dict[str, list[str]] = {"delete": [], "replace": [], "restore": []}
        self.skipped: list[str] = []
        self.gone: list[str] = []
        self.failed: list[str] = []
        self.bindings: list[str] = []
        self.cells_left: list[str] = []
        """The cells of the steps not walked, no notebook being writable: each named in the report."""
        self.gone_names: list[str] = []
        """Names a run of the kernel before a restart bound: they went with it."""
        self.made: list[Step | Files] = []
        self.ids: dict[str, str] = {}
        """Old cell id → the id the cell has now it was put back."""
        self.current: dict[str, Cell] | None = None
        self.items = Outcome(direction)

    async def step(self, step: Step, agree: Agree | None) -> None:
        if isinstance(step, GoneRun):
            self.gone_names += [n for n in step.names if n not in self.gone_names]
            return
        if isinstance(step, LiveRun):
            await self._binding(step, agree)
            return
        if self.store is None:
            self.cells_left.append(_named(_step_cell(step), _step_source(step, self.direction)))
            return
        if self.current is None:
            self.current = {c.id: c for c in (await self.store.read(max_output_chars=0)).cells}
        try:
            if isinstance(step, Inserted | Restored):
                await self._delete(self.store, self.current, step.cell_id, step.source)
            elif isinstance(step, Deleted | Reinsert):
                await self._restore(self.store, self.current, Cell.model_validate(step.cell), step.index)
            else:
                await self._replace(self.store, self.current, step)
        except NotebookRefused as exc:
            self.failed.append(f"{_step_cell(step)}: {exc}")
            self.items.add("failed", "cell", _step_cell(step), str(exc), told=True)

    async def _binding(self, step: LiveRun, agree: Agree | None) -> None:
        redo = self.direction == "redo"
        if step.run_id in (self.runner.undone if redo else self.runner.records):
            overwrite = await _agreed(agree, self.runner, step.run_id, redo)
            done = self.runner.step(step.run_id, self.direction, overwrite)
            self.bindings += done.said
            self.items.items += done.items
            self.made.append(step)

    async def _delete(self, store: CellStore, current: dict[str, Cell], cell_id: str, source: str) -> None:
        """Delete the cell the agent made (or the undo put back), if it still reads as it was left."""
        cell = current.get(cell_id)
        if self._left(cell_id, cell is None, cell is not None and cell.source != source, source):
            return
        for old, index in await store.delete([cell_id]):
            self.made.append(Reinsert(old.model_dump(), index) if self.direction == "undo" else
                             Deleted(old.model_dump(), index))
        del current[cell_id]
        self._did("delete", cell_id)

    async def _restore(self, store: CellStore, current: dict[str, Cell], cell: Cell, index: int) -> None:
        """Put a deleted cell (or one the undo deleted) back at its place, with its outputs."""
        new_id = await store.restore(cell, index)
        self.ids[cell.id] = new_id
        current[new_id] = cell.model_copy(update={"id": new_id})
        if self.direction == "undo":
            self.made.append(Restored(new_id, cell.source))
            self._did("restore", cell.id if new_id == cell.id else f"{cell.id} (now {new_id})")
        else:
            self.made.append(Inserted(new_id, cell.source))
            self._did("restore", new_id)

    async def _replace(self, store: CellStore, current: dict[str, Cell], step: Replaced) -> None:
        """Write one side of an edit over the other, if the cell still reads as the other side."""
        undo = self.direction == "undo"
        cell_id = self.ids.get(step.cell_id, step.cell_id)
        source, kind = (step.before_source, step.before_type) if undo else (step.after_source, step.after_type)
        was, was_kind = (step.after_source, step.after_type) if undo else (step.before_source, step.before_type)
        cell = current.get(cell_id)
        if self._left(cell_id, cell is None, cell is not None and (cell.source != was or cell.cell_type != was_kind),
                      was):
            return
        assert cell is not None
        await store.replace(cell_id, source=source, cell_type=kind)
        current[cell_id] = cell.model_copy(update={"source": source, "cell_type": kind})
        self.made.append(step if undo else Replaced(cell_id, *astuple(step)[1:]))
        self._did("replace", cell_id)

    def _left(self, cell_id: str, gone: bool, edited: bool, source: str) -> bool:
        """Whether the cell is left alone: no longer in the notebook (named, with its first line, since what the
        agent did to it could not be taken back), or changed by the person since."""
        edited = edited and cell_id not in self.overwrite
        if gone:
            self.gone.append(_named(cell_id, source))
            self.items.add("unavailable", "cell", _named(cell_id, source), "it is no longer in the notebook",
                           told=True)
        elif edited:
            self.skipped.append(cell_id)
            self.items.add("kept", "cell", cell_id, "changed since", told=True)
        return gone or edited

    def _did(self, how: str, cell_id: str) -> None:
        self.done[how].append(cell_id)
        self.items.add("restored", "cell", cell_id, told=True,
                       effect="took_out" if how == "delete" else "put_back" if how == "restore" else "restored")

    def outcome(self, why_not: str | None) -> Outcome:
        """The walk's report, phrased as each direction says it, with its items."""
        verb = self.direction
        said = [phrase.format(_cells(self.done[how])) for how, phrase in _SAID[verb] if self.done[how]]
        parts = [f"{'Undone' if verb == 'undo' else 'Redone'} in the notebook: {'; '.join(said)}."] if said else []
        parts += self.bindings
        since = "the agent left them" if verb == "undo" else "the undo"
        if self.skipped:
            parts.append(f"Left as they are, changed since {since}: {', '.join(self.skipped)}.")
        if self.gone:
            parts.append(f"Could not {verb} cell {', '.join(self.gone)}: no longer in the notebook.")
        if self.failed:
            parts.append(f"Could not {verb} {'; '.join(self.failed)}")
        if self.cells_left:
            left = ", ".join(dict.fromkeys(self.cells_left))
            parts.append(f"Could not {verb} cell {left}: {why_not}")
            self.items.add("unavailable", "cell", left, why_not or "", told=True)
        if self.gone_names:
            bound = ", ".join(self.gone_names)
            why = "the agent bound them in the kernel that ran before the restart, and they went with it"
            parts.append(f"Could not {verb} the names {bound}: {why}.")
            self.items.add("unavailable", "binding", bound, why, told=True)
        text = " ".join(parts).strip()
        if text:
            self.items.said.append(text)
        return self.items


def _named(cell_id: str, source: str) -> str:
    """A cell as the report names it: its first line, then its id ("'df.plot()' (c3)")."""
    line = next((ln.strip() for ln in source.splitlines() if ln.strip()), "")
    line = line if len(line) <= 40 else line[:39] + "…"
    return f"'{line}' ({cell_id})" if line else f"({cell_id}, empty)"


def _step_source(step: Inserted | Replaced | Deleted | Reinsert | Restored, direction: Direction) -> str:
    """The source that step leaves (or left) in the cell: what the person would recognise it by."""
    if isinstance(step, Deleted | Reinsert):
        return str(step.cell.get("source", ""))
    if isinstance(step, Replaced):
        return step.after_source if direction == "undo" else step.before_source
    return step.source


def _step_cell(step: Inserted | Replaced | Deleted | Reinsert | Restored) -> str:
    return str(step.cell["id"]) if isinstance(step, Deleted | Reinsert) else step.cell_id


def takes_back(turn: Turn, runner: LiveRunner) -> str | None:
    """What undoing `turn` would take back ("2 cells inserted, 1 binding (df2)"), or None: nothing is left."""
    inserted: list[str] = []
    edited: list[str] = []
    deleted = 0
    files = 0
    for _, change in turn.changes:
        if isinstance(change, Files):
            files += change.count
        elif isinstance(change, Inserted):
            inserted.append(change.cell_id)
        elif isinstance(change, Replaced) and change.cell_id not in inserted and change.cell_id not in edited:
            edited.append(change.cell_id)
        elif isinstance(change, Deleted):
            if change.cell["id"] in inserted:  # made and dropped by the same turn: nothing to take back
                inserted.remove(change.cell["id"])
            else:
                deleted += 1
    said = [f"{_count(files, 'file')} changed"] if files else []
    said += [f"{_count(len(inserted), 'cell')} inserted"] if inserted else []
    said += [f"{_count(len(edited), 'cell')} edited"] if edited else []
    said += [f"{_count(deleted, 'cell')} deleted"] if deleted else []
    names = _names(turn, runner)
    if names:
        said.append(f"{_count(len(names), 'binding')} ({', '.join(names)})")
    return ", ".join(said) or None


def conflicts(turn: Turn, later: list[Turn], runner: LiveRunner) -> str | None:
    """Why `turn` must wait for later turns that changed the same cells or names, or None when none did."""
    mine = _cells_of(turn) | set(_names(turn, runner))
    blocking = []
    for other in sorted(later, key=lambda t: t.latest):
        shared = sorted(mine & (_cells_of(other) | set(_names(other, runner))))
        if shared:
            blocking.append(f"{_run_of(other)} changed {', '.join(shared)} after this run did")
    if not blocking:
        return None
    return (f"Not undone: {'; '.join(blocking)}. Undo the later run first (the Undo on its card), then this one; "
            "nothing was changed.")


def _cells_of(turn: Turn) -> set[str]:
    return {_cell_of(c) for _, c in turn.changes if not isinstance(c, LiveRun | Files)}


def _names(turn: Turn, runner: LiveRunner) -> list[str]:
    """The names the turn's live runs bound or rebound, those runs that can still be undone."""
    names: list[str] = []
    for _, change in turn.changes:
        record = runner.records.get(change.run_id) if isinstance(change, LiveRun) else None
        if record is not None:
            names += [n for n in (*record.created, *record.previous) if n not in names]
    return names


def _run_of(turn: Turn) -> str:
    if turn.cell_id:
        return f"the run of cell {turn.cell_id}"
    when = time.strftime("%H:%M:%S", time.localtime(turn.started))
    return f"the run started at {when}" if turn.session_id else f"a change made outside any run at {when}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def _cell_of(change: Inserted | Replaced | Deleted) -> str:
    return str(change.cell["id"]) if isinstance(change, Deleted) else change.cell_id


def _cells(ids: list[str]) -> str:
    return f"cell{'s' * (len(ids) != 1)} {', '.join(ids)}"
