"""The kernel's undo is one engine over the kinds it registers: the files (through the workspace), a turn's
cells and a live run's bindings. A change of any other kind is refused, the files' report comes first, each
file says what became of it, and a turn that went back in the history alone is named only when nothing else
was done."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, cast

from opencode_nb.checkpoint.records import Conflict as FileConflict
from opencode_nb.checkpoint.records import FileChange, TurnRecord, UndoReport
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
    assert change.told(alone).sentences() == ["Took turn 1 out of the session's history; it changed no files."]
    with_cells = Outcome("undo")
    with_cells.add("restored", "cell", "c1", effect="took_out")
    assert change.told(with_cells).sentences() == ["Took out the cell this run inserted."]


async def test_an_undo_with_no_notebook_forgets_its_turn_and_says_the_files_first():
    ws = FakeWorkspace(UndoReport(turns=["m1"], indexes=[1], removed=["out.txt"]))
    journal = Journal()
    turn = Turn(session_id="s1", message_id="m1")
    journal.turns.append(turn)
    done = await Rewind(journal, cast(Any, ws), None).undo("s1", turn=turn)
    assert done.sentences() == ["Removed out.txt, which this run created."]
    assert journal.redoable[-1].report == "Removed out.txt, which this run created."
    assert turn not in journal.turns
    assert journal.redoable[-1].files and journal.redoable[-1].turns == [turn]


class RecordedWorkspace(FakeWorkspace):
    """A workspace whose checkpoints also say what the turn did to each file, as the real service does."""

    def __init__(self, report: UndoReport, files: list[FileChange]) -> None:
        super().__init__(report)
        self.checkpoints = self
        self.files = files

    def turns(self, session_id: str) -> list[TurnRecord]:
        return [TurnRecord(session_id, "m1", 1, "the prompt", self.files, [], True, 0.0)]


async def test_each_file_says_whether_it_was_restored_removed_or_recreated_by_what_the_turn_did_to_it():
    files = [FileChange("a.py", "modified", 1, 1), FileChange("new.md", "added", 2, 0),
             FileChange("old.txt", "deleted", 0, 3)]
    report = UndoReport(turns=["m1"], indexes=[1], restored=["a.py", "old.txt"], removed=["new.md"])
    undone = await FilesChange(cast(Any, RecordedWorkspace(report, files)), "s1", "m1", None).undo()
    assert [(i.name, i.effect) for i in undone.items] == [("a.py", "restored"), ("old.txt", "recreated"),
                                                          ("new.md", "removed")]
    assert undone.sentences() == ["Restored a.py to how it was before this run.",
                                  "Recreated old.txt, which this run deleted.",
                                  "Removed new.md, which this run created."]
    report = UndoReport(turns=["m1"], indexes=[1], restored=["a.py", "new.md"], removed=["old.txt"], action="redo")
    redone = await FilesChange(cast(Any, RecordedWorkspace(report, files)), "s1", "m1", None).redo()
    assert redone.sentences() == ["Put back this run's changes to a.py.", "Put back new.md, which this run created.",
                                  "Removed old.txt again, as this run did."]
