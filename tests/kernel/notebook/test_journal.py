"""The journal: a turn collects what its run and the run's subtasks did; undo finds the latest turn."""

from __future__ import annotations

import asyncio

from opencode_nb.kernel.notebook.journal import KEEP_TURNS, TURN, Inserted, Journal, LiveRun, Replaced


async def test_changes_made_in_tasks_of_a_turn_land_in_that_turn():
    journal = Journal()

    async def subagent() -> None:
        journal.record(Inserted("c9", "print(1)"))

    async def run() -> None:
        TURN.set(journal.begin("ses_1", cell_id="c1"))
        journal.record(LiveRun("run_1"))
        await asyncio.gather(asyncio.create_task(subagent()))

    await asyncio.create_task(run())
    [turn] = journal.turns
    assert turn.session_id == "ses_1" and turn.cell_id == "c1"
    assert [c for _, c in turn.changes] == [LiveRun("run_1"), Inserted("c9", "print(1)")]
    assert TURN.get() is None, "the turn does not leak out of its run's task"


async def test_two_runs_keep_their_own_turns_and_the_latest_change_decides_which_is_latest():
    journal = Journal()
    first_started, second_done = asyncio.Event(), asyncio.Event()

    async def first() -> None:
        TURN.set(journal.begin("ses_a"))
        journal.record(LiveRun("run_a"))
        first_started.set()
        await second_done.wait()
        journal.record(Replaced("c1", "a", "code", "b", "code"))

    async def second() -> None:
        await first_started.wait()
        TURN.set(journal.begin("ses_b"))
        journal.record(LiveRun("run_b"))
        second_done.set()

    await asyncio.gather(first(), second())
    assert journal.latest() is not None and journal.latest().session_id == "ses_a"
    journal.remove(journal.latest())
    assert journal.latest().session_id == "ses_b"


def test_a_change_outside_any_turn_is_a_turn_of_its_own_and_turns_without_changes_are_not_kept():
    journal = Journal()
    journal.begin("ses_quiet")
    journal.record(LiveRun("run_1"))
    journal.record(LiveRun("run_2"))
    assert [t.session_id for t in journal.turns] == [None, None]
    assert journal.origin("ses_quiet") is not None, "the prompt's origin is known even if it changed nothing"


def test_only_the_latest_turns_are_kept():
    journal = Journal()
    for i in range(KEEP_TURNS + 5):
        journal.record(LiveRun(f"run_{i}"))
    assert len(journal.turns) == KEEP_TURNS
    assert journal.latest().changes[0][1] == LiveRun(f"run_{KEEP_TURNS + 4}")


def test_a_turn_is_found_by_its_id_until_it_is_undone_or_pushed_out():
    journal = Journal()
    turns = []
    for i in range(KEEP_TURNS + 1):
        turn = journal.begin(f"ses_{i}")
        token = TURN.set(turn)
        journal.record(LiveRun(f"run_{i}"))
        TURN.reset(token)
        turns.append(turn)
    oldest, newest = turns[0], turns[-1]
    assert journal.find(oldest.id) is None and oldest.id in journal.forgotten
    assert journal.find(newest.id) is newest
    journal.remove(newest)
    assert journal.find(newest.id) is None and journal.undone[newest.id] is newest
    assert len({t.id for t in turns}) == len(turns), "every turn has an id of its own"
