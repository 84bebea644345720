"""`%agent undo` and `%agent redo`: what the magic asks of `kernel/rewind.py`, and how the answer is shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..rewind import Rewind
from . import listing

if TYPE_CHECKING:
    from ...checkpoint.records import Confirm
    from ..runner import NotebookAgent


async def undo(agent: NotebookAgent, run_id: str | None = None, *, to: str | None = None) -> dict[str, str]:
    """`%agent undo [--to N|MESSAGE] [RUN]`: the latest turn's (or turns from `to` on) files, cells and
    bindings in one step, or one live run's bindings."""
    ws = await agent.aworkspace()
    notebook = ws.notebook
    if run_id is not None:
        if notebook is None:
            return listing.text("Nothing to undo: the agents have no kernel here.")
        return listing.text(await notebook.undo(run_id))  # type: ignore[attr-defined]
    rewind = Rewind(agent.journal, ws, notebook)  # type: ignore[arg-type]
    try:
        return listing.text((await rewind.undo(agent.session_id, to=to, confirm=confirm(agent))).report())
    except LookupError as exc:
        return listing.text(str(exc.args[0]))


async def redo(agent: NotebookAgent) -> dict[str, str]:
    """`%agent redo`: put back what the latest undo took."""
    ws = await agent.aworkspace()
    rewind = Rewind(agent.journal, ws, ws.notebook)  # type: ignore[arg-type]
    return listing.text((await rewind.redo(confirm=confirm(agent))).report())


def confirm(agent: NotebookAgent) -> Confirm | None:
    """How an undo asks before writing over the person's change: a prompt in the cell where a page shows it,
    else nothing (the change is kept)."""
    from ..undo_ask import ask_overwrite

    return ask_overwrite if agent.presence.mode == "interactive" else None
