"""plan_enter / plan_exit: switching between building and planning, with the person's consent.

A switch is a new (synthetic) user message naming the agent that should answer from now on; the loop
always takes its agent from the newest user message, so the switch survives a kernel restart.

In a notebook an approved plan is not carried out at once: its steps become cells under the calling cell
(`%%agent --plan ID --step N`), which the person runs one by one, editing a step first if they like. The
build agent that answers next is told so, and the session's todo list becomes the steps.
"""

from __future__ import annotations

from pydantic import BaseModel

from ..errors import ToolError
from ..question.events import QuestionInfo, QuestionOption
from ..values import Todo
from .base import Tool, ToolContext, ToolResult
from .context import AgentSwitch, NotebookAccess, NotebookRefused
from .support.plandoc import METADATA_KEY, PlanDoc, PlanError, parse_plan, plan_cells, progress_path

DEFAULT_PLAN_PATH = ".opencode/plans/plan.md"
"""Where a plan goes when the run does not name a session's own plan file."""


class PlanParams(BaseModel):
    pass


def _switch(ctx: ToolContext) -> tuple[AgentSwitch, str]:
    if ctx.switch_agent is None:
        raise ToolError("This session cannot change agents; carry on in the current mode.")
    return ctx.switch_agent, ctx.plan_path or DEFAULT_PLAN_PATH


async def _confirm(ctx: ToolContext, question: str, header: str, yes: str = "Switch now") -> bool:
    if ctx.questions is None:
        raise ToolError("Nobody can confirm a mode switch in this session; carry on in the current mode.")
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
            raise ToolError("The person chose not to switch to planning. Continue in the current mode.")
        switch("plan", "The person asked to plan first. Research the task with read-only tools "
                                          f"and write a step-by-step plan to {plan_path}; then call plan_exit.")
        return ToolResult("Switched to planning", "The person approved switching to the plan agent, which continues "
                          "from here.")


class PlanExitTool(Tool[PlanParams]):
    id = "plan_exit"
    params = PlanParams

    async def execute(self, params: PlanParams, ctx: ToolContext) -> ToolResult:
        switch, plan_path = _switch(ctx)
        if ctx.notebook is not None and await _notebook_answers(ctx):
            return await self._to_cells(ctx, switch, plan_path)
        if not await _confirm(ctx, f"The plan at {plan_path} is complete. Switch to the build agent and carry it "
                                   "out?", "Build agent"):
            raise ToolError(KEEP_PLANNING)
        switch("build", _execute_note(plan_path))
        return ToolResult("Switched to building", "The person approved the plan; the build agent carries it out.")

    async def _to_cells(self, ctx: ToolContext, switch: AgentSwitch, plan_path: str) -> ToolResult:
        notebook = ctx.notebook
        assert notebook is not None
        doc = _read_plan(ctx, plan_path)
        count = len(doc.steps)
        steps = f"{count} step{'s' * (count != 1)}"
        if not await _confirm(ctx, f"The plan at {plan_path} is complete ({steps}). Save its steps as cells under "
                                   "this cell, to run one by one with the build agent?", "Build agent",
                              yes="Save the steps as cells and switch to building"):
            raise ToolError(KEEP_PLANNING)
        try:
            await _drop_earlier_plan_cells(notebook, ctx.session_id)
            ids = await notebook.insert(plan_cells(doc), after=None, session_id=ctx.session_id)
        except NotebookRefused as exc:
            switch("build", _execute_note(plan_path))
            return ToolResult("Switched to building", f"The steps could not be saved as notebook cells: {exc} "
                              "The person approved the plan, so the build agent carries it out now.",
                              {"plan": doc.plan_id, "cells": [], "refused": str(exc)})
        _forget_progress(ctx, plan_path)
        if ctx.todos is not None:
            ctx.todos.set_todos(ctx.session_id, [
                Todo(content=step.first_line, status="completed" if step.done else "pending", id=str(step.number))
                for step in doc.steps])
        switch("build", f"The plan at {plan_path} has been approved and saved as {steps} in notebook cells, which "
                        "the person runs one by one. Do not carry out any step now.")
        return ToolResult(
            f"Saved the plan as {steps} in cells",
            f"The person approved the plan. Its {steps} were saved as cells under the calling cell; the person "
            "runs them one by one, each with the build agent. Do not carry out any step now: end your turn with "
            "one short sentence saying the steps are ready to run.",
            {"plan": doc.plan_id, "cells": ids, "steps": count})


KEEP_PLANNING = "The person wants to keep planning. Ask what to change in the plan, then revise it."


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
                        "steps as a numbered list), then call plan_exit again.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolError(f"The plan at {plan_path} cannot be read: {exc}") from None
    try:
        return parse_plan(text, plan_path)
    except PlanError as exc:
        raise ToolError(f"{exc} Revise the plan file, then call plan_exit again.") from None


def _forget_progress(ctx: ToolContext, plan_path: str) -> None:
    """A plan approved again starts over: the runs and results recorded for its earlier version would
    mark fresh steps as re-runs and feed old results to the model."""
    (ctx.directory / progress_path(plan_path)).unlink(missing_ok=True)
