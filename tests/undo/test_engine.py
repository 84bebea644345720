"""The engine: the order it walks a turn in, each direction, conflicts asked and answered, kinds registered."""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence

from opencode_nb.undo.change import Change, Conflict, Description
from opencode_nb.undo.engine import Engine
from opencode_nb.undo.outcome import Direction, Outcome


class Fake(Change):
    """A label on a shared log, in conflict when `rival` is set."""

    def __init__(self, name: str, log: list[str], rival: bool = False) -> None:
        self.name, self.log, self.rival = name, log, rival

    @property
    def description(self) -> Description:
        return Description("note", self.name)

    async def conflicts(self, direction: Direction) -> list[Conflict]:
        return [Conflict(self.name, "", f"you wrote over {self.name}")] if self.rival else []

    async def apply(self, direction: Direction, overwrite: Collection[str]) -> Outcome:
        done = Outcome(direction)
        if self.rival and self.name not in overwrite:
            done.add("kept", "note", self.name, "yours")
            return done
        self.log.append(f"{direction} {self.name}")
        done.add("restored", "note", self.name)
        return done


class Note(Fake):
    """A fake kind the tests register."""


class Stranger(Fake):
    """A kind nobody registered."""


class Broken(Note):
    async def apply(self, direction: Direction, overwrite: Collection[str]) -> Outcome:
        raise OSError("disk gone")


def run(changes: Sequence[Fake], direction: Direction, answers: dict[str, bool] | None = None,
        kinds: tuple[type[Change], ...] = (Note,)) -> tuple[Outcome, list[str]]:
    asked: list[str] = []

    async def confirm(conflict: Conflict) -> bool:
        asked.append(conflict.path)
        return (answers or {}).get(conflict.path, False)

    outcome = asyncio.run(Engine(kinds).run(changes, direction, confirm if answers is not None else None))
    return outcome, asked


def test_undo_walks_newest_first_and_redo_oldest_first() -> None:
    log: list[str] = []
    changes = [Note("a", log), Note("b", log), Note("c", log)]
    run(changes, "undo")
    run(changes, "redo")
    assert log == ["undo c", "undo b", "undo a", "redo a", "redo b", "redo c"]


def test_a_conflict_confirmed_is_written_over() -> None:
    log: list[str] = []
    outcome, asked = run([Note("a", log), Note("b", log, rival=True)], "undo", answers={"b": True})
    assert asked == ["b"]
    assert log == ["undo b", "undo a"]
    assert [i.name for i in outcome.of("restored")] == ["b", "a"]


def test_a_conflict_declined_keeps_the_persons_change() -> None:
    log: list[str] = []
    outcome, asked = run([Note("a", log), Note("b", log, rival=True)], "undo", answers={"b": False})
    assert asked == ["b"]
    assert log == ["undo a"]
    assert [(i.name, i.why) for i in outcome.of("kept")] == [("b", "yours")]


def test_with_nobody_to_ask_every_conflict_is_kept() -> None:
    log: list[str] = []
    outcome, asked = run([Note("b", log, rival=True)], "redo")
    assert asked == [] and log == []
    assert [i.name for i in outcome.of("kept")] == ["b"]


def test_a_kind_not_registered_is_never_applied() -> None:
    log: list[str] = []
    outcome, _ = run([Note("a", log), Stranger("s", log)], "undo")
    assert log == ["undo a"]
    assert [(i.kind, i.name) for i in outcome.of("unavailable")] == [("note", "s")]
    registered, _ = run([Stranger("s", log)], "undo", kinds=(Note, Stranger))
    assert log == ["undo a", "undo s"] and registered.of("restored")


def test_a_failing_change_is_reported_and_the_walk_goes_on() -> None:
    log: list[str] = []
    outcome, _ = run([Note("a", log), Broken("x", log)], "undo")
    assert log == ["undo a"]
    assert [(i.name, i.why) for i in outcome.of("failed")] == [("x", "disk gone")]
