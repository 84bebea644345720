"""Taking back one turn: its cell changes and its live bindings, newest first, never over the person's edits.

A cell is changed back only if it still reads exactly as the agent left it; otherwise the person has
edited it since, and it is named in the report and left as it is. A deleted cell comes back at its old
place with its outputs.

Any kept turn can be taken back, not only the latest (a finished run's card offers its own turn), so
before that `conflicts` looks for later turns that changed the same cells or names: undoing the earlier
turn under them would pull the ground from under the later one's work, so the person is told which run to
undo first. `takes_back` says in a few words what an undo would take back, for the card's button.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ...tool.context import NotebookRefused
from ...values import Cell
from ..python.live import LiveRunner
from .journal import Deleted, Inserted, LiveRun, Replaced, Turn

if TYPE_CHECKING:
    from .stores import CellStore


async def undo_turn(turn: Turn, store: CellStore | None, runner: LiveRunner, *, why_not: str | None = None) -> str:
    """Undo `turn`; returns one short report. `store` is None when cells cannot be changed (`why_not` says why)."""
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
        if isinstance(change, LiveRun):
            if change.run_id in runner.records:
                bindings.append(runner.undo(change.run_id))
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
                    await store.delete([change.cell_id])
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
                    current[change.cell_id] = cell.model_copy(update={"source": change.before_source})
                    restored.append(change.cell_id)
            elif isinstance(change, Deleted):
                old = Cell.model_validate(change.cell)
                new_id = await store.restore(old, change.index)
                current[new_id] = old.model_copy(update={"id": new_id})
                put_back.append(old.id if new_id == old.id else f"{old.id} (now {new_id})")
        except NotebookRefused as exc:
            failed.append(f"{_cell_of(change)}: {exc}")
    report = _report(removed, restored, put_back, skipped, gone, bindings)
    if failed:
        report += f" Could not undo {'; '.join(failed)}"
    if cells_left:
        report += f" {cells_left} cell change{'s' * (cells_left != 1)} not undone: {why_not}"
    turn.report = report.strip() or "Nothing of this turn was left to undo."
    return turn.report


def takes_back(turn: Turn, runner: LiveRunner) -> str | None:
    """What undoing `turn` would take back ("2 cells inserted, 1 binding (df2)"), or None: nothing is left."""
    inserted: list[str] = []
    edited: list[str] = []
    deleted = 0
    for _, change in turn.changes:
        if isinstance(change, Inserted):
            inserted.append(change.cell_id)
        elif isinstance(change, Replaced) and change.cell_id not in inserted and change.cell_id not in edited:
            edited.append(change.cell_id)
        elif isinstance(change, Deleted):
            if change.cell["id"] in inserted:  # made and dropped by the same turn: nothing to take back
                inserted.remove(change.cell["id"])
            else:
                deleted += 1
    said = [f"{_count(len(inserted), 'cell')} inserted"] if inserted else []
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
    return {_cell_of(c) for _, c in turn.changes if not isinstance(c, LiveRun)}


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
