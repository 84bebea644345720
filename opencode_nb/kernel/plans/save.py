"""A plan saved as notebook cells by `%agent plan cells` (approving a plan saves its cells itself, in plan_exit:
the approval's one question is the place to choose cells, so no card offers a button of its own)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from ...tool.support.plandoc import plan_cells
from .store import Plan, notebook_of, set_todos

if TYPE_CHECKING:
    from ...workspace import Workspace


async def save_cells(ws: Workspace, plan: Plan, *, after: str | None) -> str:
    """Insert the plan's cells below cell `after` (below the session's calling cell when None)."""
    from ...tool.context import NotebookRefused

    notebook = notebook_of(ws)
    try:
        ids = await notebook.insert(plan_cells(plan.doc), after=after, session_id=plan.session.id)
    except NotebookRefused as exc:
        raise UsageError(f"The plan's cells could not be saved: {exc}") from None
    set_todos(ws, plan.session.id, plan.doc)
    count = len(plan.doc.steps)
    return (f"Saved plan {plan.plan_id} as {len(ids)} cells: {count} step{'s' * (count != 1)} to run one by one, "
            f"or all with %agent plan run {plan.plan_id}.")
