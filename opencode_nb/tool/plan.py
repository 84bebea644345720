"""plan_enter / plan_exit: switching between building and planning, with the person's consent.

A switch is a new (synthetic) user message naming the agent that should answer from now on; the loop
always takes its agent from the newest user message, so the switch survives a kernel restart.

The approval is one question whose buttons say what happens. In a notebook: "Run the steps now" saves the
steps as cells under the calling cell (`%%agent --plan ID --step N`) and, once the turn ends, the kernel runs
them one by one, each shown in its own cell (kernel/plans/approved.py); "Save them as cells to run one by
one" saves the same cells and runs nothing; "Keep planning" saves nothing and the plan agent goes on with the
person's words. A step can be edited and run again as any cell; the build agent that answers next is told
not to carry the steps out itself, and the session's todo list becomes the steps. Outside a notebook "Run the
steps now" hands the plan to the build agent, which carries it out in the same run.
"""

from __future__ import annotations

import contextlib

from pydantic import BaseModel

from .. import fs
from ..errors import ToolError
from ..question.events import QuestionInfo, QuestionOption
from ..values import Todo
from .base import Tool, ToolContext, ToolResult, for_person, shown, workspace_root
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


def _written(ctx: ToolContext, plan_path: str) -> str:
    """The plan's path as the model writes it and the person reads it: from the working folder (a notebook in a
    subfolder reads `../.opencode/plans/x.md`), while `plan_path` itself is relative to the project root."""
    return shown(ctx, workspace_root(ctx) / plan_path)


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
        at = _written(ctx, plan_path)
        if not await _confirm(ctx, f"Switch to the plan agent to research and write a plan to {at}?",
                              "Plan mode"):
            raise ToolError("The person chose not to switch to planning. Continue in the current mode.",
                            summary="You chose not to switch to planning")
        switch("plan", "The person asked to plan first. Research the task with read-only tools "
                                          f"and write a step-by-step plan to {at}; then call plan_exit.")
        return ToolResult("Switched to planning", "The person approved switching to the plan agent, which continues "
                          "from here.", for_person(f"@plan takes over to write a plan to {at}", ""))


class PlanExitTool(Tool[PlanParams]):
    id = "plan_exit"
    params = PlanParams

    async def execute(self, params: PlanParams, ctx: ToolContext) -> ToolResult:
        switch, plan_path = _switch(ctx)
        at = _written(ctx, plan_path)
        in_notebook = ctx.notebook is not None and await _notebook_answers(ctx)
        doc = _read_plan(ctx, plan_path) if in_notebook else None
        choice, words = await _approval(ctx, plan_path, doc)
        if choice == KEEP_PLANNING_LABEL:
            raise ToolError(_keep_planning(words), summary=KEEP_PLANNING_SUMMARY)
        if doc is not None:
            return await self._to_cells(ctx, switch, plan_path, doc, run_now=choice == RUN_NOW, words=words)
        switch("build", _execute_note(at) + _added(words))
        return ToolResult("Switched to building", "The person approved the plan; the build agent carries it out."
                          + _added(words),
                          for_person("You approved the plan; @build carries it out now", _plan_text(ctx, plan_path),
                                     markdown=True))

    async def _to_cells(self, ctx: ToolContext, switch: AgentSwitch, plan_path: str, doc: PlanDoc, *,
                        run_now: bool, words: str) -> ToolResult:
        at = _written(ctx, plan_path)
        notebook = ctx.notebook
        assert notebook is not None
        count = len(doc.steps)
        steps = f"{count} step{'s' * (count != 1)}"
        try:
            await _drop_earlier_plan_cells(notebook, ctx.session_id)
            ids = await notebook.insert(plan_cells(doc), after=None, session_id=ctx.session_id)
        except NotebookRefused as exc:
            if not run_now:  # the person asked for cells and nothing run: carrying the plan out would not be that
                raise ToolError(f"The steps could not be saved as notebook cells ({exc}), so nothing was saved and "
                                "nothing ran. Tell the person, and that `%agent plan cells` saves them once the "
                                "notebook can be changed.",
                                summary=f"The steps could not be saved as cells ({exc})") from None
            switch("build", _execute_note(at) + _added(words))
            return ToolResult("Switched to building", f"The steps could not be saved as notebook cells: {exc} "
                              "The person chose to run the steps now, so the build agent carries out the plan now."
                              + _added(words),
                              {"plan": doc.plan_id, "cells": [], "refused": str(exc),
                               **for_person(f"The steps could not be saved as cells ({exc}); @build carries out the "
                                            "plan now", _plan_text(ctx, plan_path), markdown=True)})
        _forget_progress(ctx, plan_path)
        if ctx.todos is not None:
            ctx.todos.set_todos(ctx.session_id, [
                Todo(content=step.first_line, status="completed" if step.done else "pending", id=str(step.number))
                for step in doc.steps])
        when = ("which the kernel runs one by one, each with the build agent, once this turn ends" if run_now
                else "which the person runs one by one, each when they choose")
        switch("build", f"The plan at {at} has been approved and saved as {steps} in notebook cells, {when}. "
                        f"{DO_NOT_RUN}.{_added(words)}")
        return ToolResult(
            f"Saved the plan as {steps} in cells " + ("to run now" if run_now else "to run one by one"),
            f"The person approved the plan. Its {steps} were saved as cells under the calling cell; {when}. "
            f"{DO_NOT_RUN}: end your turn with one short sentence saying "
            + ("the steps run now." if run_now else "the steps are ready to run one by one.") + _added(words),
            {"plan": doc.plan_id, "cells": ids, "steps": count, "run": "now" if run_now else "by the person",
             **for_person(f"Saved the plan as {steps} in cells below, "
                          + ("running now, one after another" if run_now else "each ready to run when you choose"),
                          _plan_text(ctx, plan_path), markdown=True)})


