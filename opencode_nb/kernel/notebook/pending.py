"""Pending cell changes: what an agent proposed for a cell, kept until the person accepts or rejects it.

Under review (`review: cells`, globally or for an agent, or forced for a run such as a Fix) `notebook_edit`
does not change the notebook: it proposes, and returns at once. The change waits here, in the kernel's
memory, numbered 1, 2, … for the kernel's life (a number is never reused, so `%agent accept 2` always means
the same change). The person decides from the page (a panel in the cell, `pending_page.py`) or with
`%agent accept|reject [N|all]`; accepting applies the change through the notebook access inside the
proposing run's journal turn (`applying.py`), so that run's Undo takes it back, and a rejected change never
touched the notebook.

Where nobody is present (nbclient, `OPENCODE_NB_HEADLESS`) nobody can decide later, so the unattended
policy decides at once: `Agent.permission = allow` accepts, anything else rejects, and the tool's result says
which. Each decision a person makes is told to the model at the start of the session's next prompt
(`told`), accepted ones with how their rerun went; the page is sent the changes after each proposal and
each decision (`on_change`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .journal import TURN, Journal, Turn

if TYPE_CHECKING:
    from ...config.schema import Config
    from ...tool.context import CellProposal, ProposalOutcome
    from ..presence import Presence
    from .applying import Applied
    from .cells import NotebookCells

State = Literal["pending", "accepted", "rejected", "gone"]
"""`gone`: the cell it named was deleted (or the run that proposed it undone) before anyone accepted it."""


@dataclass
class PendingChange:
    """One proposal and what became of it."""

    n: int
    action: Literal["insert", "replace", "delete"]
    cell_id: str | None
    """replace and delete: the cell; insert: None until accepted, then the new cell's id."""
    anchor: str | None
    """insert: the cell it goes below (None: at the end)."""
    cell_type: str
    """The cell's type once the change is applied."""
    old_source: str
    old_type: str | None
    """What the cell was when proposed (None for insert): a cell that reads otherwise was edited since."""
    new_source: str
    session_id: str
    turn: Turn | None
    """The proposing run's journal turn: an accepted change is recorded there, so its Undo takes it back."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """insert: the new cell's metadata (who made it)."""
    diff: str = ""
    message_id: str = ""
    """The proposing assistant message (the turn's step)."""
    call_id: str = ""
    agent: str = ""
    state: State = "pending"
    said: str = ""
    """The latest sentence for a person about it (what accepting did, or why it could not)."""

    @property
    def where(self) -> str:
        """`cell [ab12]`, or `a new code cell below [ab12]`."""
        if self.action == "insert":
            return f"a new {self.cell_type} cell" + (f" below [{self.anchor}]" if self.anchor else " at the end")
        return f"cell [{self.cell_id}]"

    @property
    def named(self) -> str:
        """`change 2 to cell [ab12]`, `change 3 (a new code cell below [ab12])`: how sentences name it."""
        return f"change {self.n} ({self.where})" if self.action == "insert" else f"change {self.n} to {self.where}"

    def page_view(self) -> dict[str, Any]:
        """As `show_pending` sends it (labextension/PROTOCOL.md)."""
        return {"n": self.n, "cell_id": self.cell_id, "action": self.action, "after": self.anchor,
                "cell_type": self.cell_type, "old_source": self.old_source, "new_source": self.new_source,
                "diff": self.diff, "state": self.state, "said": self.said}


@dataclass(frozen=True)
class Decision:
    """What one accept or reject did: `state` is the change's state now, or `conflict` (left pending: the cell
    was edited since) or `failed` (left pending: the notebook refused)."""

    n: int
    state: Literal["accepted", "rejected", "gone", "conflict", "failed"]
    said: str

    def reply(self) -> dict[str, Any]:
        return {"n": self.n, "state": self.state, "said": self.said}


