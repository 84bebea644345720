"""The tools a workspace can offer; which of them an agent gets is decided per step by the loop."""

from __future__ import annotations

from typing import Any

from ..errors import NotFoundError
from ..provider.request import ToolSpec
from .base import Tool


class ToolRegistry:
    def __init__(self, tools: list[Tool[Any]] | None = None) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        for tool in tools or []:
            self.register(tool)

    def register(self, tool: Tool[Any]) -> None:
        """Add `tool`, replacing any tool with the same id (a workspace may swap in its own version)."""
        self._tools[tool.id] = tool

    def get(self, tool_id: str) -> Tool[Any]:
        try:
            return self._tools[tool_id]
        except KeyError:
            raise NotFoundError("tool", tool_id, f"known tools: {', '.join(sorted(self._tools))}") from None

    def ids(self) -> list[str]:
        return list(self._tools)

    def specs(self, ids: list[str]) -> list[ToolSpec]:
        """What the provider is told about each of `ids`, in that order."""
        return [self.get(i).spec() for i in ids]


def default_registry() -> ToolRegistry:
    """Every built-in tool; which of them an agent is offered is decided per step from its rules."""
    from .bash import BashTool
    from .edit import EditTool
    from .glob import GlobTool
    from .grep import GrepTool
    from .list import ListTool
    from .notebook_edit import NotebookEditTool
    from .notebook_read import NotebookReadTool
    from .notebook_run import NotebookRunTool
    from .plan import PlanEnterTool, PlanExitTool
    from .python import PythonTool
    from .question import QuestionTool
    from .read import ReadTool
    from .task import TaskTool
    from .todo import TodoReadTool, TodoWriteTool
    from .variables import VariablesTool
    from .webfetch import WebFetchTool
    from .write import WriteTool

    return ToolRegistry([ReadTool(), WriteTool(), EditTool(), ListTool(), GlobTool(), GrepTool(), BashTool(),
                         WebFetchTool(), TodoWriteTool(), TodoReadTool(), QuestionTool(), TaskTool(),
                         PlanEnterTool(), PlanExitTool(), PythonTool(), VariablesTool(),
                         NotebookReadTool(), NotebookEditTool(), NotebookRunTool()])
