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


def call_title(tool_input: Mapping[str, Any]) -> str:
    """A short label for a tool call from its input, for calls that have no title (yet)."""
    for key in LABEL_KEYS:
        if key in tool_input:
            return str(tool_input[key])
    return ""


def tool_title(part: ToolPart) -> str:
    """The title a tool gave its call, else a label from the call's input."""
    return getattr(part.state, "title", "") or call_title(part.state.input)


def summary_title(entry: Mapping[str, Any]) -> str:
    """The label of one entry of a task's `tools` summary: its title, else a label from its input.

    Sessions stored before the summary carried the input have entries without one; they show their title.
    """
    tool_input = entry.get("input")
    return str(entry.get("title") or (call_title(tool_input) if isinstance(tool_input, Mapping) else ""))


def task_heading(part: ToolPart) -> tuple[str, str]:
    """Who a task call delegates to and what it asked for: the words every view heads a child session with."""
    metadata: dict[str, Any] = getattr(part.state, "metadata", {}) or {}
    tool_input = part.state.input
    agent = str(metadata.get("agent") or tool_input.get("subagent_type") or "?")
    return agent, str(tool_input.get("description") or "")
