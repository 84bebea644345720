"""The outcome every surface renders: typed items, one text, nothing to filter."""

from __future__ import annotations

from opencode_nb.undo.outcome import Outcome


def test_nothing_done_says_so_in_each_direction() -> None:
    assert Outcome("undo").empty
    assert Outcome("undo").text() == "Nothing of this turn was left to undo."
    assert Outcome("redo").text() == "Nothing was left to redo."


def test_a_kinds_own_summary_comes_first_and_its_items_are_not_listed_twice() -> None:
    done = Outcome("undo")
    done.said.append("Took back turn 3: restored a.py")
    done.add("restored", "file", "a.py", told=True)
    done.add("kept", "binding", "df", "you rebound it")
    assert done.text() == "Took back turn 3: restored a.py\nKept as you left them: binding df (you rebound it)."
    assert done.card()["counts"] == {"restored": 1, "kept": 1}


def test_parts_join_in_the_order_walked() -> None:
    whole, part = Outcome("redo"), Outcome("redo")
    part.add("failed", "cell", "c1", "read-only")
    whole.add("restored", "cell", "c2")
    whole.extend(part)
    assert [i.name for i in whole.items] == ["c2", "c1"]
    assert not whole.empty
