"""task_status and task_cancel: how the subagents this session started in the background stand, and stopping one.

A background task's id is its child session's. Waiting is bounded (at most `MAX_WAIT_S` a call), so a model that
waits for everything still comes back to say so; a task that ended is reported once more here even if the
session was told already, since the model asked.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, for_person

MAX_WAIT_S = 600.0


class TaskStatusParams(BaseModel):
    task_id: str | None = Field(None, description="The background task's id; leave out for every one of this session")
    wait: bool = Field(False, description="Wait until the task (or, without task_id, every task) has ended")
    timeout: float = Field(120, description="With wait: the most seconds to wait before answering anyway",
                           ge=0, le=MAX_WAIT_S)


class TaskStatusTool(Tool[TaskStatusParams]):
    id = "task_status"
    params = TaskStatusParams

    async def execute(self, params: TaskStatusParams, ctx: ToolContext) -> ToolResult:
        if ctx.tasks is None:
            raise ToolError("Subagents are not available in this session.")
        text = await ctx.tasks.status(ctx.session_id, params.task_id, params.timeout if params.wait else 0.0)
        title = params.task_id or "all background tasks"
        return ToolResult(title, text, for_person(f"Background tasks: {title}", text))


class TaskCancelParams(BaseModel):
    task_id: str = Field(description="The background task to stop")


class TaskCancelTool(Tool[TaskCancelParams]):
    id = "task_cancel"
    params = TaskCancelParams

    async def execute(self, params: TaskCancelParams, ctx: ToolContext) -> ToolResult:
        if ctx.tasks is None:
            raise ToolError("Subagents are not available in this session.")
        text = ctx.tasks.cancel(ctx.session_id, params.task_id)
        return ToolResult(params.task_id, text, for_person(text))
