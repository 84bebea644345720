"""Plans as notebook cells: running a step, running what is left, listing the plans (saving the cells: `save.py`).

A person edits a step by editing its cell: the cell's body is the instruction carried out. Each step's
prompt carries the plan file and the final texts of the steps before it (from the progress record, see
`store.py`), so each step builds on what the earlier ones found.

A step runs in its plan's session (the root session whose slug, or id, is the plan's id) with the build
agent, through the kernel's `prompt` (`host.py`): the cell shows the live view and then the transcript like any
prompt cell. A step that does not finish (an error, a refused permission, a stop) is not ticked and
fails its cell, so Run All, nbclient and the front end's run of the remaining cells stop there.

A step cell that cannot be a step any more is not a failure: its plan is unknown to this project's store (a
notebook saved elsewhere, a new kernel in a fresh project), or approving a newer plan replaced its cell
while Run All had it queued. Failing it would stop Run All at a cell the person cannot see or did not
write, so it says so in its own output and ends without an error. A cell that names a known plan wrongly
(a step the plan does not have, options that clash) is the person's to fix and stays an error.

Running several steps (right after a plan is approved, `approved.py`, or with `%agent plan run`) happens
here, in the cell that asked, one step after another with each step cell's current body: cells the front
end ran would queue behind this one and run after everything Run All queued. With the JupyterLab
extension each step is shown in its own cell (`shown.py`), and running that cell afterwards with the same
instruction says it already ran instead of running it twice (once: running it again re-runs the step).
Without the extension (nbclient, a headless run) the steps' transcripts are shown in the cell that ran
them: nbclient's result is its own copy of the notebook, which never holds cells the kernel inserted, so
that cell is the one place every headless runner keeps.
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from ... import fs
from ...tool.context import NotebookRefused
from ...tool.support.plandoc import (
    PlanError,
    parse_plan,
    short,
    tick,
)
from ..magics import listing
from .progress import StepsProgress
from .save import save_cells
from .shown import StepCellOutputs
from .store import (
    Plan,
    PlanProgress,
    RanBy,
    StepCell,
    StepProgress,
    StepStatus,
    UnknownPlan,
    find_plan,
    load_progress,
    notebook_of,
    plan_path_of,
    session_plan_id,
    set_todos,
    step_cells,
    update_step,
)

if TYPE_CHECKING:
    from ...session.events import SessionIdle
    from ...session.models import MessageWithParts
    from ...workspace import Workspace
    from .host import PlanHost

SUMMARY_CHARS = 600
"""Of a step's final text, kept in the progress file and passed to later steps."""
EARLIER_CHARS = 4000
"""Of all earlier steps' results together in one step's prompt: the oldest are dropped first."""
PLAN_CHARS = 20_000
"""Of the plan file in a step's prompt."""

# ----------------------------------------------------------------------------------------------- one step


def resume_hint(plan_id: str, number: int) -> str:
    return f"%agent plan run {plan_id} --from {number}"


async def run_step(agent: PlanHost, plan_id: str, number: int, body: str, *, model: str | None = None,
                   cell: StepCell | None = None, ran_by: RanBy = "cell",
                   progress: StepsProgress | None = None) -> None:
    """Carry out step `number` of plan `plan_id` with the instruction `body`, in the plan's session.

    From its own cell (`ran_by="cell"`): an unknown plan, or a cell a newer plan replaced, is shown as not
    run and returns (see the module's docstring), and so is a step the kernel already ran for this cell with
    the same instruction (`shown.py`), once. On a cell's behalf (`cell` given, `ran_by` the approval or
    `%agent plan run`): the run is shown in that cell when the extension can show it there, and how it goes
    is marked in `progress`, the block of the whole run, instead of lines of its own.

    Raises:
        UsageError: no run may start now (`PlanHost.gate`), the step is not one of the plan's, or the step did
            not finish (the message says where to resume).
        AgentStopped: the step was stopped (■, Stop, `%agent stop`); it is recorded as stopped.
    """
    from IPython.display import display

    from ..ending import error_output
    from ..stopped import AgentStopped

    ws = await agent.aworkspace()
    agent.gate()
    found = await _runnable(agent, ws, plan_id, number, body, ran_by)
    if found is None:
        return
    plan, recorded, instruction, rerun = found
    run_number = recorded.of(number).runs + 1
    headline = f"▶ Step {number} of {len(plan.doc.steps)} — {short(instruction)}" + (
        f"  (re-run: run {run_number} of this step)" if rerun else "")
    shown = shown_in(agent, cell, headline, ran_by)
    if progress is None:
        display(listing.text(headline + ("  (shown in its cell below)" if shown is not None else "")), raw=True)
    else:
        progress.mark(number, "running")
    here = "run this cell again" if cell is None else f"run step {number}'s cell"
    try:
        status, reason = await _carry_out(agent, ws, plan_id, plan, number, instruction, recorded, rerun=rerun,
                                          run_number=run_number, model=model, shown=shown, ran_by=ran_by, here=here)
    except BaseException as exc:
        if progress is not None:
            progress.mark(number, "stopped" if isinstance(exc, AgentStopped) else "failed")
        raise
    if progress is not None:
        progress.mark(number, "done" if status == "done" else "stopped" if status == "stopped" else "failed")
    if status != "done":
        failed = UsageError(f"Step {number} of plan {plan_id} did not finish ({reason}); it is not ticked. Fix what "
                            f"stopped it and {here}, or resume with {resume_hint(plan_id, number)}")
        if shown is not None:
            shown.end(error=error_output(failed))
        raise failed
    ticked = f"✓ Step {number} ticked in {plan.path}"
    if progress is None:
        display(listing.text(ticked), raw=True)
    if shown is not None:
        shown.end(said=ticked)


