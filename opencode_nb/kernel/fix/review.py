"""A Fix run that a person reviews in place waits, in its cell, until its proposed changes are decided.

With the extension showing pending changes in the cells they change, the person accepts or rejects them
there, while the Fix cell still runs: the kernel is busy with it, so `%agent accept` could not run now, but
the page's Accept and Reject reach the kernel over the comm, and an accepted cell is rerun by the kernel
itself (`cells.NotebookCells.run` runs a cell in the kernel while another cell holds it). Waiting keeps the
cells below the Fix cell queued behind it, so Run All tells the story in order: the error, the fix, the
decision, then the cells that use the fixed result.

The cell says what it waits for, one line per change, then one line per decision as it is made (the
decision's `said`). Interrupting the cell (■) ends the wait and leaves the changes pending. Without a page
that shows pending changes in place the card prints `%agent accept N` instead, and a headless runner has
decided them by policy already: neither waits.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..stopped import AgentStopped

if TYPE_CHECKING:
    from ..notebook.pending import Decision, PendingChange
    from ..runner import NotebookAgent

STILL_OPEN = ("conflict", "failed")
"""Decisions that leave the change pending (the cell was edited since, the notebook refused): still waited for."""


def reviews_in_place(agent: NotebookAgent) -> bool:
    """A person is present and the page shows pending changes in their cells."""
    return agent.presence.mode == "interactive" and agent.pending.in_place()


async def wait_for_review(agent: NotebookAgent, session_id: str, after: int) -> None:
    """Wait until every change `session_id` proposed after change `after` is decided, saying each decision.

    Raises:
        AgentStopped: the cell was interrupted; the changes not decided stay pending.
    """
    if not reviews_in_place(agent):
        return
    waiting = {c.n: c for c in agent.pending.waiting_for(session_id, after)}
    if not waiting:
        return
    heard: asyncio.Queue[Decision] = asyncio.Queue()
    stop_listening = agent.pending.listen(heard.put_nowait)
    for change in waiting.values():
        print(f"Waiting for your review of change {change.n} {_where(change)}: Accept or Reject it there.",
              flush=True)
    try:
        while waiting:
            decision = await heard.get()
            if decision.n not in waiting:
                continue
            print(decision.said, flush=True)
            if decision.state not in STILL_OPEN:
                del waiting[decision.n]
    except (asyncio.CancelledError, KeyboardInterrupt):
        raise AgentStopped(_stopped(list(waiting.values()))) from None
    finally:
        stop_listening()


def _where(change: PendingChange) -> str:
    if change.action != "insert":
        return f"in cell [{change.cell_id}]"
    return f"below cell [{change.anchor}]" if change.anchor else "at the end of the notebook"


def _stopped(left: list[PendingChange]) -> str:
    numbers = ", ".join(str(c.n) for c in left)
    plural = "s" if len(left) > 1 else ""
    return (f"■ Stopped waiting for your review: change{plural} {numbers} still pending. Accept or Reject in the "
            f"cell, or run %agent accept {left[0].n} / %agent reject {left[0].n} once this cell has ended.")
