"""plan_enter / plan_exit: switching between building and planning, with the person's consent.

A switch is a new (synthetic) user message naming the agent that should answer from now on; the loop
always takes its agent from the newest user message, so the switch survives a kernel restart.

In a notebook an approved plan is not carried out by the turn that approved it: its steps become cells under
the calling cell (`%%agent --plan ID --step N`). Once that turn ends the kernel runs them one by one, each
shown in its own cell (kernel/plans/approved.py), unless the prompt ran with `--bg`; a step can be edited and
run again as any cell. The build agent that answers next is told so, and the session's todo list becomes the
steps.
"""

from __future__ import annotations

import contextlib

from pydantic import BaseModel

from .. import fs
from ..errors import ToolError
from ..question.events import QuestionInfo, QuestionOption
from ..values import Todo
from .base import Tool, ToolContext, ToolResult, for_person
from .context import AgentSwitch, NotebookAccess, NotebookRefused
from .support.plandoc import METADATA_KEY, PlanDoc, PlanError, parse_plan, plan_cells, progress_path

DEFAULT_PLAN_PATH = ".opencode/plans/plan.md"
"""Where a plan goes when the run does not name a session's own plan file."""


class PlanParams(BaseModel):
    pass


def _switch(ctx: ToolContext) -> tuple[AgentSwitch, str]:
    if ctx.switch_agent is None:
        raise ToolError("This session cannot change agents; carry on in the current mode.",
                        summary="Not switched: this session cannot change agents")
    return ctx.switch_agent, ctx.plan_path or DEFAULT_PLAN_PATH


async def _confirm(ctx: ToolContext, question: str, header: str, yes: str = "Switch now") -> bool:
    if ctx.questions is None:
        raise ToolError("Nobody can confirm a mode switch in this session; carry on in the current mode.",
                        summary="Not switched: nobody can confirm it in this session")
    answers = await ctx.questions.ask(ctx.session_id, [QuestionInfo(
        question=question, header=header,
        options=[QuestionOption(label="Yes", description=yes),
                 QuestionOption(label="No", description="Stay in the current mode")])],
        agent=ctx.agent, tool=ctx.tool_ref)
    return bool(answers and answers[0] and answers[0][0].strip().lower() in ("yes", "y"))


class PlanEnterTool(Tool[PlanParams]):
    id = "plan_enter"
    params = PlanParams

    async def execute(self, params: PlanParams, ctx: ToolContext) -> ToolResult:
        switch, plan_path = _switch(ctx)
        if not await _confirm(ctx, f"Switch to the plan agent to research and write a plan to {plan_path}?",
                              "Plan mode"):
            raise ToolError("The person chose not to switch to planning. Continue in the current mode.",
                            summary="You chose not to switch to planning")
        switch("plan", "The person asked to plan first. Research the task with read-only tools "
                                          f"and write a step-by-step plan to {plan_path}; then call plan_exit.")
        return ToolResult("Switched to planning", "The person approved switching to the plan agent, which continues "
                          "from here.", for_person(f"@plan takes over to write a plan to {plan_path}", ""))


