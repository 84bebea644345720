"""The tools a workspace can offer; which of them an agent gets is decided per step by the loop."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import NotFoundError
from ..provider.request import ToolSpec
from .base import Tool

if TYPE_CHECKING:
    from ..config.skills import Skills
    from ..diagnostics.service import Diagnostics


class ToolRegistry:
    def __init__(self, tools: list[Tool[Any]] | None = None) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        self.version = 0
        """Counts changes: a run offers the tools as they were at its step, and sees an MCP server's new list
        or a person's new function at the next one."""
        self.unavailable: dict[str, str] = {}
        """Tool-id prefixes whose tools are missing, and why (`github_` → an MCP server that did not start): a
        call of such a name is answered with the reason, on its card and to the model."""
        for tool in tools or []:
            self.register(tool)

    def register(self, tool: Tool[Any]) -> None:
        """Add `tool`, replacing any tool with the same id (a workspace may swap in its own version)."""
        self._tools[tool.id] = tool
        self.version += 1

    def unregister(self, tool_id: str) -> None:
        """Remove `tool_id` if present: a tool an MCP server no longer offers."""
        if self._tools.pop(tool_id, None) is not None:
            self.version += 1

    def add(self, function: Any, **options: Any) -> Tool[Any]:
        """Offer a person's function as a tool (see `person.py`), or a `FunctionTool` made already; one of the
        same name offered before is replaced. `options` go to `FunctionTool.marked` (`name`, `description`,
        `timeout_s`, `caller`); outside a kernel the function runs in this process (`call_plainly`).

        Raises:
            ValueError: the name is taken by a tool that is not a person's function (a built-in, an MCP tool),
                or is a built-in permission's (`reserved.py`).
            TypeError: a parameter's hint has no JSON form a model could send.
        """
        from .person import FunctionTool

        made = function if isinstance(function, FunctionTool) else FunctionTool.marked(function, **options)
        taken = self._tools.get(made.id)
        if taken is not None and taken.kind != "function":
            kind = "an MCP server's tool" if taken.kind == "mcp" else "a built-in tool"
            raise ValueError(f"`{made.id}` is the name of {kind}; a function may not replace it. Rename the "
                             f"function, or give the tool another name (name=\"my_{made.id}\")")
        self._tools[made.id] = made
        self.version += 1
        return made

    def get(self, tool_id: str) -> Tool[Any]:
        try:
            return self._tools[tool_id]
        except KeyError:
            raise NotFoundError("tool", tool_id, f"known tools: {', '.join(sorted(self._tools))}") from None

    def ids(self) -> list[str]:
        return list(self._tools)

    def why_missing(self, tool_id: str) -> str | None:
        """Why a tool that is not here would have been (see `unavailable`), or None."""
        for prefix, why in self.unavailable.items():
            if tool_id.startswith(prefix):
                return why
        return None

    def specs(self, ids: list[str]) -> list[ToolSpec]:
        """What the provider is told about each of `ids`, in that order."""
        return [self.get(i).spec() for i in ids]


def default_registry(skills: Skills | None = None, diagnostics: Diagnostics | None = None) -> ToolRegistry:
    """Every built-in tool; which of them an agent is offered is decided per step from its rules.

    Args:
        skills: the workspace's skills, which the `skill` tool loads; without them there is no `skill` tool.
        diagnostics: what checks the Python that `write`, `edit` and `notebook_edit` change; None checks nothing.
    """
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
    from .task_status import TaskCancelTool, TaskStatusTool
    from .todo import TodoReadTool, TodoWriteTool
    from .variables import VariablesTool
    from .webfetch import WebFetchTool
    from .write import WriteTool

    registry = ToolRegistry([ReadTool(), WriteTool(diagnostics), EditTool(diagnostics), ListTool(), GlobTool(),
                             GrepTool(), BashTool(), WebFetchTool(), TodoWriteTool(), TodoReadTool(), QuestionTool(),
                             TaskTool(), PlanEnterTool(), PlanExitTool(), PythonTool(), VariablesTool(),
                             NotebookReadTool(), NotebookEditTool(diagnostics), NotebookRunTool(), TaskStatusTool(),
                             TaskCancelTool()])
    if skills is not None:
        from .skill import SkillTool

        registry.register(SkillTool(skills))
    return registry