async def _runnable(agent: PlanHost, ws: Workspace, plan_id: str, number: int, body: str,
                    ran_by: RanBy) -> tuple[Plan, PlanProgress, str, bool] | None:
    """The plan, its progress, the instruction and whether it is a re-run, for a step that is to run now;
    None when the cell says why it does not (an unknown plan, a replaced cell, a step that already ran)."""
    from IPython.display import display

    try:
        plan = find_plan(ws, plan_id)
    except UnknownPlan as exc:
        display(listing.text(f"Not run: this cell is step {number} of plan {plan_id}, which is unknown here "
                             f"({exc.where}); the cells after it run on. %agent plan lists this project's "
                             "plans."), raw=True)
        return None
    if ran_by == "cell" and await replaced(agent, ws):
        display(listing.text(f"Not run: this cell, step {number} of plan {plan_id}, is no longer in the notebook "
                             "(approving a newer plan replaced its cells). %agent plan lists the plans; run the "
                             "new plan's step cells."), raw=True)
        return None
    if agent.detached and agent.presence.mode != "headless":
        raise UsageError("Plan steps run attached, so a failing step stops the cells after it; Agent.mode is "
                         "'detached'. Set %config Agent.mode = 'auto' and run the step again.")
    try:
        step = plan.doc.step(number)
    except PlanError as exc:
        raise UsageError(str(exc)) from None
    progress = load_progress(ws, plan)
    before = progress.of(number)
    instruction = body.strip() or step.text
    if ran_by == "cell" and already_ran(before, step.done, instruction):
        update_step(ws, plan, number, ran_by="seen")
        display(listing.text(already_ran_text(plan, number, before)), raw=True)
        return None
    return plan, progress, instruction, before.runs > 0 or step.done


async def _carry_out(agent: PlanHost, ws: Workspace, plan_id: str, plan: Plan, number: int, instruction: str,
                     progress: PlanProgress, *, rerun: bool, run_number: int, model: str | None,
                     shown: StepCellOutputs | None, ran_by: RanBy, here: str) -> tuple[StepStatus, str]:
    """Run the step's prompt in the plan's session and record how it ended: its status and why.

    Raises:
        AgentStopped: the step was stopped; it is recorded as stopped.
    """
    from ... import id as ids
    from ...session.models import TextPart
    from ..stopped import AgentStopped

    prompt = step_prompt(plan, number, instruction, progress, rerun=rerun)
    visible = f"Step {number} of plan {plan_id}{' (re-run)' if rerun else ''}: {short(instruction)}"
    started = time.time()
    update_step(ws, plan, number, status="running", runs=run_number, started_at=started, duration_s=None,
                error="", ran_by=ran_by, instruction=instruction)
    set_todos(ws, plan.session.id, plan.doc, running=number)
    floor = ids.ascending("message")
    status: StepStatus = "failed"
    reason = ""
    ended = RunEnd(ws, plan, number, floor, started)
    try:
        # The short line first, then what the model needs: parts keep the order they were made in.
        parts = [TextPart(session_id=plan.session.id, message_id="", text=visible),
                 TextPart(session_id=plan.session.id, message_id="", text=prompt, synthetic=True)]
        await agent.prompt("", agent="build", model=model, session=plan.session.id, parts=parts,
                           cell_id=shown.cell_id if shown is not None else None,
                           show=shown.show if shown is not None else None)
    except UsageError as exc:
        reason = str(exc) or "the run failed"
    except KeyboardInterrupt:
        if ended.outcome is None:
            _finish(ws, plan, number, "stopped", started, "", "it was stopped")
        stopped = AgentStopped(f"■ Step {number} was stopped and is not ticked. {here.capitalize()}, or resume "
                               f"with {resume_hint(plan_id, number)}")
        if shown is not None:
            shown.end(error=stopped.output())
        raise stopped from None
    finally:
        ended.close()
    if ended.outcome is not None:
        return ended.outcome
    # The run never started (stopped while queued, a configuration error): nothing went idle.
    messages = ws.sessions.messages(plan.session.id)
    if not reason:
        status, reason = judge(messages, floor)
    _finish(ws, plan, number, status, started, final_text(messages, floor), reason)
    return status, reason