class PlanExitTool(Tool[PlanParams]):
    id = "plan_exit"
    params = PlanParams

    async def execute(self, params: PlanParams, ctx: ToolContext) -> ToolResult:
        switch, plan_path = _switch(ctx)
        if ctx.notebook is not None and await _notebook_answers(ctx):
            return await self._to_cells(ctx, switch, plan_path)
        if not await _confirm(ctx, f"The plan at {plan_path} is complete. Switch to the build agent and carry it "
                                   "out?", "Build agent"):
            raise ToolError(KEEP_PLANNING, summary=KEEP_PLANNING_SUMMARY)
        switch("build", _execute_note(plan_path))
        return ToolResult("Switched to building", "The person approved the plan; the build agent carries it out.",
                          for_person("You approved the plan; @build carries it out now", _plan_text(ctx, plan_path),
                                     markdown=True))

    async def _to_cells(self, ctx: ToolContext, switch: AgentSwitch, plan_path: str) -> ToolResult:
        notebook = ctx.notebook
        assert notebook is not None
        doc = _read_plan(ctx, plan_path)
        count = len(doc.steps)
        steps = f"{count} step{'s' * (count != 1)}"
        if not await _confirm(ctx, f"The plan at {plan_path} is complete ({steps}). Save its steps as cells under "
                                   "this cell, to run one by one with the build agent?", "Build agent",
                              yes="Save the steps as cells and switch to building"):
            raise ToolError(KEEP_PLANNING, summary=KEEP_PLANNING_SUMMARY)
        try:
            await _drop_earlier_plan_cells(notebook, ctx.session_id)
            ids = await notebook.insert(plan_cells(doc), after=None, session_id=ctx.session_id)
        except NotebookRefused as exc:
            switch("build", _execute_note(plan_path))
            return ToolResult("Switched to building", f"The steps could not be saved as notebook cells: {exc} "
                              "The person approved the plan, so the build agent carries it out now.",
                              {"plan": doc.plan_id, "cells": [], "refused": str(exc),
                               **for_person(f"The steps could not be saved as cells ({exc}); @build carries out the "
                                            "plan now", _plan_text(ctx, plan_path), markdown=True)})
        _forget_progress(ctx, plan_path)
        if ctx.todos is not None:
            ctx.todos.set_todos(ctx.session_id, [
                Todo(content=step.first_line, status="completed" if step.done else "pending", id=str(step.number))
                for step in doc.steps])
        switch("build", f"The plan at {plan_path} has been approved and saved as {steps} in notebook cells, which "
                        f"run one by one once this turn ends (or when the person runs them). {DO_NOT_RUN}.")
        return ToolResult(
            f"Saved the plan as {steps} in cells",
            f"The person approved the plan. Its {steps} were saved as cells under the calling cell; they run one "
            f"by one, each with the build agent, once this turn ends. {DO_NOT_RUN}: end your turn with "
            "one short sentence saying the steps are ready to run.",
            {"plan": doc.plan_id, "cells": ids, "steps": count,
             **for_person(f"Saved the plan as {steps} in cells below, each ready to run", _plan_text(ctx, plan_path),
                          markdown=True)})


DO_NOT_RUN = "Do not carry out any step now"
"""What the build agent is told when the approved plan's steps became cells: the person runs them."""
KEEP_PLANNING = "The person wants to keep planning. Ask what to change in the plan, then revise it."
KEEP_PLANNING_SUMMARY = "You chose to keep planning"


def _plan_text(ctx: ToolContext, plan_path: str) -> str:
    """The plan as written, shown on the card of its approval ("" when it cannot be read)."""
    try:
        return (ctx.directory / plan_path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


async def _notebook_answers(ctx: ToolContext) -> bool:
    """Whether the notebook can be read at all (a kernel may not know its notebook file): the question
    put to the person should promise only what can happen."""
    assert ctx.notebook is not None
    try:
        await ctx.notebook.read([])
    except NotebookRefused:
        return False
    return True


async def _drop_earlier_plan_cells(notebook: NotebookAccess, session_id: str) -> None:
    """Plan cells already right under the calling cell are an earlier approval's (Run All in a new kernel plans
    again; a plan may be approved twice): the new plan takes their place instead of piling up above them.
    Only the unbroken run of cells marked as plan cells goes; the first cell of the person's own ends it."""
    calling = notebook.calling_cell(session_id)
    if calling is None:
        return
    cells = (await notebook.read()).cells
    at = next((i for i, cell in enumerate(cells) if cell.id == calling), None)
    if at is None:
        return
    stale = []
    for cell in cells[at + 1:]:
        if not isinstance(cell.metadata.get(METADATA_KEY), dict) or "plan" not in cell.metadata[METADATA_KEY]:
            break
        stale.append(cell.id)
    if stale:
        await notebook.delete(stale, session_id=session_id)


def _execute_note(plan_path: str) -> str:
    return f"The plan at {plan_path} has been approved. Execute it step by step; you can now edit files."


def _read_plan(ctx: ToolContext, plan_path: str) -> PlanDoc:
    """The plan, parsed; a missing or step-less file is an error the plan agent can fix before asking."""
    path = ctx.directory / plan_path
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ToolError(f"There is no plan at {plan_path} yet. Write it there (a `# Title`, the goal, and the "
                        "steps as a numbered list), then call plan_exit again.",
                        summary=f"Not yet: there is no plan at {plan_path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolError(f"The plan at {plan_path} cannot be read: {exc}") from None
    try:
        return parse_plan(text, plan_path)
    except PlanError as exc:
        raise ToolError(f"{exc} Revise the plan file, then call plan_exit again.",
                        summary=f"Not yet: the plan needs revising ({exc})") from None


def _forget_progress(ctx: ToolContext, plan_path: str) -> None:
    """A plan approved again starts over: the runs and results recorded for its earlier version would
    mark fresh steps as re-runs and feed old results to the model."""
    # By `fs`: a plans folder swapped for a link leads nowhere, so no file outside is removed.
    with contextlib.suppress(fs.Refused):
        fs.remove(ctx.directory, progress_path(plan_path))
