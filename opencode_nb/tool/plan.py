"""plan_enter / plan_exit: switching between building and planning, with the person's consent.

A switch is a new (synthetic) user message naming the agent that should answer from now on; the loop
always takes its agent from the newest user message, so the switch survives a kernel restart.
"""

from __future__ import annotations

from pydantic import BaseModel

from ..errors import ToolError
from ..question.events import QuestionInfo, QuestionOption
from .base import Tool, ToolContext, ToolResult
from .context import AgentSwitch

DEFAULT_PLAN_PATH = ".opencode/plans/plan.md"
"""Where a plan goes when the run does not name a session's own plan file."""


class PlanParams(BaseModel):
    pass


def _switch(ctx: ToolContext) -> tuple[AgentSwitch, str]:
    if ctx.switch_agent is None:
        raise ToolError("This session cannot change agents; carry on in the current mode.")
    return ctx.switch_agent, ctx.plan_path or DEFAULT_PLAN_PATH


async def _confirm(ctx: ToolContext, question: str, header: str) -> bool:
    if ctx.questions is None:
        raise ToolError("Nobody can confirm a mode switch in this session; carry on in the current mode.")
    answers = await ctx.questions.ask(ctx.session_id, [QuestionInfo(
        question=question, header=header,
        options=[QuestionOption(label="Yes", description="Switch now"),
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
        if not await _confirm(ctx, f"The plan at {plan_path} is complete. Switch to the build agent and carry it "
                                   "out?", "Build agent"):
            raise ToolError("The person wants to keep planning. Ask what to change in the plan, then revise it.")
        switch("build", f"The plan at {plan_path} has been approved. Execute it step by step; "
                                           "you can now edit files.")
        return ToolResult("Switched to building", "The person approved the plan; the build agent carries it out.")
