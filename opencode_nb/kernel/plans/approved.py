"""Right after a plan is approved with "Run the steps now" in a cell, its steps run, in order, before the
cells that follow ("Save them as cells to run one by one" leaves them to the person).

Approving a plan (plan_exit, from a prompt cell) saves its steps as cells under that cell. Run All took its
list of cells before they existed, and cells the front end runs queue behind the busy one anyway, so left
to the front end the steps would never run during Run All, or run after everything else. So once the
prompt's run has ended, and while its cell still executes, the kernel runs the steps itself, one after
another, each shown in its own cell (`shown.py`), their progress one block in this cell (`progress.py`);
then the cell ends and Run All goes on with the cells after it. A step that does not finish fails this
cell, so Run All stops there, and says where to resume.

A prompt its cell does not await (`--bg`, or a detached kernel) holds no place in the notebook: its cell has
ended and the kernel may run other cells meanwhile. So once its run has ended well, the notebook itself runs
the step cells (`run_cells`, through the extension), one after another as Shift+Enter would, stopping at the
first that fails: each step runs in its own cell, as the button says, with that cell's count and outputs,
and a failure says where to resume in the failing cell. They queue behind any cell the person started
meanwhile. (The kernel cannot run them itself here as it does for an awaited prompt: its output would go to
a cell that has ended, which the page no longer shows.)
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from ...session.models import ToolCompleted, ToolPart
from ...tool.context import NotebookRefused
from ..magics import listing
from .steps import run_in_order, where_steps_show
from .store import StepCell, find_plan, notebook_of, step_cells

if TYPE_CHECKING:
    from ...workspace import Workspace
    from ..prompt_run import PromptRun
    from .host import PlanHost

log = logging.getLogger(__name__)

_following: set[asyncio.Future[list[str]]] = set()
"""The step runs waiting for a detached prompt to end: kept until they have started the cells."""


def approved_plan(ws: Workspace, session_id: str, floor: str) -> str | None:
    """The id of the plan whose steps a run after message `floor` saved as cells to run now (the latest), or
    None: steps the person chose to save as cells to run one by one wait for them."""
    found = None
    for item in ws.sessions.messages(session_id, floor):  # the run's own messages: not the whole session
        if item.message.id <= floor:
            continue
        for part in item.parts:
            if isinstance(part, ToolPart) and part.tool == "plan_exit" and isinstance(part.state, ToolCompleted):
                meta = part.state.metadata
                if meta.get("plan") and meta.get("cells") and meta.get("run") == "now":
                    found = str(meta["plan"])
    return found


async def after_prompt(agent: PlanHost, floor: str, detached: PromptRun | None) -> None:
    """Run the steps of a plan the prompt approved with "Run the steps now": here, when the cell awaited the
    prompt (`detached` None); else as their own cells once the detached run has ended.

    Raises:
        UsageError: a step run here did not finish (the message says where to resume).
        AgentStopped: a step run here was stopped.
    """
    if detached is None:
        await run_approved(agent, floor)
        return
    task = detached.task
    if task is None:
        return
    session_id = detached.session_id

    def ended(_: object) -> None:
        follow = asyncio.ensure_future(run_as_cells(agent, session_id, floor))
        _following.add(follow)
        follow.add_done_callback(_following.discard)

    task.add_done_callback(ended)


async def run_as_cells(agent: PlanHost, session_id: str, floor: str) -> list[str]:
    """Have the notebook run the unticked step cells of the plan a detached run after `floor` approved to run
    now, if it did and ended well (a stopped or failed run leaves them, as a failed cell does); the ids of the
    cells asked to run."""
    from ..notebook.cells import NotebookCells
    from .steps import judge

    ws = await agent.aworkspace()
    plan_id = approved_plan(ws, session_id, floor)
    if plan_id is None or judge(ws.sessions.messages(session_id), floor)[0] != "done":
        return []
    plan = find_plan(ws, plan_id)
    notebook = ws.notebook
    try:
        cells = await cells_of_plan(ws, plan_id)
        todo = [cells[s.number].id for s in plan.doc.steps if not s.done and s.number in cells]
        if todo:
            if not isinstance(notebook, NotebookCells):
                raise NotebookRefused("this notebook cannot run cells")
            notebook.schedule_run(todo)
    except NotebookRefused as exc:
        log.warning("the approved steps of plan %s did not start (%s); %%agent plan run %s runs them",
                    plan_id, exc, plan_id)
        return []
    return todo


async def run_approved(agent: PlanHost, floor: str) -> None:
    """Run the unticked steps of a plan the prompt that just ended approved as cells, if it did.

    Raises:
        UsageError: a step did not finish (the message says where to resume).
        AgentStopped: a step was stopped.
    """
    from IPython.display import display

    ws = await agent.aworkspace()
    if agent.session_id is None:
        return
    plan_id = approved_plan(ws, agent.session_id, floor)
    if plan_id is None:
        return
    plan = find_plan(ws, plan_id)
    try:
        cells = await cells_of_plan(ws, plan_id)
    except NotebookRefused as exc:
        display(listing.text(f"The plan's steps did not run: the notebook could not be read ({exc}). "
                             f"%agent plan run {plan_id} runs them."), raw=True)
        return
    todo = [cells[s.number] for s in plan.doc.steps if not s.done and s.number in cells]
    if not todo:
        return
    count = len(todo)
    where = where_steps_show(agent, ws)
    await run_in_order(agent, plan, todo, ran_by="approval",
                       lead=f"The plan is approved: {'its step runs' if count == 1 else f'its {count} steps run'} "
                            f"now, {where}{', one after another' if where == 'here' else ''}; the cells after this "
                            "one run when they are done.")


async def cells_of_plan(ws: Workspace, plan_id: str) -> dict[int, StepCell]:
    """The plan's step cells by step number, as the notebook holds them now (the first cell of each step)."""
    found: dict[int, StepCell] = {}
    for cell in step_cells((await notebook_of(ws).read()).cells):
        if cell.plan_id == plan_id:
            found.setdefault(cell.step, cell)
    return found
