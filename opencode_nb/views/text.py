"""A readable plain-text transcript, printed as bus events arrive: the CLI demo and terminal IPython use it.

A tool call is printed once it has finished, as `render.tool_card_text` writes it, so a terminal and a
notebook's saved transcript name, time and clip a call the same way.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from ..bus import Bus, Event
from ..permission.events import PermissionAsked, PermissionReplied, PermissionRequest
from ..question.events import QuestionAsked, QuestionReplied, QuestionRequest
from ..session.events import (
    HookReported,
    MessagePartUpdated,
    MessageUpdated,
    SessionCreated,
    SessionStatus,
    TodoUpdated,
)
from ..session.models import (
    Part,
    ReasoningPart,
    TextPart,
    ToolCompleted,
    ToolErrored,
    ToolPart,
    ToolRunning,
    UserMessage,
)
from .asks import REPLY_WORDS, permission_record_text
from .labels import task_heading
from .render import TEXT_OUTPUT_LINES, tool_card_text
from .run_frame import TEXT_TODO_MARKS
from .shorten import shorten

THINKING_CHARS = 200
"""The start of the model's reasoning a terminal shows; the rest is in the stored session."""
INDENT = "      "
"""How far a child session's lines sit right of its parent's, under the task call that started it."""


class TextTranscript:
    """Prints finished text, each tool call's outcome, permission decisions and todo changes."""

    def __init__(self, bus: Bus, out: TextIO | None = None, *, output_lines: int = TEXT_OUTPUT_LINES) -> None:
        self.out = out or sys.stdout
        self.output_lines = output_lines
        self._done: set[str] = set()
        self._users: dict[str, bool] = {}
        """Ids of user messages, and whether each is synthetic (a mode switch the model reads, not the person's)."""
        self._switches: dict[str, str] = {}
        """Sessions whose next answer comes from another agent: printed as it starts answering."""
        self._asks: dict[str, PermissionRequest | QuestionRequest] = {}
        """Asks not answered yet: each is printed once, as one line, when it is answered."""
        self._answered_here: set[str] = set()
        self._held: dict[str, list[str]] = {}
        """Answered asks by the call they were for: printed just above that call's line, so a call running in
        parallel with them cannot come between."""
        self._agents: dict[str, str] = {}
        """The agent of each assistant message, to name who is speaking."""
        self._depth: dict[str, int] = {}
        """How deep each child session is nested, for indenting its lines under its task call."""
        self._offs: list[Callable[[], None]] = [bus.subscribe(kind, self._on) for kind in (
            MessageUpdated, SessionCreated, MessagePartUpdated, PermissionReplied, QuestionReplied, TodoUpdated,
            HookReported,
            SessionStatus)]
        # Watching only: a plain subscriber to an ask would pass for somebody who may answer it.
        self._offs += [bus.subscribe(kind, self._on, watch_only=True) for kind in (PermissionAsked, QuestionAsked)]

    def close(self) -> None:
        for off in self._offs:
            off()

    def answered_here(self, request_id: str) -> None:
        """The person answered this ask at a prompt that is on the screen: no second line for it."""
        self._answered_here.add(request_id)

    def note(self, text: str = "") -> None:
        """A line of the caller's own between the session's lines (the demo's headers and answers)."""
        self._print(text)

    def _print(self, text: str = "", session_id: str | None = None) -> None:
        indent = INDENT * self._depth.get(session_id or "", 0)
        text = "\n".join(indent + line if line else line for line in text.split("\n"))
        print(text, file=self.out, flush=True)

    def _on(self, event: Event) -> None:
        match event:
            case SessionCreated(session=session):
                if session.parent_id:
                    self._depth[session.id] = self._depth.get(session.parent_id, 0) + 1
            case MessageUpdated(message=UserMessage() as message):
                self._users[message.id] = message.synthetic
                if message.synthetic:
                    self._switches[message.session_id] = message.agent
            case MessageUpdated(message=message):
                self._agents[message.id] = message.agent
                if self._switches.get(message.session_id) == message.agent:
                    del self._switches[message.session_id]
                    self._print(f"  → @{message.agent} takes over", message.session_id)
            case PermissionAsked(request=request) | QuestionAsked(request=request):
                self._asks[request.id] = request
            case MessagePartUpdated(part=part):
                if part.id not in self._done:
                    self._on_part(part)
            case PermissionReplied(request_id=request_id, reply=reply, message=said, reason=reason,
                                   session_id=session_id, by=by):
                asked = self._asks.pop(request_id, None)
                if request_id in self._answered_here:
                    pass
                elif isinstance(asked, PermissionRequest):
                    self._answered(asked, [permission_record_text(asked, reply, message=said, reason=reason,
                                                                       by=by)])
                else:  # asked before this transcript began: the answer is all it knows
                    self._print(f"  ? permission {REPLY_WORDS[reply]}" + (f" by {by}" if by else "")
                                + (f" ({reason})" if reason else ""),
                                session_id)
            case QuestionReplied(request_id=request_id, answers=answers, reason=reason):
                asked = self._asks.pop(request_id, None)
                if isinstance(asked, QuestionRequest) and request_id not in self._answered_here:
                    lines = []
                    for i, question in enumerate(asked.questions):
                        answer = ", ".join(answers[i]) if answers and i < len(answers) and answers[i] else "no answer"
                        lines.append(f"? {asked.agent} asked: {question.question} — {answer}"
                                     + (f" ({reason})" if reason else ""))
                    self._answered(asked, lines)
            case HookReported(event=hook_event, lines=lines, session_id=session_id):
                for line in lines:
                    self._print(f"  ⚑ {hook_event} hook: {line}", session_id)
            case TodoUpdated(todos=todos, session_id=session_id):
                self._print("  todo list:", session_id)
                for todo in todos:
                    self._print(f"      {TEXT_TODO_MARKS[todo.status]} {todo.content}", session_id)
            case SessionStatus(status="retry", attempt=attempt, message=message, session_id=session_id):
                self._print(f"  … retrying (attempt {attempt}): {message}", session_id)

    def _answered(self, request: PermissionRequest | QuestionRequest, lines: list[str]) -> None:
        if request.tool is not None:
            self._held.setdefault(request.tool.call_id, []).extend(lines)
            return
        for line in lines:
            self._print(f"  {line}", request.session_id)

    def _on_part(self, part: Part) -> None:
        sid = part.session_id
        match part:
            case TextPart() if part.message_id in self._users:
                self._done.add(part.id)
                if part.synthetic or self._users[part.message_id]:
                    pass  # written for the model (a mode switch, an attached description): the person did not say it
                elif self._depth.get(sid):
                    self._print(f"task prompt: {part.text.strip()}", sid)
                else:
                    self._print(f"you: {part.text.strip()}", sid)
            case TextPart() if part.ended_at is not None and part.text.strip():
                self._done.add(part.id)
                self._print(f"\n{self._agents.get(part.message_id, 'agent')}: {part.text.strip()}\n", sid)
            case ReasoningPart() if part.ended_at is not None and part.text.strip():
                self._done.add(part.id)
                self._print(f"  (thinking) {shorten(part.text.strip(), THINKING_CHARS)}", sid)
            case ToolPart(tool="task", state=ToolRunning()) if f"{part.id}:start" not in self._done:
                # Announced as it starts: the child's lines print under it while it runs.
                self._done.add(f"{part.id}:start")
                agent, description = task_heading(part)
                self._print(f"  ▸ task @{agent} — {description}", sid)
            case ToolPart(state=ToolCompleted() | ToolErrored()):
                self._done.add(part.id)
                for line in self._held.pop(part.call_id, []):
                    self._print(f"  {line}", sid)
                card = tool_card_text(part, output_lines=self.output_lines)
                self._print("\n".join(f"  {line}" for line in card.splitlines()), sid)