def shown_in(agent: PlanHost, cell: StepCell | None, headline: str, ran_by: RanBy) -> StepCellOutputs | None:
    """Where a step run on a cell's behalf is shown: that cell, when the extension can fill it; else (headless,
    no extension) nowhere but the cell that runs it."""
    from ..cell_now import cell_count

    frontend = getattr(agent, "frontend", None)
    if cell is None or frontend is None or not frontend.live or "replace_cell" not in frontend.capabilities:
        return None
    by = "the cell that approved the plan" if ran_by == "approval" else "%agent plan run"
    return StepCellOutputs(frontend, cell.id, lead=f"{headline}  (run by {by})",
                           execution_count=cell_count(agent.shell))


def already_ran(before: StepProgress, ticked: bool, instruction: str) -> bool:
    """Whether running a step's cell now would run it twice: the kernel ran it for this cell (right after the
    approval, or from `%agent plan run`), it finished and is ticked, and the cell asks for the same thing."""
    return (before.ran_by in ("approval", "plan run") and before.status == "done" and ticked
            and before.instruction == instruction)


def already_ran_text(plan: Plan, number: int, before: StepProgress) -> str:
    when = "right after the plan was approved" if before.ran_by == "approval" else "from %agent plan run"
    said = f" It said: {short(before.summary, 200)}" if before.summary else ""
    ago = f" ({listing.ago(before.started_at)})" if before.started_at else ""
    return (f"✓ Step {number} already ran {when}{ago} and is ticked in {plan.path}; not run again.{said}\n"
            f"Run this cell again to run step {number} once more (or edit its instruction first); "
            f"%agent show {plan.session.id} shows what it did.")


async def replaced(agent: PlanHost, ws: Workspace) -> bool:
    """Whether the running cell is gone from the notebook the person sees: a newer plan's approval deleted it
    after Run All queued it. Only the live notebook can tell (the front end names the running cell and shows
    the current cells); a notebook file may simply not have been saved since the cell was added."""
    cell_id = running_cell(agent)
    notebook = ws.notebook
    if cell_id is None or notebook is None or not notebook.live:
        return False
    try:
        cells = (await notebook.read()).cells
    except NotebookRefused:
        return False  # the notebook cannot be read now: run the step as the person asked
    return all(cell.id != cell_id for cell in cells)


def _finish(ws: Workspace, plan: Plan, number: int, status: StepStatus, started: float, answer: str,
            reason: str) -> None:
    """Record how the step's run ended; a finished step is ticked in the file and on the todo list."""
    update_step(ws, plan, number, status=status, summary=answer[:SUMMARY_CHARS], error=reason,
                duration_s=round(time.time() - started, 2))
    if ws.hooks is not None:
        ws.hooks.later("PlanStepFinished", {"session_id": plan.session.id, "plan": str(plan.path), "step": number,
                                            "status": status, "summary": answer[:SUMMARY_CHARS], "error": reason})
    doc = plan.doc
    if status == "done":
        # Tick the file as it is now, not as it was read: the person may have edited it meanwhile; a file
        # that no longer has this step is left alone.
        # Read and written by `fs`: a plan file (or folder) a command swapped for a link is left alone, and
        # the file it points at, perhaps in HOME, is neither read nor written.
        with contextlib.suppress(OSError, PlanError, UnicodeDecodeError):
            current = fs.read_file(ws.root, plan.path).decode("utf-8")
            ticked = tick(current, plan.path, number)
            if ticked != current:
                fs.write_file(ws.root, plan.path, ticked.encode("utf-8"), make_parents=False)
            doc = parse_plan(ticked, plan.path)
    set_todos(ws, plan.session.id, doc)


