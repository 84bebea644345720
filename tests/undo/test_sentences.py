"""An undo's outcome reads as one plain sentence per effect, grouped, and its redo reads as the mirror: files by
name with what became of them, cells counted, names with what they hold again, then what was kept, already
gone, refused or not possible at all. The sentences come from the items' effects alone."""

from __future__ import annotations

from opencode_nb.undo.outcome import Direction, Effect, Outcome, Status


def outcome(direction: Direction, *items: tuple[Status, str, str, Effect | None], runs: int = 1) -> Outcome:
    done = Outcome(direction, runs=runs)
    for status, kind, name, effect in items:
        done.add(status, kind, name, effect=effect)
    return done


def said(direction: Direction, *items: tuple[Status, str, str, Effect | None]) -> list[str]:
    return outcome(direction, *items).sentences()


def test_files_restored_removed_and_recreated_each_read_as_one_sentence_naming_them() -> None:
    items = [("restored", "file", "a.py", "restored"), ("restored", "file", "b.py", "restored"),
             ("restored", "file", "notes.md", "removed"), ("restored", "file", "old.txt", "recreated")]
    assert said("undo", *items) == ["Restored a.py and b.py to how they were before this run.",
                                    "Recreated old.txt, which this run deleted.",
                                    "Removed notes.md, which this run created."]


def test_the_redo_of_files_reads_as_the_mirror() -> None:
    items = [("restored", "file", "a.py", "restored"), ("restored", "file", "notes.md", "recreated"),
             ("restored", "file", "old.txt", "removed")]
    assert said("redo", *items) == ["Put back this run's changes to a.py.",
                                    "Put back notes.md, which this run created.",
                                    "Removed old.txt again, as this run did."]


def test_cells_are_counted_by_what_became_of_them() -> None:
    items = [("restored", "cell", "c1", "took_out"), ("restored", "cell", "c2", "took_out"),
             ("restored", "cell", "c3", "put_back"), ("restored", "cell", "c4", "restored")]
    assert said("undo", *items) == ["Took out the 2 cells this run inserted.", "Put back the cell this run deleted.",
                                    "Restored the cell this run edited."]
    assert said("redo", *items) == ["Took out the 2 cells this run deleted, again.",
                                    "Put back the cell this run inserted.", "Put back this run's edit to the cell."]


def test_names_unbound_and_rebound_are_one_sentence_saying_what_they_hold_again() -> None:
    done = Outcome("undo")
    done.add("restored", "binding", "df", effect="unbound")
    done.add("restored", "binding", "x", effect="rebound", now="3")
    assert done.sentences() == ["Unbound df; x is back to 3."]
    alone = Outcome("undo")
    alone.add("restored", "binding", "x", effect="rebound", now="3")
    assert alone.sentences() == ["Set x back to 3."]


def test_the_redo_of_names_puts_back_what_the_run_left() -> None:
    done = Outcome("redo")
    done.add("restored", "binding", "df", effect="rebound", now="5")
    done.add("restored", "binding", "y", effect="unbound")
    assert done.sentences() == ["Put back df as this run left it; unbound y again."]
    assert said("redo", ("restored", "binding", "y", "unbound")) == ["Unbound y again."]


def test_the_persons_version_is_kept_and_said_with_why_in_each_direction() -> None:
    done = Outcome("undo")
    done.add("kept", "file", "stats.py", "you changed it after the run")
    done.add("kept", "cell", "c1", "changed since")
    done.add("kept", "binding", "df", "you rebound it since")
    assert done.sentences() == ["Kept your version of the cell you edited after this run.",
                                "Kept your value of df (you rebound it after this run).",
                                "Kept your version of stats.py (you changed it after the run)."]
    redo = Outcome("redo")
    redo.add("kept", "cell", "c1", "changed since")
    assert redo.sentences() == ["Kept your version of the cell you edited after the undo."]


def test_what_could_not_be_done_says_why_one_sentence_each() -> None:
    done = Outcome("undo")
    done.add("failed", "file", "c.py", "permission denied")
    done.add("failed", "cell", "c9", "the notebook is read-only")
    done.add("unavailable", "cell", "2 changes", "no notebook is open")
    done.add("unavailable", "binding", "df", "changed in place")
    done.add("unavailable", "file", "files", "checkpoints are off")
    assert done.sentences() == ["Could not restore c.py: permission denied.",
                                "Could not change cell c9: the notebook is read-only.",
                                "Could not take back 2 changes to cells: no notebook is open.",
                                "Could not take back the in-place changes this run made to df.",
                                "Files were left as they are: checkpoints are off."]
    redo = Outcome("redo")
    redo.add("failed", "file", "c.py", "permission denied")
    assert redo.sentences() == ["Could not put back c.py: permission denied."]


def test_what_was_already_gone_is_said_once() -> None:
    done = Outcome("undo")
    done.add("skipped", "cell", "c1", "already gone")
    done.add("skipped", "cell", "c2", "already gone")
    assert done.sentences() == ["2 cells this run changed were already gone."]


def test_several_runs_are_named_as_such() -> None:
    done = outcome("undo", ("restored", "file", "a.py", "restored"), ("restored", "cell", "c1", "took_out"), runs=3)
    assert done.sentences() == ["Restored a.py to how it was before these 3 runs.",
                                "Took out the cell these 3 runs inserted."]


def test_a_turn_gone_from_the_history_alone_says_so() -> None:
    assert said("undo", ("restored", "turn", "turn 3", "history")) == [
        "Took turn 3 out of the session's history; it changed no files."]
    assert said("redo", ("restored", "turn", "turn 3", "history")) == [
        "Put turn 3 back in the session's history; it changed no files."]


def test_an_item_no_sentence_phrases_is_still_said() -> None:
    assert said("undo", ("restored", "mystery", "m1", None)) == ["Took back mystery m1."]
    assert said("undo", ("unavailable", "mystery", "m1", None)) == ["Could not take back mystery m1."]


def test_nothing_done_or_nothing_to_walk_is_one_sentence_and_the_report_is_one_sentence_a_line() -> None:
    assert Outcome("undo").sentences() == ["Nothing of this run was left to undo."]
    assert Outcome("redo").sentences() == ["Nothing was left to redo."]
    assert Outcome("redo", nothing="Nothing to redo: no undo is left.").sentences() == [
        "Nothing to redo: no undo is left."]
    done = outcome("undo", ("restored", "file", "a.py", "restored"), ("restored", "cell", "c1", "took_out"))
    assert done.report() == "Restored a.py to how it was before this run.\nTook out the cell this run inserted."
    assert done.card()["report"] == done.report()


def test_an_item_without_an_effect_takes_the_one_its_status_says() -> None:
    done = Outcome("undo")
    for status in ("restored", "kept", "skipped", "failed", "unavailable", "conflicted"):
        done.add(status, "file", "a.py")
    assert [i.effect for i in done.items] == ["restored", "kept", "gone", "failed", "unavailable", "conflicted"]
