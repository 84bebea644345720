"""A plan saved as notebook cells: from `%agent plan cells`, and from the live view's "Save as cells" button,
which the runner wires up without knowing how plans run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from ...tool.support.plandoc import plan_cells
from .store import Plan, find_plan, notebook_of, session_plan_id, set_todos

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


def save_callback(ws: Workspace) -> Callable[[str], Awaitable[str]] | None:
    """What the live view's "Save as cells" button calls with its session id; None where there is no notebook."""
    if ws.notebook is None:
        return None

    async def save(session_id: str) -> str:
        try:
            plan = find_plan(ws, session_plan_id(ws, session_id))
            return await save_cells(ws, plan, after=None)
        except UsageError as exc:
            return str(exc)

    return save