class RunEnd:
    """Judges and records a step's run the moment its session goes idle.

    The loop publishes `session.idle` before `ws.prompt` returns, and the runner draws the cell's transcript
    right after it returns: recorded here, the step's tick (or its return to pending) is on the todo list
    before the live view ends and in the transcript, which would otherwise show the step in progress for good.
    """

    def __init__(self, ws: Workspace, plan: Plan, number: int, floor: str, started: float) -> None:
        from ...session.events import SessionIdle

        self.ws, self.plan, self.number, self.floor, self.started = ws, plan, number, floor, started
        self.outcome: tuple[StepStatus, str] | None = None
        """How the run ended and why, once recorded."""
        self.close = ws.bus.subscribe(SessionIdle, self._idle)

    def _idle(self, event: SessionIdle) -> None:
        if event.session_id != self.plan.session.id or self.outcome is not None:
            return
        messages = self.ws.sessions.messages(self.plan.session.id)
        if not any(m.message.id > self.floor and m.message.role == "user" for m in messages):
            return  # an earlier run of the session ending: this step's prompt is not in yet
        self.outcome = judge(messages, self.floor)
        _finish(self.ws, self.plan, self.number, self.outcome[0], self.started, final_text(messages, self.floor),
                self.outcome[1])


def judge(messages: list[MessageWithParts], floor: str) -> tuple[StepStatus, str]:
    """How the run after message `floor` ended: done, or why not (an error, a refusal, a stop)."""
    from ...session.models import AssistantMessage, ToolPart

    answers = [m for m in messages if m.message.id > floor and isinstance(m.message, AssistantMessage)]
    if not answers:
        return "failed", "the agent gave no answer"
    final = answers[-1].message
    assert isinstance(final, AssistantMessage)
    if final.error is not None:
        if final.error.kind == "aborted":
            return "stopped", "it was stopped"
        return "failed", final.error.message
    if final.finish == "tool-calls":
        # The loop ends on a call's answer only when the person refused it without saying why.
        refused = [p for p in answers[-1].parts if isinstance(p, ToolPart) and p.state.status == "error"]
        what = f"the {refused[0].tool} call was rejected" if refused else "the run ended before the step was done"
        return "rejected", what
    return "done", ""


def final_text(messages: list[MessageWithParts], floor: str) -> str:
    from ...session.models import AssistantMessage, TextPart

    for item in reversed(messages):
        if item.message.id <= floor:
            break
        if isinstance(item.message, AssistantMessage):
            text = "\n\n".join(p.text for p in item.parts if isinstance(p, TextPart) and p.text and not p.synthetic)
            if text.strip():
                return text.strip()
    return ""


def step_prompt(plan: Plan, number: int, instruction: str, progress: PlanProgress, *, rerun: bool) -> str:
    """What the model reads for a step: the step, the whole plan, and what the earlier steps came to."""
    total = len(plan.doc.steps)
    before = progress.of(number)
    lines = [f"This is step {number} of {total} of the approved plan {plan.plan_id} ({plan.path})"
             + (", run again." if rerun else ".")]
    if rerun:
        last = f"; its last run ended {before.status}" if before.status != "pending" else ""
        said = f" and said: {before.summary}" if before.summary else ""
        lines.append(f"It is a re-run: this step was started {before.runs} time{'s' * (before.runs != 1)} before"
                     f"{last}{said}. Start from how things are now: parts of it may already be done.")
    lines.append("Carry out this step and only this step with your tools; the person runs each of the other steps "
                 "from its own notebook cell. When it is done, end with a short summary of what you did and how "
                 "you checked it.")
    lines += ["", f"Step {number} (the person may have edited it; where it differs from the plan file, follow it):",
              instruction, "", f"The whole plan ({plan.path}):", "<plan>", plan.text[:PLAN_CHARS].rstrip(), "</plan>"]
    earlier = [(n, progress.of(n)) for n in range(1, number)]
    results = [f"- Step {n} ({p.status}): {p.summary or p.error or '(no summary)'}" for n, p in earlier if p.runs]
    while results and sum(len(r) for r in results) > EARLIER_CHARS:
        results.pop(0)
    if results:
        lines += ["", "What the earlier steps ended with:", *results]
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------- many steps


