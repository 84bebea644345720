"""A files report is the undo model's typed outcome too: every file an item, the same words as before."""

from __future__ import annotations

from opencode_nb.checkpoint.records import Conflict, UndoReport


def test_a_files_report_reads_the_same_as_an_outcome_and_names_each_file_by_status() -> None:
    report = UndoReport(turns=["msg_1"], indexes=[3], restored=["a.py"], removed=["new.txt"],
                        kept=[Conflict("b.py", "", "you changed it after the agent")],
                        failed=[("c.py", "read-only")], action="undo")
    outcome = report.outcome()
    assert outcome.text() == report.text()
    assert [i.name for i in outcome.of("restored", "file")] == ["a.py", "new.txt"]
    assert [(i.name, i.why) for i in outcome.of("kept")] == [("b.py", "you changed it after the agent")]
    assert [(i.name, i.why) for i in outcome.of("failed")] == [("c.py", "read-only")]


def test_nothing_taken_back_still_says_so_in_the_files_words() -> None:
    assert UndoReport(action="redo").outcome().text() == "Nothing to put back."
