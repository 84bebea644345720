"""task: hand a self-contained job to a subagent, which works in its own child session.

The child starts from an empty history: it sees only the prompt written for it and its own agent's
system prompt, so a planning conversation cannot leak into a build subagent's context. The result is
the child's final text, with its session id so the caller can continue it later with `task_id`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from ..errors import ToolError
from ..provider.request import ToolSpec
from .base import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from ..agent import AgentInfo, AgentRegistry


class TaskParams(BaseModel):
    description: str = Field(description="A short (3-5 words) description of the task")
    prompt: str = Field(description="The complete task for the subagent: everything it needs to know")
    subagent_type: str = Field(description="Which subagent to use, from the list in the tool description")
    task_id: str | None = Field(None, description="Continue an earlier task: the session_id its result named")


class TaskTool(Tool[TaskParams]):
    id = "task"
    params = TaskParams

    def spec_for(self, agent: AgentInfo, agents: AgentRegistry) -> ToolSpec:
        """The description lists the subagents this caller may use, so it is built per agent."""
        lines = [f"- {a.name}: {a.description or 'Use only when the person asks for it.'}"
                 for a in sorted(agents.subagents(agent), key=lambda a: a.name)]
        text = self.description + "\n\nAvailable agent types:\n" + ("\n".join(lines) or "(none)")
        return ToolSpec(name=self.id, description=text, parameters=self.params.model_json_schema())

    async def execute(self, params: TaskParams, ctx: ToolContext) -> ToolResult:
        if ctx.tasks is None:
            raise ToolError("Subagents are not available in this session.")
        await ctx.ask("task", [params.subagent_type], always=["*"],
                      metadata={"description": params.description, "subagent_type": params.subagent_type})
        child_id, text = await ctx.tasks.run(
            parent_id=ctx.session_id, caller=ctx.agent, description=params.description, prompt=params.prompt,
            agent=params.subagent_type, task_id=params.task_id, model=ctx.model, update=ctx.update,
        )
        output = (f"{text}\n\n<task_metadata>\nsession_id: {child_id} (pass it as task_id to continue this task)\n"
                  "</task_metadata>")
        return ToolResult(params.description, output, {"session_id": child_id, "agent": params.subagent_type})
