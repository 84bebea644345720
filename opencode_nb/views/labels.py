"""Short names for tool calls, shared by every view that mentions one.

A tool card, a child session's summary line and the plain-text transcript all name a call by the same
words, so these helpers are the only place that decides them. They read stored models and plain
dictionaries (a child's summary arrives as task metadata) and never touch widgets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..session.models import ToolPart

LABEL_KEYS = ("path", "command", "pattern", "url", "description")
"""Input fields that name what a call works on, in the order they are looked for."""
NOTEBOOK_TOOLS = ("notebook_read", "notebook_edit", "notebook_run")
"""Their calls name cells, which their input gives by id."""


def call_title(tool_input: Mapping[str, Any], tool: str | None = None) -> str:
    """A short label for a tool call from its input, for calls that have no title (yet)."""
    if tool in NOTEBOOK_TOOLS:
        return notebook_title(tool, tool_input)
    for key in LABEL_KEYS:
        if key in tool_input:
            return str(tool_input[key])
    return ""


def notebook_title(tool: str, tool_input: Mapping[str, Any]) -> str:
    """`insert below [abc123]`, `replace [abc123]`, `run [a], [b]`, `all cells`: cells are named by their ids."""
    if tool == "notebook_edit":
        action, cell_id = tool_input.get("action"), tool_input.get("cell_id")
        if action == "insert":
            after = tool_input.get("after")
            return f"insert below [{after}]" if after else "insert below the agent's cell"
        return f"{action} [{cell_id}]" if action and cell_id else str(action or "")
    ids = tool_input.get("cell_ids")
    named = ", ".join(f"[{i}]" for i in ids) if isinstance(ids, list) and ids else ""
    if tool == "notebook_run":
        return f"run {named}".rstrip()
    return f"cells {named}" if named else "all cells"


def tool_title(part: ToolPart) -> str:
    """The title a tool gave its call, else a label from the call's input."""
    return getattr(part.state, "title", "") or call_title(part.state.input, part.tool)


def summary_title(entry: Mapping[str, Any]) -> str:
    """The label of one entry of a task's `tools` summary: its title, else a label from its input.

    Sessions stored before the summary carried the input have entries without one; they show their title.
    """
    tool_input = entry.get("input")
    label = call_title(tool_input, entry.get("tool")) if isinstance(tool_input, Mapping) else ""
    return str(entry.get("title") or label)


def task_heading(part: ToolPart) -> tuple[str, str]:
    """Who a task call delegates to and what it asked for: the words every view heads a child session with."""
    metadata: dict[str, Any] = getattr(part.state, "metadata", {}) or {}
    tool_input = part.state.input
    agent = str(metadata.get("agent") or tool_input.get("subagent_type") or "?")
    return agent, str(tool_input.get("description") or "")