RUN_NOW = "Run the steps now"
SAVE_AS_CELLS = "Save them as cells to run one by one"
KEEP_PLANNING_LABEL = "Keep planning"
"""The plan approval's choices, each saying what happens."""
DO_NOT_RUN = "Do not carry out any step now"
"""What the build agent is told when the approved plan's steps became cells: the kernel or the person runs them."""
KEEP_PLANNING = "The person wants to keep planning. Ask what to change in the plan, then revise it."
KEEP_PLANNING_SUMMARY = "You chose to keep planning"


async def _approval(ctx: ToolContext, plan_path: str, doc: PlanDoc | None) -> tuple[str, str]:
    """Put the plan's approval to the person as one choice whose buttons say what happens; returns the label
    chosen and any words they typed. Words without a choice keep planning with them."""
    at = _written(ctx, plan_path)
    if ctx.questions is None:
        raise ToolError("Nobody can approve the plan in this session; carry on planning.",
                        summary="Not approved: nobody can approve it in this session")
    if doc is None:
        question = f"The plan at {at} is ready. What now?"
        options = [QuestionOption(label=RUN_NOW, description="The build agent carries out the plan now, in this run"),
                   QuestionOption(label=KEEP_PLANNING_LABEL, description="The plan agent goes on, with what you type")]
    else:
        count = len(doc.steps)
        question = f"The plan at {at} is ready ({count} step{'s' * (count != 1)}). What now?"
        options = [QuestionOption(label=RUN_NOW, description="Each step runs now with the build agent, one after "
                                                             "another, in its own cell below"),
                   QuestionOption(label=SAVE_AS_CELLS, description="The steps become cells below; nothing runs "
                                                                   "until you run each one"),
                   QuestionOption(label=KEEP_PLANNING_LABEL, description="The plan agent goes on, with what you "
                                                                         "type")]
    answers = await ctx.questions.ask(ctx.session_id, [QuestionInfo(
        question=question, header="Plan ready", options=options, options_only=True,
        custom="Anything to change or add? It goes with the button you click")], agent=ctx.agent, tool=ctx.tool_ref)
    return _chosen(answers[0] if answers else [], [o.label for o in options])


def _chosen(given: list[str], labels: list[str]) -> tuple[str, str]:
    """The option chosen (a bare yes is the first, as the approval's only question used to be yes or no) and
    the person's own words; nothing chosen keeps planning."""
    by_word = {label.lower(): label for label in labels} | {"yes": labels[0], "y": labels[0],
                                                             "no": KEEP_PLANNING_LABEL, "n": KEEP_PLANNING_LABEL}
    chosen = next((by_word[a.strip().lower()] for a in given if a.strip().lower() in by_word), KEEP_PLANNING_LABEL)
    words = " ".join(a.strip() for a in given if a.strip().lower() not in by_word)
    return chosen, words


def _keep_planning(words: str) -> str:
    if not words:
        return KEEP_PLANNING
    return (f"The person wants to keep planning and said: \u201c{words}\u201d. Revise the plan accordingly, then "
            "call plan_exit again.")


def _added(words: str) -> str:
    return f" The person added: \u201c{words}\u201d." if words else ""


def _plan_text(ctx: ToolContext, plan_path: str) -> str:
    """The plan as written, shown on the card of its approval ("" when it cannot be read)."""
    try:
        return (workspace_root(ctx) / plan_path).read_text(encoding="utf-8")
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
    at = _written(ctx, plan_path)
    path = workspace_root(ctx) / plan_path
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ToolError(f"There is no plan at {at} yet. Write it there (a `# Title`, the goal, and the "
                        "steps as a numbered list), then call plan_exit again.",
                        summary=f"Not yet: there is no plan at {at}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolError(f"The plan at {at} cannot be read: {exc}") from None
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
        fs.remove(workspace_root(ctx), progress_path(plan_path))
