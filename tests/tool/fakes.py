"""A tool context that records what a tool asked and reported, and can be told to refuse."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opencode_nb.errors import DeniedError, RejectedError
from opencode_nb.session.events import Todo
from opencode_nb.tool.base import ToolContext


@dataclass
class Asked:
    permission: str
    patterns: list[str]
    always: list[str]
    metadata: dict[str, Any]
    always_ask: bool = False


@dataclass
class MemoryTodos:
    items: dict[str, list[Todo]] = field(default_factory=dict)

    def todos(self, session_id: str) -> list[Todo]:
        return self.items.get(session_id, [])

    def set_todos(self, session_id: str, todos: list[Todo]) -> None:
        self.items[session_id] = list(todos)


def recording_context(directory: Path, *, deny: set[str] = frozenset(), reject: set[str] = frozenset(),
                      questions: Any = None) -> ToolContext:
    asked: list[Asked] = []
    updates: list[tuple[str | None, dict[str, Any] | None]] = []

    async def ask(permission, patterns, always=None, metadata=None, always_ask=False):
        asked.append(Asked(permission, list(patterns), list(always or []), dict(metadata or {}), always_ask))
        if permission in deny:
            raise DeniedError([])
        if permission in reject:
            raise RejectedError()

    ctx = ToolContext(session_id="ses_test", message_id="msg_test", call_id="call_1", agent="build",
                      directory=directory, data_dir=directory.parent / "data", ask=ask,
                      update=lambda title, metadata: updates.append((title, metadata)), todos=MemoryTodos(),
                      questions=questions)
    ctx.extra["asked"] = asked
    ctx.extra["updates"] = updates
    return ctx
