"""todowrite / todoread: the session's task list, shown live to the person."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..errors import ToolError
from ..session.events import Todo
from .base import Tool, ToolContext, ToolResult


class TodoItem(BaseModel):
    content: str = Field(description="What to do, as a short imperative sentence")
    status: str = Field("pending", description="pending, in_progress, completed or cancelled")
    priority: str = Field("medium", description="high, medium or low")


class TodoWriteParams(BaseModel):
    todos: list[TodoItem] = Field(description="The whole updated list (it replaces the previous one)")


class TodoReadParams(BaseModel):
    pass


def render(todos: list[Todo]) -> str:
    marks = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]", "cancelled": "[-]"}
    return "\n".join(f"{marks[t.status]} {t.content}" for t in todos) or "(The todo list is empty.)"


class TodoWriteTool(Tool[TodoWriteParams]):
    id = "todowrite"
    params = TodoWriteParams

    async def execute(self, params: TodoWriteParams, ctx: ToolContext) -> ToolResult:
        await ctx.ask("todowrite", ["*"], always=["*"])
        if ctx.todos is None:
            raise ToolError("This session has no todo list.")
        try:
            todos = [Todo(content=t.content, status=t.status, priority=t.priority, id=str(i + 1))  # type: ignore[arg-type]
                     for i, t in enumerate(params.todos)]
        except ValueError as exc:
            raise ToolError(f"Invalid todo: {str(exc).splitlines()[-1]}. Use status pending, in_progress, "
                            "completed or cancelled and priority high, medium or low.") from None
        ctx.todos.set_todos(ctx.session_id, todos)
        open_items = sum(1 for t in todos if t.status in ("pending", "in_progress"))
        return ToolResult(f"{open_items} open of {len(todos)}", render(todos),
                          {"todos": [t.model_dump() for t in todos]})


class TodoReadTool(Tool[TodoReadParams]):
    id = "todoread"
    params = TodoReadParams

    async def execute(self, params: TodoReadParams, ctx: ToolContext) -> ToolResult:
        await ctx.ask("todoread", ["*"], always=["*"])
        todos = ctx.todos.todos(ctx.session_id) if ctx.todos is not None else []
        open_items = sum(1 for t in todos if t.status in ("pending", "in_progress"))
        return ToolResult(f"{open_items} open of {len(todos)}", render(todos),
                          {"todos": [t.model_dump() for t in todos]})