class PendingChanges:
    """The kernel's pending cell changes (`NotebookAgent.pending`, and `ws.review` for the tools)."""

    def __init__(self, *, notebook: Callable[[], NotebookCells | None], journal: Journal, presence: Presence,
                 config: Callable[[], Config | None], root_of: Callable[[str], str] | None = None) -> None:
        """
        Args:
            notebook: the notebook's cells once the workspace is built, else None.
            config: the configuration in force once the workspace is built, else None.
            root_of: the root session of a session (a subagent's changes are reviewed, and told, as its root's).
        """
        self.notebook = notebook
        self.journal = journal
        self.presence = presence
        self.config = config
        self.root_of = root_of
        self.changes: list[PendingChange] = []
        self.on_change: Callable[[list[PendingChange]], None] = lambda changed: None
        """Told the changes whose state changed or that are new, after each proposal and decision (the page)."""
        self.in_place: Callable[[], bool] = lambda: False
        """Whether a page shows pending changes in place (else the card prints how to decide them)."""
        self._numbers = itertools.count(1)
        self._forced: dict[str, int] = {}
        self._notes: dict[str, list[str]] = {}
        """Root session → the decisions its model has not been told yet, oldest first."""
        self._below: dict[tuple[str, str | None], str] = {}
        """(turn id, anchor) → the cell the latest accepted insert of that turn at that place became."""
        self._deciding: set[int] = set()
        """Changes being applied now: a second decision (the page and a magic at once) leaves them alone."""
        self._listeners: list[Callable[[Decision], None]] = []
        """(turn id, anchor) → the cell the latest accepted insert of that turn at that place became."""

    def listen(self, callback: Callable[[Decision], None]) -> Callable[[], None]:
        """Call `callback` with each decision as it is made (on the kernel's loop), until the returned function
        is called: a Fix run that waits for its changes to be decided says each one as it comes."""
        self._listeners.append(callback)

        def stop() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return stop

    def _decided(self, decision: Decision) -> None:
        for listener in list(self._listeners):
            listener(decision)

    # ------------------------------------------------------------------------------------------ review mode

    def force_review(self, session_id: str) -> Callable[[], None]:
        """Review every cell change of `session_id` (and its subagents) whatever `review:` says, until the
        returned function is called (a Fix run's proposals are always reviewed)."""
        self._forced[session_id] = self._forced.get(session_id, 0) + 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            left = self._forced.get(session_id, 1) - 1
            if left > 0:
                self._forced[session_id] = left
            else:
                self._forced.pop(session_id, None)

        return release

    def reviewing(self, session_id: str, agent: str) -> bool:
        """Whether `agent`'s cell changes in `session_id` land as pending changes: forced for the session (or
        its root), else `review` of the agent's config, else the global `review` (default off)."""
        if session_id in self._forced or self._root(session_id) in self._forced:
            return True
        config = self.config()
        if config is None:
            return False
        entry = config.agent.get(agent)
        chosen = entry.review if entry is not None and entry.review is not None else config.review
        return chosen == "cells"

    def _root(self, session_id: str) -> str:
        if self.root_of is None:
            return session_id
        try:
            return self.root_of(session_id)
        except Exception:  # an unknown session is its own root
            return session_id

    # ------------------------------------------------------------------------------------------ proposing

    async def propose(self, proposal: CellProposal) -> ProposalOutcome:
        """Keep the change pending, or where nobody is present decide it now by the unattended policy."""
        from ...tool.context import ProposalOutcome

        anchor = proposal.after
        if proposal.action == "insert" and anchor is None:
            notebook = self.notebook()
            turn = TURN.get()
            calling = notebook.calling_cell(proposal.session_id) if notebook is not None else None
            anchor = turn.below_calling if turn is not None and turn.below_calling and calling else calling
        change = PendingChange(
            n=next(self._numbers), action=proposal.action, cell_id=proposal.cell_id, anchor=anchor,
            cell_type=proposal.cell_type, old_source=proposal.old_source, old_type=proposal.old_type,
            new_source=proposal.new_source, session_id=proposal.session_id, turn=TURN.get(),
            metadata=dict(proposal.metadata), diff=proposal.diff, message_id=proposal.message_id,
            call_id=proposal.call_id, agent=proposal.agent)
        superseded = [c for c in self.pending() if c.cell_id is not None and c.cell_id == change.cell_id]
        for earlier in superseded:
            earlier.state = "gone"
            earlier.said = f"C{earlier.named[1:]} was replaced by change {change.n}, proposed for the same cell."
            self._decided(Decision(earlier.n, "gone", earlier.said))
        self.changes.append(change)
        if change.turn is not None:
            change.turn.proposed = True
        if self.presence.mode == "headless":
            return await self._unattended(change)
        self.on_change([*superseded, change])
        waiting = [c.n for c in self.pending()]
        decide = [] if self.in_place() else [f"%agent accept {change.n}", f"%agent reject {change.n}"]
        if decide and len(waiting) > 1:
            decide.append(f"%agent accept all  ({len(waiting)} changes are pending: {_numbers(waiting)})")
        told = (f"Proposed {_plain(change.named)}; the person will "
                "accept or reject it — do not run the cell before it is accepted. You are told the decision at "
                "the start of your next turn.")
        said = f"Proposed {change.named}: waiting for you to accept or reject it"
        return ProposalOutcome(n=change.n, state="pending", said=said, told=told, decide=decide)

    async def _unattended(self, change: PendingChange) -> ProposalOutcome:
        from ...tool.context import ProposalOutcome

        policy = self.presence.policy()
        if policy != "allow":
            change.state = "rejected"
            change.said = (f"C{change.named[1:]} was not applied: nobody is present to review it "
                           f"(Agent.permission = {policy}): nothing changed.")
            self.on_change([change])
            return ProposalOutcome(n=change.n, state="rejected", said=change.said, told=_plain(change.said)
                                   + " Show the person the change instead, or leave the cell as it is.")
        decision = await self._accept(change, rerun=True, force=False, tell=False)
        if decision.state != "accepted" and change.state == "pending":
            change.state = "rejected"  # nobody will decide it later
        self.on_change([change])
        if decision.state != "accepted":
            return ProposalOutcome(n=change.n, state="rejected", said=decision.said, told=_plain(decision.said))
        return ProposalOutcome(n=change.n, state="accepted", said=decision.said, told=(
            f"Nobody is present to review it, and Agent.permission = allow accepted it. {_plain(decision.said)}"))

    # ------------------------------------------------------------------------------------------ deciding

    def pending(self) -> list[PendingChange]:
        return [c for c in self.changes if c.state == "pending"]

    @property
    def latest(self) -> int:
        """The number of the latest change proposed in this kernel (0: none yet)."""
        return self.changes[-1].n if self.changes else 0

    def waiting_for(self, session_id: str, after: int) -> list[PendingChange]:
        """The changes still pending that `session_id` (or a subagent of it) proposed after change `after`."""
        root = self._root(session_id)
        return [c for c in self.pending() if c.n > after and self._root(c.session_id) == root]

    def pending_cells(self) -> dict[str, int]:
        return {c.cell_id: c.n for c in self.pending() if c.cell_id is not None}

    def find(self, n: int) -> PendingChange:
        """
        Raises:
            LookupError: no change has that number, or it was decided already (the message says which).
        """
        change = next((c for c in self.changes if c.n == n), None)
        if change is None:
            raise LookupError(f"There is no change {n}. {self.waiting_words()}")
        if change.state != "pending":
            raise LookupError(f"Change {n} was {change.state} already. {self.waiting_words()}")
        return change

    def waiting_words(self) -> str:
        waiting = [c.n for c in self.pending()]
        if not waiting:
            return "No change is pending."
        return f"Pending: {_numbers(waiting)}."

    async def decide(self, n: int | None, accept: bool, *, rerun: bool = True, force: bool = False) -> list[Decision]:
        """Accept or reject change `n`, or every pending change (`n=None`, in the order proposed).

        Args:
            rerun: run each accepted code cell afterwards.
            force: accept even over the person's later edit of the cell (a conflict otherwise).

        Raises:
            LookupError: `n` is not a pending change.
        """
        if n is not None and n in self._deciding:
            raise LookupError(f"Change {n} is being applied right now. {self.waiting_words()}")
        chosen = [c for c in (self.pending() if n is None else [self.find(n)]) if c.n not in self._deciding]
        decisions: list[Decision] = []
        self._deciding.update(c.n for c in chosen)
        try:
            for change in chosen:
                decisions.append(await self._decide(change, accept, rerun=rerun, force=force))
                self._decided(decisions[-1])
        finally:
            self._deciding.difference_update(c.n for c in chosen)
        if chosen:
            self.on_change(chosen)
        return decisions

    async def _decide(self, change: PendingChange, accept: bool, *, rerun: bool, force: bool) -> Decision:
        if accept:
            return await self._accept(change, rerun=rerun, force=force, tell=True)
        change.state = "rejected"
        change.said = f"Rejected {change.named}; the notebook was not changed."
        self._tell(change, f"The person rejected {_plain(change.named)}: nothing was changed.")
        return Decision(change.n, "rejected", change.said)

    async def _accept(self, change: PendingChange, *, rerun: bool, force: bool, tell: bool) -> Decision:
        from .applying import apply

        notebook = self.notebook()
        if notebook is None:
            return Decision(change.n, "failed", "The notebook cannot be reached yet; nothing was applied.")
        if change.turn is not None and change.turn.id in self.journal.undone:
            return self._gone(change, "the run that proposed it was undone since", tell)
        key = (change.turn.id if change.turn is not None else "", change.anchor)
        applied = await apply(notebook, change, rerun=rerun, force=force, below=self._below.get(key))
        if applied.verdict == "gone":
            return self._gone(change, applied.why, tell)
        if applied.verdict == "conflict":
            change.said = (f"Change {change.n} was not applied: {applied.why}. Reject it (%agent reject {change.n}) "
                           f"or accept it anyway (%agent accept {change.n} --anyway).")
            return Decision(change.n, "conflict", change.said)
        if applied.verdict == "failed":
            change.said = f"Change {change.n} could not be applied, and is still pending: {applied.why}"
            return Decision(change.n, "failed", change.said)
        change.state = "accepted"
        if change.action == "insert":
            change.cell_id = applied.cell_id
            if applied.cell_id is not None:
                self._below[key] = applied.cell_id
        change.said = self._accepted_words(change, applied)
        if tell:
            self._tell(change, f"The person accepted change {change.n}: " + _plain(change.said.split(": ", 1)[-1]))
        return Decision(change.n, "accepted", change.said)

    def _accepted_words(self, change: PendingChange, applied: Applied) -> str:
        from .applying import run_words

        done = {"insert": f"inserted {change.cell_type} cell [{applied.cell_id}]" + (
                    f" below [{change.anchor}]" if change.anchor else ""),
                "replace": f"replaced the source of cell [{change.cell_id}]",
                "delete": f"deleted cell [{change.cell_id}]"}[change.action]
        ran = run_words(applied)
        return f"Accepted change {change.n}: {done}" + (f"; {ran}." if ran else ".")

    def _gone(self, change: PendingChange, why: str, tell: bool) -> Decision:
        change.state = "gone"
        change.said = f"C{change.named[1:]} was dropped: {why}; nothing was applied."
        if tell:
            self._tell(change, _plain(change.said))
        return Decision(change.n, "gone", change.said)

    # ------------------------------------------------------------------------------------------ telling the model

    def _tell(self, change: PendingChange, line: str) -> None:
        self._notes.setdefault(self._root(change.session_id), []).append(line)

    def told(self, session_id: str) -> str | None:
        """The decisions the session's model has not been told, as one note for its next prompt (then
        forgotten), or None when there are none."""
        notes = self._notes.pop(self._root(session_id), [])
        if not notes:
            return None
        head = "Since your last turn the person decided on the cell changes you proposed:"
        return "\n".join([head, *(f"- {line}" for line in notes)])


def _numbers(numbers: list[int]) -> str:
    return ", ".join(str(n) for n in numbers)


def _plain(text: str) -> str:
    """Cell ids as the model writes them (`cell ab12`), without the brackets a person reads."""
    return text.replace("[", "").replace("]", "")
