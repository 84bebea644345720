"""The notebook tools when the person reviews each cell change (`ctx.review`): notebook_edit proposes and returns
at once without asking, a deny rule still denies, notebook_run waits for a pending change, notebook_read marks it."""

from __future__ import annotations

from pathlib import Path

import pytest

from opencode_nb.errors import DeniedError, ToolError
from opencode_nb.permission.rules import Rule
from opencode_nb.tool.context import CellProposal, ProposalOutcome
from opencode_nb.tool.notebook_edit import NotebookEditTool
from opencode_nb.tool.notebook_read import NotebookReadTool
from opencode_nb.tool.notebook_run import NotebookRunTool

from .fakes import RecordingContext
from .memory_notebook import MemoryNotebook


class RecordingReview:
    """Reviews every change, keeps each proposal and answers it as pending."""

    def __init__(self, *, on: bool = True) -> None:
        self.on = on
        self.proposals: list[CellProposal] = []

    def reviewing(self, session_id: str, agent: str) -> bool:
        return self.on

    async def propose(self, proposal: CellProposal) -> ProposalOutcome:
        self.proposals.append(proposal)
        n = len(self.proposals)
        return ProposalOutcome(n=n, state="pending", said=f"Proposed change {n}", told=f"Proposed change {n}.",
                               decide=[f"%agent accept {n}"])

    def pending_cells(self) -> dict[str, int]:
        return {p.cell_id: n for n, p in enumerate(self.proposals, 1) if p.cell_id is not None}


@pytest.fixture
def review() -> RecordingReview:
    return RecordingReview()


@pytest.fixture
def ctx(tmp_path: Path, review: RecordingReview) -> RecordingContext:
    context = RecordingContext(tmp_path)
    context.notebook = MemoryNotebook(["x = 1", "%%agent\nfix it"], calling="cell-1")
    context.review = review
    return context


async def test_a_replace_is_proposed_with_its_diff_and_nothing_is_asked_or_changed(ctx, review):
    result = await NotebookEditTool().run({"action": "replace", "cell_id": "cell-0", "source": "x = 2"}, ctx)
    [proposal] = review.proposals
    assert (proposal.action, proposal.cell_id, proposal.old_source, proposal.new_source, proposal.old_type) == (
        "replace", "cell-0", "x = 1", "x = 2", "code")
    assert (proposal.session_id, proposal.message_id, proposal.call_id, proposal.agent) == (
        "ses_test", "msg_test", "call_1", "build")
    assert ctx.asked == [] and ctx.notebook.cells[0].source == "x = 1"
    assert result.output == "Proposed change 1."
    assert result.metadata["pending"] == 1 and result.metadata["review"] == "pending"
    assert result.metadata["decide"] == ["%agent accept 1"] and "+x = 2" in result.metadata["diff"]


async def test_an_insert_is_proposed_with_the_mark_of_who_made_it(ctx, review):
    await NotebookEditTool().run({"action": "insert", "source": "y = 2"}, ctx)
    [proposal] = review.proposals
    assert proposal.cell_id is None and proposal.after is None and proposal.old_type is None
    assert proposal.metadata == {"opencode_nb": {"session": "ses_test", "call": "call_1"}}
    assert len(ctx.notebook.cells) == 2


async def test_a_deny_rule_denies_the_proposal_too(ctx, review):
    ctx.permitted = lambda permission, pattern: "deny" if pattern == "delete" else "allow"
    ctx.rules = lambda permission: [Rule(permission="notebook_edit", pattern="delete", action="deny")]
    with pytest.raises(DeniedError):
        await NotebookEditTool().run({"action": "delete", "cell_id": "cell-0"}, ctx)
    assert review.proposals == [] and len(ctx.notebook.cells) == 2


async def test_without_review_the_edit_asks_and_lands_as_before(ctx, review):
    review.on = False
    await NotebookEditTool().run({"action": "replace", "cell_id": "cell-0", "source": "x = 2"}, ctx)
    assert ctx.permissions() == [("notebook_edit", ["replace"])] and ctx.notebook.cells[0].source == "x = 2"


async def test_run_refuses_a_cell_whose_change_is_pending_and_read_marks_it(ctx, review):
    await NotebookEditTool().run({"action": "replace", "cell_id": "cell-0", "source": "x = 2"}, ctx)
    with pytest.raises(ToolError, match="A change you proposed is pending for cell cell-0 \\(change 1\\)"):
        await NotebookRunTool().run({"cell_ids": ["cell-0"]}, ctx)
    read = await NotebookReadTool().run({}, ctx)
    assert "[cell cell-0] #1 code · not run · pending change 1 (proposed, not accepted yet" in read.output
