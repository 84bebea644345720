"""Where a plan's state lives: its session, its file, its step cells, and its progress record.

An approved plan lives in three places that must agree: the plan file (`.opencode/plans/<id>.md`, whose
ticks say which steps are done), the session's todo list (what the live view pins at the top), and the
step cells (`%%agent --plan ID --step N`), whose bodies are the instructions actually carried out. Beside
the plan, `<id>.progress.json` keeps what a tick cannot: how often each step ran, how its last run ended,
how long it took and what the model said at the end.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from IPython.core.error import UsageError
from pydantic import BaseModel, Field

from ... import fs
from ...tool.support.plandoc import PlanDoc, PlanError, parse_plan, parse_step_line, plan_id_of, progress_path

if TYPE_CHECKING:
    from ...session.models import Session
    from ...tool.context import NotebookAccess
    from ...workspace import Workspace


class UnknownPlan(UsageError):
    """No session of this project's store is the plan's: a step cell of it was saved elsewhere or long ago,
    so its cell is left alone rather than failed (Run All goes on past it)."""

    def __init__(self, plan_id: str, where: str) -> None:
        super().__init__(f"Unknown plan {plan_id}: {where}. %agent plan lists this project's plans.")
        self.plan_id = plan_id
        self.where = where


StepStatus = Literal["pending", "running", "done", "failed", "rejected", "stopped"]
RanBy = Literal["cell", "approval", "plan run", "seen"]
"""Who started a step's latest run; "seen": a run for its cell whose cell has since said so once."""


class StepProgress(BaseModel):
    status: StepStatus = "pending"
    runs: int = 0
    """How many times the step was started."""
    summary: str = ""
    """The final text of its latest run, cut to `plans.SUMMARY_CHARS`."""
    error: str = ""
    """Why its latest run did not finish."""
    started_at: float | None = None
    duration_s: float | None = None
    ran_by: RanBy = "cell"
    """What started its latest run: its own cell, or the kernel on its cell's behalf, right after the plan was
    approved or from `%agent plan run`. The step's cell, run afterwards with the same instruction, says it
    already ran instead of running it twice."""
    instruction: str = ""
    """The instruction its latest run carried out (the cell's body then): an edited cell is a new request."""


class PlanProgress(BaseModel):
    plan: str
    session_id: str = ""
    steps: dict[str, StepProgress] = Field(default_factory=dict)
    """By step number, as a string (JSON keys)."""

    def of(self, number: int) -> StepProgress:
        return self.steps.get(str(number), StepProgress())


@dataclass(frozen=True)
class Plan:
    """A plan found by its id: its session, its file, and the file read as steps."""

    plan_id: str
    session: Session
    path: str
    """Relative to the project root."""
    file: Path
    text: str
    doc: PlanDoc


# ----------------------------------------------------------------------------------------------- finding


def plan_path_of(plan_id: str) -> str:
    from ...session.reminders import PLAN_DIR

    return f"{PLAN_DIR}/{plan_id}.md"


def session_plan_id(ws: Workspace, session_id: str) -> str:
    """The id of the plan a session (or its root) plans into: the root's slug, else its id."""
    from ...session.reminders import plan_path

    return plan_id_of(plan_path(ws.sessions, session_id))


def find_plan(ws: Workspace, plan_id: str) -> Plan:
    """The plan `plan_id` and its session.

    Raises:
        UnknownPlan: no session has that slug or id.
        UsageError: its plan file is missing or has no steps.
    """
    path = plan_path_of(plan_id)
    file = ws.root / path
    session = next((s for s in ws.sessions.list(None) if plan_id in (s.slug, s.id)), None)
    if session is None:
        where = (f"{path} exists, but no session of this project's store has the id or slug {plan_id!r} (was "
                 "it made with another data directory?)") if file.is_file() else \
            f"no session has the id or slug {plan_id!r}"
        raise UnknownPlan(plan_id, where)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"The plan file {path} of session {session.id} does not exist (any more). Ask the plan "
                         "agent to write it again (%%agent --agent plan).") from None
    try:
        doc = parse_plan(text, path)
    except PlanError as exc:
        raise UsageError(str(exc)) from None
    return Plan(plan_id, session, path, file, text, doc)


def notebook_of(ws: Workspace) -> NotebookAccess:
    if ws.notebook is None:
        raise UsageError("This kernel cannot read or change its notebook: plan cells need the notebook (the "
                         "JupyterLab extension, or a notebook file the kernel knows).")
    return ws.notebook


@dataclass(frozen=True)
class StepCell:
    id: str
    plan_id: str
    step: int
    body: str
    """The instruction: the cell's source below its first line."""


def step_cells(cells: list[Any]) -> list[StepCell]:
    """The step cells among `cells`, in notebook order, recognised by their first line (what runs)."""
    found = []
    for cell in cells:
        if cell.cell_type != "code":
            continue
        first, _, body = cell.source.partition("\n")
        parsed = parse_step_line(first)
        if parsed is not None:
            found.append(StepCell(cell.id, parsed[0], parsed[1], body))
    return found


# ----------------------------------------------------------------------------------------------- progress


def load_progress(ws: Workspace, plan: Plan) -> PlanProgress:
    return read_progress(ws.root / progress_path(plan.path), plan.plan_id)


def read_progress(file: Path, plan_id: str) -> PlanProgress:
    """What the progress file says; a missing or unreadable one is a plan that has not run yet."""
    try:
        return PlanProgress.model_validate_json(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return PlanProgress(plan=plan_id)


def save_progress(ws: Workspace, plan: Plan, progress: PlanProgress) -> None:
    """Written whole to a fresh file beside it, then renamed (`fs.write_file`): a reader never sees half a
    file, and a plans folder or progress file that a command swapped for a link is refused or replaced, never
    written through."""
    fs.write_file(ws.root, progress_path(plan.path), progress.model_dump_json(indent=1).encode("utf-8"))


def update_step(ws: Workspace, plan: Plan, number: int, **changes: Any) -> StepProgress:
    """Read the progress again, change one step, write it: steps of one plan may finish in any order."""
    progress = load_progress(ws, plan)
    step = progress.of(number).model_copy(update=changes)
    progress.steps[str(number)] = step
    progress.session_id = plan.session.id
    save_progress(ws, plan, progress)
    return step


def set_todos(ws: Workspace, session_id: str, doc: PlanDoc, running: int | None = None) -> None:
    """The session's todo list becomes the plan's steps: ticked ones completed, `running` in progress."""
    from ...values import Todo

    ws.sessions.set_todos(session_id, [
        Todo(content=step.first_line, id=str(step.number),
             status="completed" if step.done else "in_progress" if step.number == running else "pending")
        for step in doc.steps])
