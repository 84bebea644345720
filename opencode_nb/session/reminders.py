"""Reminders appended to the newest user turn of a request, never stored.

They tell the model which mode it is in when that depends on the agent of the newest user message: a
plan agent is reminded that it is read-only and where its plan file is; the first build turn after
planning is told that the mode changed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..agent.info import AgentInfo
from .models import AssistantMessage, Session, UserMessage
from .system import prompt_text

if TYPE_CHECKING:
    from .run_state import RunState


class Sessions(Protocol):
    def get(self, session_id: str) -> Session: ...

PLAN_DIR = ".opencode/plans"


def plan_path(sessions: Sessions, session_id: str) -> str:
    """Where the plan agent writes its plan, relative to the project root: one file per session tree."""
    root = sessions.get(session_id)
    while root.parent_id:
        root = sessions.get(root.parent_id)
    return f"{PLAN_DIR}/{root.slug or root.id}.md"


def as_written(plan: str, root: Path, directory: Path) -> str:
    """The plan's path as the model writes it: relative paths start at the working folder (a notebook's), while
    the plan lives under the project root; from the root itself it is the plan path unchanged."""
    if directory.resolve() == root.resolve():
        return plan
    return Path(os.path.relpath(root.resolve() / plan, directory.resolve())).as_posix()


def reminders(sessions: Sessions, state: RunState, agent: AgentInfo, *, root: Path | None = None,
              directory: Path | None = None) -> list[str]:
    if agent.name == "plan":
        plan = plan_path(sessions, state.session_id)
        if root is not None and directory is not None:
            plan = as_written(plan, root, directory)
        return [prompt_text("plan_reminder").format(plan_path=plan)]
    if agent.name == "build" and _previous_agent(state) == "plan":
        return [prompt_text("build_switch")]
    return []


def _previous_agent(state: RunState) -> str | None:
    """The agent of the last assistant message before the newest user message."""
    seen_user = False
    for entry in reversed(state.history.entries.values()):
        message = entry.message
        if isinstance(message, UserMessage):
            seen_user = True
        elif seen_user and isinstance(message, AssistantMessage) and not message.summary:
            return message.agent
    return None
