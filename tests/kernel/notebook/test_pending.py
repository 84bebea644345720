"""Pending cell changes on a real .ipynb file, without a kernel: nothing lands before it is accepted, an
accepted change is the proposing turn's to undo, a rejected one leaves the file's bytes as they were."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import nbformat
import pytest

from opencode_nb.config.schema import Config
from opencode_nb.kernel.activity import CellActivity
from opencode_nb.kernel.notebook.cells import NotebookCells
from opencode_nb.kernel.notebook.frontend import Frontend
from opencode_nb.kernel.notebook.journal import TURN, Journal, Turn
from opencode_nb.kernel.notebook.pending import PendingChanges
from opencode_nb.kernel.presence import Presence
from opencode_nb.kernel.python.live import LiveRunner
from opencode_nb.tool.context import CellProposal
from opencode_nb.tool.files.textfile import unified_diff


def notebook(path: Path, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook()
    for i, source in enumerate(sources):
        nb.cells.append(nbformat.v4.new_code_cell(source, id=f"c{i}"))
    nbformat.write(nb, path)
    return path


def sources(path: Path) -> list[str]:
    return [c.source for c in nbformat.read(path, as_version=4).cells]


class Setup:
    def __init__(self, path: Path, *, presence: Presence | None = None, config: Config | None = None) -> None:
        self.shell = SimpleNamespace(user_ns={}, transform_cell=lambda code: code, display_pub=None,
                                     display_formatter=None)
        self.journal = Journal()
        self.cells = NotebookCells(shell=self.shell, frontend=Frontend(), mode=lambda: "terminal",
                                   activity=CellActivity(), journal=self.journal, runner=LiveRunner(self.shell),
                                   root_of=lambda session_id: session_id)
        self.presence = presence or Presence(terminal=True)
        self.pending = PendingChanges(notebook=lambda: self.cells, journal=self.journal, presence=self.presence,
                                      config=lambda: config if config is not None else Config(review="cells"))
        self.turn = self.journal.begin("ses_1")
        self.path = path

    async def propose(self, action: str, cell_id: str | None, new: str, *, after: str | None = None) -> Any:
        old = next((c.source for c in (await self.cells.read()).cells if c.id == cell_id), "")
        token = TURN.set(self.turn)
        try:
            return await self.pending.propose(CellProposal(
                action=action, cell_id=cell_id, after=after, cell_type="code", old_source=old,  # type: ignore[arg-type]
                old_type="code" if cell_id else None, new_source=new, diff=unified_diff("cell", old, new),
                session_id="ses_1", message_id="msg_1", call_id="call_1", agent="build"))
        finally:
            TURN.reset(token)


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Setup:
    path = notebook(tmp_path / "analysis.ipynb", "x = 1", "y = x * 2", "print(y)")
    monkeypatch.setenv("OPENCODE_NB_NOTEBOOK", str(path))
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    return Setup(path)


async def test_a_proposal_waits_and_the_file_keeps_its_bytes(setup: Setup):
    before = setup.path.read_bytes()
    outcome = await setup.propose("replace", "c0", "x = 10")
    assert outcome.n == 1 and outcome.state == "pending"
    assert outcome.told.startswith("Proposed change 1 to cell c0; the person will accept or reject it — do not run "
                                   "the cell before it is accepted.")
    assert outcome.decide == ["%agent accept 1", "%agent reject 1"]
    assert setup.path.read_bytes() == before and setup.pending.pending_cells() == {"c0": 1}
    assert setup.turn.proposed and not setup.turn.changes


async def test_accepting_applies_runs_and_is_undone_with_the_proposing_turn(setup: Setup):
    await setup.propose("replace", "c0", "x = 10\nprint(x)")
    [decision] = await setup.pending.decide(1, True)
    assert (decision.state, decision.said) == ("accepted", "Accepted change 1: replaced the source of cell [c0]; "
                                                           "it ran without an error.")
    cell = nbformat.read(setup.path, as_version=4).cells[0]
    assert cell.source == "x = 10\nprint(x)" and cell.outputs[0]["text"] == "10\n"
    assert setup.shell.user_ns["x"] == 10
    assert [type(c).__name__ for _, c in setup.turn.changes] == ["Replaced", "LiveRun"]
    assert setup.journal.latest() is setup.turn
    await setup.cells.undo()
    assert sources(setup.path)[0] == "x = 1" and "x" not in setup.shell.user_ns


async def test_rejecting_leaves_the_bytes_and_the_model_is_told_once(setup: Setup):
    before = setup.path.read_bytes()
    await setup.propose("delete", "c2", "")
    [decision] = await setup.pending.decide(None, False)
    assert decision.state == "rejected" and setup.path.read_bytes() == before
    assert setup.pending.told("ses_1") == ("Since your last turn the person decided on the cell changes you proposed:"
                                           "\n- The person rejected change 1 to cell c2: nothing was changed.")
    assert setup.pending.told("ses_1") is None
    with pytest.raises(LookupError, match="Change 1 was rejected already. No change is pending."):
        await setup.pending.decide(1, True)


async def test_an_edit_since_the_proposal_is_a_conflict_until_accepted_anyway(setup: Setup):
    await setup.propose("replace", "c1", "y = x * 3")
    nb = nbformat.read(setup.path, as_version=4)
    nb.cells[1].source = "y = x * 100  # the person's"
    nbformat.write(nb, setup.path)
    [decision] = await setup.pending.decide(1, True, rerun=False)
    assert decision.state == "conflict" and "was edited since the change was proposed" in decision.said
    assert sources(setup.path)[1] == "y = x * 100  # the person's" and setup.pending.pending_cells() == {"c1": 1}
    [decision] = await setup.pending.decide(1, True, rerun=False, force=True)
    assert decision.state == "accepted" and sources(setup.path)[1] == "y = x * 3"


async def test_inserts_accepted_together_keep_the_order_they_were_proposed_in(setup: Setup):
    await setup.propose("insert", None, "first = 1", after="c0")
    await setup.propose("insert", None, "second = 2", after="c0")
    await setup.propose("replace", "c2", "print(y, first, second)")
    decisions = await setup.pending.decide(None, True, rerun=False)
    assert [d.state for d in decisions] == ["accepted"] * 3
    assert sources(setup.path) == ["x = 1", "first = 1", "second = 2", "y = x * 2", "print(y, first, second)"]


async def test_a_change_to_a_deleted_cell_is_dropped_and_said(setup: Setup):
    await setup.propose("replace", "c1", "y = 0")
    nb = nbformat.read(setup.path, as_version=4)
    del nb.cells[1]
    nbformat.write(nb, setup.path)
    [decision] = await setup.pending.decide(1, True)
    assert (decision.state, decision.said) == ("gone", "Change 1 to cell [c1] was dropped: cell [c1] was deleted "
                                                       "since; nothing was applied.")
    assert setup.pending.pending() == []


async def test_headless_decides_at_once_by_the_unattended_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = notebook(tmp_path / "run.ipynb", "x = 1")
    monkeypatch.setenv("OPENCODE_NB_NOTEBOOK", str(path))
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    before = path.read_bytes()
    denied = Setup(path, presence=Presence(headless=True, policy=lambda: "deny"))
    denied.cells.mode = lambda: "headless"
    outcome = await denied.propose("replace", "c0", "x = 2")
    assert outcome.state == "rejected" and path.read_bytes() == before
    assert "nobody is present to review it (Agent.permission = deny): nothing changed" in outcome.said

    allowed = Setup(path, presence=Presence(headless=True, policy=lambda: "allow"))
    allowed.cells.mode = lambda: "headless"
    outcome = await allowed.propose("replace", "c0", "x = 2")
    assert outcome.state == "accepted" and sources(path) == ["x = 2"]
    assert allowed.pending.told("ses_1") is None, "the tool's result said it: nothing is left to tell"


def test_review_comes_from_a_forced_run_the_agent_or_the_global_setting(tmp_path: Path):
    off = Setup(tmp_path / "x.ipynb", config=Config())
    assert not off.pending.reviewing("ses_1", "build")
    release = off.pending.force_review("ses_1")
    assert off.pending.reviewing("ses_1", "build") and not off.pending.reviewing("ses_2", "build")
    release()
    assert not off.pending.reviewing("ses_1", "build")
    per_agent = Setup(tmp_path / "x.ipynb", config=Config.model_validate(
        {"review": "cells", "agent": {"plan": {"review": "off"}}}))
    assert per_agent.pending.reviewing("ses_1", "build") and not per_agent.pending.reviewing("ses_1", "plan")


def test_a_turn_that_only_proposed_is_named_on_its_card():
    from opencode_nb.kernel.card_undo import run_data

    turn = Turn("ses_1")
    assert run_data(turn) is None
    turn.proposed = True
    assert run_data(turn) == {"turn": turn.id}


async def test_a_new_proposal_for_a_cell_replaces_the_one_pending_for_it(setup: Setup):
    await setup.propose("replace", "c1", "y = x * 3")
    await setup.propose("replace", "c1", "y = x * 4")
    assert setup.pending.pending_cells() == {"c1": 2}
    assert setup.pending.changes[0].said == ("Change 1 to cell [c1] was replaced by change 2, proposed for the same "
                                             "cell.")
    [decision] = await setup.pending.decide(None, True, rerun=False)
    assert decision.n == 2 and sources(setup.path)[1] == "y = x * 4"
