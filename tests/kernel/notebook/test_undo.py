"""What an undo of one turn would take back, and which later turns must be undone before it (no kernel)."""

from __future__ import annotations

from typing import Any

from opencode_nb.kernel.notebook.journal import TURN, Deleted, Inserted, Journal, LiveRun, Replaced, Turn
from opencode_nb.kernel.notebook.undo import conflicts, takes_back
from opencode_nb.kernel.python.live import UndoRecord


class Runner:
    """The live runner as undo reads it: the records of runs that can still be undone."""

    def __init__(self, **records: UndoRecord) -> None:
        self.records: dict[str, UndoRecord] = dict(records)


def turn_of(journal: Journal, *changes: Any, cell_id: str | None = None) -> Turn:
    turn = journal.begin("ses_1", cell_id=cell_id)
    token = TURN.set(turn)
    try:
        for change in changes:
            journal.record(change)
    finally:
        TURN.reset(token)
    return turn


def test_the_summary_counts_cells_by_what_happened_and_names_the_bindings():
    runner = Runner(run_1=UndoRecord("run_1", ["df2"], {"df": object()}))
    turn = turn_of(Journal(), Inserted("a", "x"), Inserted("b", "y"), Replaced("b", "y", "code", "z", "code"),
                   Replaced("c", "1", "code", "2", "code"), Deleted({"id": "d"}, 3), LiveRun("run_1"))
    assert takes_back(turn, runner) == "2 cells inserted, 1 cell edited, 1 cell deleted, 2 bindings (df2, df)"  # type: ignore[arg-type]


def test_a_cell_made_and_dropped_in_one_turn_and_a_run_undone_alone_leave_nothing_to_offer():
    turn = turn_of(Journal(), Inserted("a", "x"), Deleted({"id": "a"}, 1), LiveRun("run_gone"))
    assert takes_back(turn, Runner()) is None  # type: ignore[arg-type]


def test_a_later_turn_that_changed_the_same_cell_or_name_must_be_undone_first():
    journal = Journal()
    runner = Runner(run_1=UndoRecord("run_1", ["df2"]), run_2=UndoRecord("run_2", [], {"df2": 1}))
    first = turn_of(journal, Inserted("a", "x"), LiveRun("run_1"))
    unrelated = turn_of(journal, Inserted("b", "y"), cell_id="c7")
    assert conflicts(first, journal.later(first), runner) is None  # type: ignore[arg-type]

    turn_of(journal, Replaced("a", "x", "code", "x2", "code"), LiveRun("run_2"), cell_id="c9")
    said = conflicts(first, journal.later(first), runner)  # type: ignore[arg-type]
    assert said == ("Not undone: the run of cell c9 changed a, df2 after this run did. Undo the later run first "
                    "(the Undo on its card), then this one; nothing was changed.")
    assert conflicts(unrelated, journal.later(unrelated), runner) is None  # type: ignore[arg-type]
