"""A tool context that records what a tool asked and reported, and can be told to refuse."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opencode_nb.errors import CorrectedError, DeniedError, RejectedError
from opencode_nb.permission import Rule
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
    """The session store's todo half, in memory; `writes` counts what a real store would publish."""

    items: dict[str, list[Todo]] = field(default_factory=dict)
    writes: int = 0

    def todos(self, session_id: str) -> list[Todo]:
        return list(self.items.get(session_id, []))

    def set_todos(self, session_id: str, todos: list[Todo]) -> None:
        self.items[session_id] = list(todos)
        self.writes += 1


class RecordingContext(ToolContext):
    """A `ToolContext` for tool tests.

    Every `ask` is recorded in `asked` and allowed, unless its permission is in `deny` (DeniedError),
    `reject` (RejectedError) or `correct` (CorrectedError with that feedback). Every `update` is recorded in
    `updates`. The todo list lives in memory (`todo_store`).
    """

    def __init__(self, directory: Path, *, deny: Iterable[str] = (), reject: Iterable[str] = (),
                 correct: dict[str, str] | None = None, questions: Any = None, agent: str = "build",
                 data_dir: Path | None = None, root: Path | None = None) -> None:
        self.asked: list[Asked] = []
        self.updates: list[tuple[str | None, dict[str, Any] | None]] = []
        self.todo_store = MemoryTodos()
        self._deny, self._reject, self._correct = set(deny), set(reject), dict(correct or {})
        super().__init__(session_id="ses_test", message_id="msg_test", call_id="call_1", agent=agent,
                         directory=directory, data_dir=data_dir or directory.parent / "data", ask=self._ask,
                         update=self._update, todos=self.todo_store, questions=questions, root=root)

    async def _ask(self, permission: str, patterns: list[str], always: list[str] | None = None,
                   metadata: dict[str, Any] | None = None, *, always_ask: bool = False) -> None:
        self.asked.append(Asked(permission, list(patterns), list(always or []), dict(metadata or {}), always_ask))
        await asyncio.sleep(0)  # a real ask suspends the tool, letting other calls of the step run
        if permission in self._deny:
            raise DeniedError([Rule(permission=permission, pattern="*", action="deny")])
        if permission in self._reject:
            raise RejectedError()
        if permission in self._correct:
            raise CorrectedError(self._correct[permission])

    def _update(self, title: str | None, metadata: dict[str, Any] | None) -> None:
        self.updates.append((title, metadata))

    def permissions(self) -> list[tuple[str, list[str]]]:
        """What was asked, as (permission, patterns) pairs in order."""
        return [(a.permission, a.patterns) for a in self.asked]


def recording_context(directory: Path, **options: Any) -> RecordingContext:
    return RecordingContext(directory, **options)
