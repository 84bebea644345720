"""Event names, and the tool names a hook's matcher may use: ours, or Claude Code's for the same tool.

A person's Claude Code hooks say `Bash`, `Edit`, `Write`; here the tools are `bash`, `edit`, `write`. A matcher
may use either spelling (`Bash|write` matches both tools), while the JSON a hook reads names the tool as it is
called here (`tool_name: "bash"`), the name every permission rule and tool card uses too.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..config.schema import HOOK_EVENTS, HookEvent

__all__ = ["CLAUDE_CODE_NAMES", "HOOK_EVENTS", "TOOL_EVENTS", "HookEvent", "claude_code_name", "matches",
           "names_of"]

CLAUDE_CODE_NAMES: dict[str, str] = {
    "Bash": "bash", "Edit": "edit", "MultiEdit": "edit", "Write": "write", "Read": "read", "Grep": "grep",
    "Glob": "glob", "LS": "list", "WebFetch": "webfetch", "Task": "task", "NotebookEdit": "notebook_edit",
    "NotebookRead": "notebook_read", "TodoWrite": "todowrite",
}
"""Claude Code's tool name → ours."""

TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})
"""Events about one tool call: their matcher is matched against the tool's name."""

_OURS_TO_CLAUDE: dict[str, str] = {}
for _claude, _ours in CLAUDE_CODE_NAMES.items():
    _OURS_TO_CLAUDE.setdefault(_ours, _claude)  # `edit` is Claude Code's `Edit`, never `MultiEdit`
EVERYTHING = frozenset({"", "*"})


def claude_code_name(tool: str) -> str | None:
    """Claude Code's name of our tool, if it has one."""
    return _OURS_TO_CLAUDE.get(tool)


def names_of(tool: str) -> tuple[str, ...]:
    """The names a matcher may know `tool` by: ours, then each of Claude Code's that means it."""
    return (tool, *(claude for claude, ours in CLAUDE_CODE_NAMES.items() if ours == tool))


def matches(matcher: str | None, subject: str | None) -> bool:
    """Whether a matcher selects `subject` (a tool's name; None: the event has nothing to match, so every
    matcher does). The whole name must match, case-sensitively, as in Claude Code (`Write` is not `WriteFile`);
    `*`, empty or no matcher selects everything."""
    if matcher is None or matcher.strip() in EVERYTHING or subject is None:
        return True
    pattern = _compiled(matcher)
    return any(pattern.fullmatch(name) for name in names_of(subject))


@lru_cache(maxsize=256)
def _compiled(matcher: str) -> re.Pattern[str]:
    return re.compile(matcher)