async def run_remaining(agent: PlanHost, plan_id: str | None, start: int | None) -> dict[str, str] | None:
    """`%agent plan run [ID] [--from N]`: run the unticked steps (or steps N onwards) here, in order.

    Returns what to show when there is nothing to run, else None after running them.
    """
    ws = await agent.aworkspace()
    notebook = notebook_of(ws)
    snapshot = await notebook.read()
    cells = step_cells(snapshot.cells)
    plan_id = plan_id or default_plan_id(agent, ws, cells)
    plan = find_plan(ws, plan_id)
    by_step: dict[int, StepCell] = {}
    for cell in cells:
        if cell.plan_id == plan_id:
            by_step.setdefault(cell.step, cell)
    total = len(plan.doc.steps)
    if start is not None and not 1 <= start <= total:
        raise UsageError(f"--from {start}: the plan {plan.path} has steps 1 to {total}.")
    chosen = [s.number for s in plan.doc.steps if (s.number >= start if start is not None else not s.done)]
    if not chosen:
        return listing.text(f"Every step of plan {plan_id} is ticked. {resume_hint(plan_id, 1)} runs them again.")
    missing = [n for n in chosen if n not in by_step]
    if missing:
        raise UsageError(f"Step{'s' * (len(missing) != 1)} {', '.join(map(str, missing))} of plan {plan_id} "
                         f"{'have' if len(missing) != 1 else 'has'} no cell in this notebook. %agent plan cells "
                         f"{plan_id} saves the plan's cells under the current cell.")
    count = len(chosen)
    await run_in_order(agent, plan, [by_step[n] for n in chosen], ran_by="plan run",
                       lead=f"Plan {plan_id}: {'its step runs' if count == 1 else f'{count} of its steps run'} now, "
                            f"{where_steps_show(agent, ws)}, one after another.")
    return None


async def run_in_order(agent: PlanHost, plan: Plan, cells: list[StepCell], *, ran_by: RanBy, lead: str) -> None:
    """Run the steps of `cells` one after another, each with its cell's current body, on the cells' behalf
    (`shown.py` says why here and not as cells); the first that does not finish stops the rest. How far they
    have got is one block under `lead`, updated in place (`progress.py`).

    Raises:
        UsageError: no run may start now (`PlanHost.gate`: nothing is shown or recorded), or a step did not
            finish; the message names it and where to resume.
        AgentStopped: a step was stopped.
    """
    agent.gate()
    progress = StepsProgress(plan, [cell.step for cell in cells], lead,
                             instructions={cell.step: cell.body.strip() for cell in cells},
                             shown_in_cells=shown_in(agent, cells[0], "", ran_by) is not None if cells else False)
    progress.start()
    for cell in cells:
        await run_step(agent, plan.plan_id, cell.step, cell.body, cell=cell, ran_by=ran_by, progress=progress)
    count = len(cells)
    progress.end(f"✓ {'The step' if count == 1 else f'All {count} steps'} of plan {plan.plan_id} ran and "
                 f"{'is' if count == 1 else 'are'} ticked in {plan.path}.")


def where_steps_show(agent: PlanHost, ws: Workspace) -> str:
    """Where the steps a cell runs on their cells' behalf show: in those cells with the extension, else here."""
    frontend = getattr(agent, "frontend", None)
    in_cells = (notebook_of(ws).live and frontend is not None and frontend.live
                and "replace_cell" in frontend.capabilities)
    return "each in its cell below" if in_cells else "here"


def default_plan_id(agent: PlanHost, ws: Workspace, cells: list[StepCell]) -> str:
    """The current session's plan if it has a file, else the plan of the notebook's last step cell."""
    if agent.session_id is not None:
        plan_id = session_plan_id(ws, agent.session_id)
        if (ws.root / plan_path_of(plan_id)).is_file():
            return plan_id
    if cells:
        return cells[-1].plan_id
    raise UsageError("No plan in this notebook yet: ask the plan agent for one (%%agent --agent plan), or name "
                     "a plan: %agent plan run ID. %agent plan lists this project's plans.")


# ----------------------------------------------------------------------------------------------- saving cells


async def cells_here(agent: PlanHost, plan_id: str | None) -> dict[str, str]:
    """`%agent plan cells [ID]`: the plan's cells under the cell running the magic."""
    ws = await agent.aworkspace()
    if plan_id is None:
        if agent.session_id is None:
            raise UsageError("No session yet in this notebook: name the plan, %agent plan cells ID (%agent plan "
                             "lists them).")
        plan_id = session_plan_id(ws, agent.session_id)
    plan = find_plan(ws, plan_id)
    after = running_cell(agent) or (await notebook_of(ws).read([])).running_cell
    return listing.text(await save_cells(ws, plan, after=after))


def running_cell(agent: PlanHost) -> str | None:
    """The id of the cell this code runs in, as JupyterLab sends it with the execute request (nbclient sends
    none: then the notebook finds the running cell by its text)."""
    kernel = getattr(agent.shell, "kernel", None)
    try:
        return kernel.get_parent()["metadata"].get("cellId") if kernel is not None else None
    except (AttributeError, KeyError, TypeError):
        return None
