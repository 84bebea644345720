"""The kernel's undo is one engine over the kinds it registers: the files (through the workspace), a turn's
cells and a live run's bindings. A change of any other kind is refused, the files' report comes first, and a
turn that went back in the history alone is named only when nothing else was done."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, cast

from opencode_nb.checkpoint.records import Conflict as FileConflict
from opencode_nb.checkpoint.records import UndoReport
from opencode_nb.kernel.notebook.journal import Journal, Turn
from opencode_nb.kernel.rewind import FilesChange, Rewind
from opencode_nb.undo.change import Change, Conflict, Description
from opencode_nb.undo.outcome import Direction, Outcome


class FakeWorkspace:
    """Checkpoints and `undo`/`redo`, answering with a set report (or raising), keeping what it was asked."""

    def __init__(self, report: UndoReport | Exception) -> None:
        self.checkpoints = object()
        self.answer = report
        self.asked: list[tuple[str, Any]] = []

    async def undo(self, session_id: str, *, to: str | None = None, confirm: Any = None) -> UndoReport:
        self.asked.append(("undo", confirm))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    async def redo(self, session_id: str, *, confirm: Any = None) -> UndoReport:
        self.asked.append(("redo", confirm))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


class Unregistered(Change):
    """A kind of change no one registered: it must never be applied."""

    applied = False

    @property
    def description(self) -> Description:
        return Description("mystery", "m1")

    async def conflicts(self, direction: Direction) -> list[Conflict]:
        return []

    async def apply(self, direction: Direction, overwrite: Collection[str]) -> Outcome:
        self.applied = True
        return Outcome(direction)


def rewind(ws: FakeWorkspace) -> Rewind:
    return Rewind(Journal(), cast(Any, ws), None)


async def test_a_change_of_a_kind_not_registered_is_refused_and_never_applied():
    stranger = Unregistered()
    done = await rewind(FakeWorkspace(UndoReport())).engine.run([stranger], "undo")
    assert not stranger.applied
    assert [(i.status, i.kind) for i in done.items] == [("unavailable", "mystery")]


async def test_the_files_are_asked_through_the_confirm_the_undo_was_given():
    ws = FakeWorkspace(UndoReport(turns=["m1"], indexes=[1], restored=["a.py"]))

    async def confirm(conflict: Conflict) -> bool:
        return False

    change = FilesChange(cast(Any, ws), "s1", "m1", confirm)
    done = await change.undo()
    assert ws.asked == [("undo", confirm)]
    assert done.text() == "Took back turn 1: restored a.py"
    assert [(i.status, i.name) for i in done.items] == [("restored", "a.py")]


async def test_files_the_workspace_fails_to_undo_are_reported_unavailable_with_why():
    change = FilesChange(cast(Any, FakeWorkspace(OSError("the store is gone"))), "s1", "m1", None)
    done = await change.undo()
    assert not done.empty
    assert [(i.status, i.kind, i.why) for i in done.items] == [("unavailable", "file", "the store is gone")]


async def test_a_kept_file_is_reported_even_beside_other_changes():
    kept = FileConflict(path="a.py", diff="", reason="you edited a.py after the agent")
    change = FilesChange(cast(Any, FakeWorkspace(UndoReport(turns=["m1"], indexes=[1], kept=[kept]))), "s1", "m1",
                         None)
    done = await change.undo()
    assert [(i.status, i.name) for i in done.items] == [("kept", "a.py")]
    assert "Kept a.py: you edited a.py after the agent" in done.text()


async def test_a_turn_taken_back_in_the_history_alone_is_named_only_when_nothing_else_was_done():
    change = FilesChange(cast(Any, FakeWorkspace(UndoReport(turns=["m1"], indexes=[1]))), "s1", "m1", None)
    alone = await change.undo()
    assert alone.empty
    assert change.told(alone) == "Took back turn 1: no files to change"
    with_cells = Outcome("undo", said=["Undone in the notebook: deleted the inserted cell c1."])
    assert change.told(with_cells) == "Undone in the notebook: deleted the inserted cell c1."


async def test_an_undo_with_no_notebook_forgets_its_turn_and_says_the_files_first():
    ws = FakeWorkspace(UndoReport(turns=["m1"], indexes=[1], removed=["out.txt"]))
    journal = Journal()
    turn = Turn(session_id="s1", message_id="m1")
    journal.turns.append(turn)
    report = await Rewind(journal, cast(Any, ws), None).undo("s1", turn=turn)
    assert report == "Took back turn 1: removed out.txt"
    assert turn not in journal.turns
    assert journal.redoable[-1].files and journal.redoable[-1].turns == [turn]
