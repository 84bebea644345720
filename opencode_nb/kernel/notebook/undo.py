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

import time
from collections.abc import Awaitable, Callable, Collection
from typing import TYPE_CHECKING

from ...tool.context import NotebookRefused
from ...values import Cell
from ..python.live import LiveRunner
from .journal import Deleted, Files, Inserted, LiveRun, Reinsert, Replaced, Restored, Turn, Undid

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
    undid: list[Undid] = []
    removed: list[str] = []
    restored: list[str] = []
    put_back: list[str] = []
    skipped: list[str] = []
    gone: list[str] = []
    failed: list[str] = []
    bindings: list[str] = []
    cells_left = 0
    current: dict[str, Cell] | None = None
    for _, change in reversed(turn.changes):
        if isinstance(change, Files):
            continue
        if isinstance(change, LiveRun):
            if change.run_id in runner.records:
                overwrite = await _agreed(agree, runner, change.run_id, False)
                bindings.append(runner.undo(change.run_id, overwrite=overwrite))
                undid.append(change)
            continue
        if store is None:
            cells_left += 1
            continue
        if current is None:
            current = {c.id: c for c in (await store.read(max_output_chars=0)).cells}
        try:
            if isinstance(change, Inserted):
                cell = current.get(change.cell_id)
                if cell is None:
                    gone.append(change.cell_id)
                elif cell.source != change.source:
                    skipped.append(change.cell_id)
                else:
                    for old, index in await store.delete([change.cell_id]):
                        undid.append(Reinsert(old.model_dump(), index))
                    del current[change.cell_id]
                    removed.append(change.cell_id)
            elif isinstance(change, Replaced):
                cell = current.get(change.cell_id)
                if cell is None:
                    gone.append(change.cell_id)
                elif cell.source != change.after_source or cell.cell_type != change.after_type:
                    skipped.append(change.cell_id)
                else:
                    await store.replace(change.cell_id, source=change.before_source, cell_type=change.before_type)
                    current[change.cell_id] = cell.model_copy(update={"source": change.before_source,
                                                                      "cell_type": change.before_type})
                    restored.append(change.cell_id)
                    undid.append(change)
            elif isinstance(change, Deleted):
                old = Cell.model_validate(change.cell)
                new_id = await store.restore(old, change.index)
                current[new_id] = old.model_copy(update={"id": new_id})
                put_back.append(old.id if new_id == old.id else f"{old.id} (now {new_id})")
                undid.append(Restored(new_id, old.source))
        except NotebookRefused as exc:
            failed.append(f"{_cell_of(change)}: {exc}")
    report = _report(removed, restored, put_back, skipped, gone, bindings)
    if failed:
        report += f" Could not undo {'; '.join(failed)}"
    if cells_left:
        report += f" {cells_left} cell change{'s' * (cells_left != 1)} not undone: {why_not}"
    turn.undid = undid
    turn.report = report.strip() or "Nothing of this turn was left to undo."
    return turn.report


async def redo_turn(turn: Turn, store: CellStore | None, runner: LiveRunner, *, why_not: str | None = None,
                    agree: Agree | None = None) -> str:
    """Put back what the latest undo of `turn` took, oldest first; the turn's changes become what was put back,
    so it can be undone again. A cell the person changed since the undo is left as it is and named."""
    made: list[str] = []
    edited: list[str] = []
    deleted: list[str] = []
    skipped: list[str] = []
    gone: list[str] = []
    failed: list[str] = []
    bindings: list[str] = []
    cells_left = 0
    ids: dict[str, str] = {}
    """Old cell id → the id the cell has now it was put back."""
    changes: list[Inserted | Replaced | Deleted | LiveRun] = []
    current: dict[str, Cell] | None = None
    for step in reversed(turn.undid):
        if isinstance(step, LiveRun):
            if step.run_id in runner.undone:
                overwrite = await _agreed(agree, runner, step.run_id, True)
                bindings.append(runner.redo(step.run_id, overwrite=overwrite))
                changes.append(step)
            continue
        if store is None:
            cells_left += 1
            continue
        if current is None:
            current = {c.id: c for c in (await store.read(max_output_chars=0)).cells}
        try:
            if isinstance(step, Reinsert):
                cell = Cell.model_validate(step.cell)
                new_id = await store.restore(cell, step.index)
                ids[cell.id] = new_id
                current[new_id] = cell.model_copy(update={"id": new_id})
                made.append(new_id)
                changes.append(Inserted(new_id, cell.source))
            elif isinstance(step, Replaced):
                cell_id = ids.get(step.cell_id, step.cell_id)
                cell = current.get(cell_id)
                if cell is None:
                    gone.append(cell_id)
                elif cell.source != step.before_source or cell.cell_type != step.before_type:
                    skipped.append(cell_id)
                else:
                    await store.replace(cell_id, source=step.after_source, cell_type=step.after_type)
                    current[cell_id] = cell.model_copy(update={"source": step.after_source,
                                                               "cell_type": step.after_type})
                    edited.append(cell_id)
                    changes.append(Replaced(cell_id, step.before_source, step.before_type, step.after_source,
                                            step.after_type))
            else:
                cell = current.get(step.cell_id)
                if cell is None:
                    gone.append(step.cell_id)
                elif cell.source != step.source:
                    skipped.append(step.cell_id)
                else:
                    for old, index in await store.delete([step.cell_id]):
                        changes.append(Deleted(old.model_dump(), index))
                    del current[step.cell_id]
                    deleted.append(step.cell_id)
        except NotebookRefused as exc:
            failed.append(f"{_undid_cell(step)}: {exc}")
    files = [c for _, c in turn.changes if isinstance(c, Files)]
    turn.changes = []
    for change in [*changes, *files]:
        turn.record(change)
    turn.undid = []
    said = []
    if made:
        said.append(f"put back the inserted {_cells(made)}")
    if edited:
        said.append(f"changed the source of {_cells(edited)} again")
    if deleted:
        said.append(f"deleted {_cells(deleted)} again")
    parts = [f"Redone in the notebook: {'; '.join(said)}."] if said else []
    parts += bindings
    if skipped:
        parts.append(f"Left as they are, changed since the undo: {', '.join(skipped)}.")
    if gone:
        parts.append(f"Already gone: {', '.join(gone)}.")
    if failed:
        parts.append(f"Could not redo {'; '.join(failed)}")
    if cells_left:
        parts.append(f"{cells_left} cell change{'s' * (cells_left != 1)} not redone: {why_not}")
    return " ".join(parts).strip() or "Nothing of this turn was left to redo."


def _undid_cell(step: Reinsert | Replaced | Restored) -> str:
    return str(step.cell["id"]) if isinstance(step, Reinsert) else step.cell_id


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


def _report(removed: list[str], restored: list[str], put_back: list[str], skipped: list[str], gone: list[str],
            bindings: list[str]) -> str:
    said = []
    if removed:
        said.append(f"deleted the inserted {_cells(removed)}")
    if restored:
        said.append(f"restored the source of {_cells(restored)}")
    if put_back:
        said.append(f"put back the deleted {_cells(put_back)}")
    parts = [f"Undone in the notebook: {'; '.join(said)}."] if said else []
    parts += bindings
    if skipped:
        parts.append(f"Left as they are, changed since the agent left them: {', '.join(skipped)}.")
    if gone:
        parts.append(f"Already gone: {', '.join(gone)}.")
    return " ".join(parts)


def _cells(ids: list[str]) -> str:
    return f"cell{'s' * (len(ids) != 1)} {', '.join(ids)}"
