"""task: hand a self-contained job to a subagent, which works in its own child session.

The child starts from an empty history: it sees only the prompt written for it and its own agent's
system prompt, so a planning conversation cannot leak into a build subagent's context. The result is
the child's final text, with its session id so the caller can continue it later with `task_id`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from ..errors import ToolError
from ..provider.request import ToolSpec
from .base import Tool, ToolContext, ToolResult, for_person

if TYPE_CHECKING:
    from ..agent.info import AgentInfo
    from ..agent.registry import AgentRegistry


TASK_METADATA = re.compile(r"\n*<task_metadata>.*?</task_metadata>\s*\Z", re.DOTALL)
"""The block that tells the model which session to continue; people see the child session itself."""


def with_task_metadata(text: str, child_id: str) -> str:
    """A task's answer as the model reads it: the child's text, then the id that continues the task."""
    return (f"{text}\n\n<task_metadata>\nsession_id: {child_id} (pass it as task_id to continue this task)\n"
            "</task_metadata>")


def task_answer(output: str) -> str:
    """A task's answer as a person reads it: the child's text without the block meant for the model."""
    return TASK_METADATA.sub("", output)


class TaskParams(BaseModel):
    description: str = Field(description="A short (3-5 words) description of the task")
    prompt: str = Field(description="The complete task for the subagent: everything it needs to know")
    subagent_type: str = Field(description="Which subagent to use, from the list in the tool description")
    task_id: str | None = Field(None, description="Continue an earlier task: the session_id its result named")
    background: bool = Field(False, description="Run it in the background: this call returns at once with the "
                                                "task's id, and task_status gives its answer later")


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
        if params.background:
            if params.task_id:
                raise ToolError("A background task starts a new session: leave out task_id, or continue that "
                                "task in the foreground.")
            child_id = await ctx.tasks.start_background(
                parent_id=ctx.session_id, caller=ctx.agent, description=params.description, prompt=params.prompt,
                agent=params.subagent_type, model=ctx.model)
            said = f"@{params.subagent_type} works on it in the background"
            return ToolResult(params.description, (
                f"Started @{params.subagent_type} in the background as task {child_id}. Carry on; you will be told "
                f"when it ends, or call task_status (task_id: {child_id}, wait: true) to wait for its answer."),
                {"session_id": child_id, "agent": params.subagent_type, "background": True,
                 **for_person(said, "")})
        child_id, text = await ctx.tasks.run(
            parent_id=ctx.session_id, caller=ctx.agent, description=params.description, prompt=params.prompt,
            agent=params.subagent_type, task_id=params.task_id, model=ctx.model, update=ctx.update,
        )
        said = f"@{params.subagent_type} answered" if text.strip() else f"@{params.subagent_type} gave no answer"
        return ToolResult(params.description, with_task_metadata(text, child_id),
                          {"session_id": child_id, "agent": params.subagent_type,
                           **for_person(said, text, markdown=True)})
