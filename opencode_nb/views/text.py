"""A readable plain-text transcript, printed as bus events arrive: the CLI demo and terminal IPython use it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

from ..bus import Bus, Event
from ..session.models import ReasoningPart, TextPart, ToolPart
from ..session.subtask import call_title

MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]", "cancelled": "[-]"}


class TextTranscript:
    """Prints finished text, each tool call's outcome, permission decisions and todo changes."""

    def __init__(self, bus: Bus, out: TextIO | None = None, *, output_lines: int = 6) -> None:
        self.out = out or sys.stdout
        self.output_lines = output_lines
        self._done: set[str] = set()
        self._users: set[str] = set()
        """Ids of user messages: their text is printed as the person's."""
        self._agents: dict[str, str] = {}
        """The agent of each assistant message, to name who is speaking."""
        self._depth: dict[str, int] = {}
        """How deep each child session is nested, for indenting its lines under its task call."""
        self._offs: list[Callable[[], None]] = [
            bus.subscribe("message.updated", self._on_message),
            bus.subscribe("session.created", self._on_session),
            bus.subscribe("message.part.updated", self._on_part),
            bus.subscribe("permission.replied", self._on_permission),
            bus.subscribe("todo.updated", self._on_todos),
            bus.subscribe("session.status", self._on_status),
        ]

    def close(self) -> None:
        for off in self._offs:
            off()

    def _print(self, text: str = "", session_id: str | None = None) -> None:
        indent = "      " * self._depth.get(session_id or "", 0)
        text = "\n".join(indent + line if line else line for line in text.split("\n"))
        print(text, file=self.out, flush=True)

    def _on_session(self, event: Event) -> None:
        session: Any = event.session  # type: ignore[attr-defined]
        if session.parent_id:
            self._depth[session.id] = self._depth.get(session.parent_id, 0) + 1

    def _on_message(self, event: Event) -> None:
        message: Any = event.message  # type: ignore[attr-defined]
        if message.role == "user":
            self._users.add(message.id)
        else:
            self._agents[message.id] = message.agent

    def _on_part(self, event: Event) -> None:
        part: Any = event.part  # type: ignore[attr-defined]
        if part.id in self._done:
            return
        sid = part.session_id
        if isinstance(part, TextPart) and part.message_id in self._users:
            self._done.add(part.id)
            if self._depth.get(sid):
                self._print(f"task prompt: {part.text.strip()}", sid)
            else:
                self._print(f"{'(mode switch) ' if part.synthetic else 'you: '}{part.text.strip()}", sid)
        elif isinstance(part, TextPart) and part.ended_at is not None and part.text.strip():
            self._done.add(part.id)
            self._print(f"\n{self._agents.get(part.message_id, 'agent')}: {part.text.strip()}\n", sid)
        elif isinstance(part, ReasoningPart) and part.ended_at is not None and part.text.strip():
            self._done.add(part.id)
            self._print(f"  (thinking) {part.text.strip()[:200]}", sid)
        elif isinstance(part, ToolPart) and part.tool == "task" and part.state.status == "running" \
                and f"{part.id}:start" not in self._done:
            self._done.add(f"{part.id}:start")
            self._print(f"  ▸ task @{part.state.input.get('subagent_type')} — {part.state.input.get('description')}",
                        sid)
        elif isinstance(part, ToolPart) and part.state.status in ("completed", "error"):
            self._done.add(part.id)
            state = part.state
            seconds = state.ended_at - state.started_at  # type: ignore[union-attr]
            if state.status == "completed":
                self._print(f"  ✓ {part.tool} {state.title}  ({seconds:.2f}s)", sid)
                if part.tool not in ("todowrite", "todoread", "task"):  # todos print on todo.updated
                    self._show(state.output, sid)
            else:
                self._print(f"  ✗ {part.tool} {call_title(state.input)}  ({seconds:.2f}s)", sid)
                self._show(state.error, sid)

    def _show(self, text: str, session_id: str) -> None:
        lines = text.rstrip().splitlines()
        for line in lines[: self.output_lines]:
            self._print(f"      {line[:110]}", session_id)
        if len(lines) > self.output_lines:
            self._print(f"      … {len(lines) - self.output_lines} more lines", session_id)

    def _on_permission(self, event: Event) -> None:
        e: Any = event
        how = {"once": "allowed once", "always": "always allowed", "reject": "refused"}[e.reply]
        self._print(f"  ? permission {how}" + (f" ({e.reason})" if e.reason else ""), e.session_id)

    def _on_todos(self, event: Event) -> None:
        e: Any = event
        self._print("  todo list:", e.session_id)
        for todo in e.todos:
            self._print(f"      {MARKS[todo.status]} {todo.content}", e.session_id)

    def _on_status(self, event: Event) -> None:
        e: Any = event
        if e.status == "retry":
            self._print(f"  … retrying (attempt {e.attempt}): {e.message}", e.session_id)
