"""todowrite / todoread: the session's task list, which the person watches update live.

The list is replaced whole on each write: the model always sends the full list, so there are no partial
updates to reconcile, and the store publishes `todo.updated` for the views.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ..errors import ToolError
from ..values import Todo
from .base import Tool, ToolContext, ToolResult, for_person

MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]", "cancelled": "[-]"}


class TodoItem(BaseModel):
    content: str = Field(min_length=1, description="What to do, as a short imperative sentence")
    status: Literal["pending", "in_progress", "completed", "cancelled"] = Field(
        "pending", description="pending, in_progress (one item at a time), completed or cancelled"
    )
    priority: Literal["high", "medium", "low"] = Field("medium", description="high, medium or low")


class TodoWriteParams(BaseModel):
    todos: list[TodoItem] = Field(description="The whole updated list; it replaces the previous one")


class TodoReadParams(BaseModel):
    pass


def render(todos: list[Todo]) -> str:
    return "\n".join(f"{MARKS[t.status]} {t.content}" + (f" ({t.priority} priority)" if t.priority == "high" else "")
                     for t in todos) or "(The todo list is empty.)"


def _title(todos: list[Todo]) -> str:
    left = sum(1 for t in todos if t.status in ("pending", "in_progress"))
    return f"{left} todo{'s' if left != 1 else ''} left of {len(todos)}"


def _metadata(todos: list[Todo], verb: str) -> dict[str, object]:
    """The list itself is shown by the todo view; the card says only what the call did to it."""
    done = sum(1 for t in todos if t.status == "completed")
    said = f"{verb} the todo list: {done} of {len(todos)} done" if todos else f"{verb} the todo list: it is empty"
    return {"todos": [t.model_dump() for t in todos], **for_person(said, "")}


class TodoWriteTool(Tool[TodoWriteParams]):
    id = "todowrite"
    params = TodoWriteParams

    async def execute(self, params: TodoWriteParams, ctx: ToolContext) -> ToolResult:
        await ctx.ask("todowrite", ["*"], always=["*"])
        if ctx.todos is None:
            raise ToolError("This session has no todo list; keep track of the steps in your messages instead.",
                            summary="This session has no todo list")
        todos = [Todo(content=t.content, status=t.status, priority=t.priority, id=str(i))
                 for i, t in enumerate(params.todos, 1)]
        ctx.todos.set_todos(ctx.session_id, todos)
        return ToolResult(_title(todos), render(todos), _metadata(todos, "Updated"))


class TodoReadTool(Tool[TodoReadParams]):
    id = "todoread"
    params = TodoReadParams

    async def execute(self, params: TodoReadParams, ctx: ToolContext) -> ToolResult:
        todos = ctx.todos.todos(ctx.session_id) if ctx.todos is not None else []
        return ToolResult(_title(todos), render(todos), _metadata(todos, "Read"))
