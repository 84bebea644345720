"""Applying one accepted cell change: is it still the change the person looked at, then apply it, then run it.

The change goes through the same notebook access the tool would have used (`NotebookCells`), inside the
proposing run's journal turn (`TURN` is set to it for the call), so it is saved, shown, and taken back by that
turn's Undo like any change the run made itself. Before anything is written the notebook is read again:

- a cell the change names that no longer exists (deleted since, or the cell an insert was to go below) is
  said, and nothing is applied;
- a cell whose source or type differs from what the proposal was made against was edited since (by the
  person, or another change): applying would overwrite that edit, so it is a conflict, not applied unless the
  person accepts it anyway.

Running the cell afterwards uses the access's `run` as `notebook_run` does; what it raised is reported, and
an accepted change stays accepted whatever its run did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ...tool.context import NotebookRefused
from ...values import CellRun, NewCell
from .journal import TURN, Turn

if TYPE_CHECKING:
    from .cells import NotebookCells

RERUN_TIMEOUT_S = 600
"""As `notebook_run` gives a run: a cell that takes longer is the person's to run."""

Verdict = Literal["applied", "conflict", "gone", "failed"]


@dataclass
class Applied:
    """What applying a change did: `applied`, or why not (`conflict`, `gone`: the cell is not there, `failed`:
    the notebook refused)."""

    verdict: Verdict
    why: str = ""
    """For `conflict`, `gone` and `failed`: a sentence saying what stood in the way."""
    cell_id: str | None = None
    """The cell changed (an insert's new id)."""
    ran: CellRun | None = None
    """The rerun, when there was one."""
    run_refused: str | None = None
    """Why the cell could not be run, when it could not."""


class Proposed(Protocol):
    """What applying needs of a change (`pending.PendingChange` is one)."""

    @property
    def action(self) -> str: ...
    @property
    def cell_id(self) -> str | None: ...
    @property
    def anchor(self) -> str | None: ...
    @property
    def cell_type(self) -> str: ...
    @property
    def old_source(self) -> str: ...
    @property
    def old_type(self) -> str | None: ...
    @property
    def new_source(self) -> str: ...
    @property
    def session_id(self) -> str: ...
    @property
    def turn(self) -> Turn | None: ...
    @property
    def metadata(self) -> dict[str, Any]: ...


async def apply(notebook: NotebookCells, change: Proposed, *, rerun: bool, force: bool = False,
                below: str | None = None) -> Applied:
    """Apply `change` if the notebook still holds what it was proposed against (or `force`), then run it.

    Args:
        below: for an insert, the cell an earlier accepted insert of the same run put at the same place: the new
            one goes below it, so accepted inserts read in the order they were proposed.
    """
    try:
        snapshot = await notebook.read()
    except NotebookRefused as exc:
        return Applied("failed", str(exc))
    cells = {cell.id: cell for cell in snapshot.cells}
    token = TURN.set(change.turn)
    try:
        if change.action == "insert":
            anchor = below if below in cells else change.anchor
            if anchor is not None and anchor not in cells:
                return Applied("gone", f"the cell it was to go below, [{anchor}], was deleted since")
            cell = NewCell.model_validate({"cell_type": change.cell_type, "source": change.new_source,
                                           "metadata": change.metadata})
            ids = await notebook.insert([cell], after=anchor, session_id=change.session_id)
            cell_id = ids[0] if ids else None
        else:
            assert change.cell_id is not None
            current = cells.get(change.cell_id)
            if current is None:
                return Applied("gone", f"cell [{change.cell_id}] was deleted since")
            if not force and (current.source != change.old_source or current.cell_type != change.old_type):
                return Applied("conflict", f"cell [{change.cell_id}] was edited since the change was proposed, and "
                                           "applying it would overwrite that edit")
            cell_id = change.cell_id
            if change.action == "delete":
                await notebook.delete([cell_id], session_id=change.session_id)
            else:
                retype = change.cell_type if change.cell_type != current.cell_type else None
                await notebook.replace(cell_id, source=change.new_source, cell_type=retype,
                                       session_id=change.session_id)
        done = Applied("applied", cell_id=cell_id)
        if rerun and cell_id is not None and change.action != "delete" and change.cell_type == "code":
            try:
                runs = await notebook.run([cell_id], timeout_s=RERUN_TIMEOUT_S, session_id=change.session_id,
                                          on_output=_ignored)
                done.ran = runs[0] if runs else CellRun(id=cell_id, status="aborted")
            except NotebookRefused as exc:
                done.run_refused = str(exc)
        return done
    except NotebookRefused as exc:
        return Applied("failed", str(exc))
    finally:
        TURN.reset(token)


def _ignored(text: str) -> None:
    """The rerun's output lands in the cell itself."""


def run_words(applied: Applied) -> str:
    """How the rerun went, as the end of a sentence: `it ran without an error`, `running it raised KeyError: 'x'`."""
    if applied.run_refused is not None:
        return f"it was not run ({applied.run_refused.rstrip('.')})"
    ran = applied.ran
    if ran is None:
        return ""
    if ran.status == "ok":
        return "it ran without an error"
    error = next((o for o in ran.outputs if o.get("output_type") == "error"), None)
    if error is not None:
        return f"running it raised {error.get('ename', 'an error')}: {error.get('evalue', '')}".rstrip(": ")
    return "its run did not finish (stopped, or timed out)"
