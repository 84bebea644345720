"""Bus events about sessions, messages, parts and todos."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..bus import Event
from ..values import Todo
from .models import AssistantMessage, Part, Session, UserMessage


class SessionCreated(Event):
    type: Literal["session.created"] = "session.created"
    session: Session


class SessionUpdated(Event):
    type: Literal["session.updated"] = "session.updated"
    session: Session


class SessionStatus(Event):
    """busy while the loop runs, retry while it waits to try the provider again, idle when done."""

    type: Literal["session.status"] = "session.status"
    session_id: str
    status: Literal["idle", "busy", "retry"]
    attempt: int = 0
    message: str = ""
    next_at: float | None = None


class SessionIdle(Event):
    type: Literal["session.idle"] = "session.idle"
    session_id: str


class SessionError(Event):
    type: Literal["session.error"] = "session.error"
    session_id: str
    error: str
    kind: str = "unknown"


class HookReported(Event):
    """What hooks said for the person (`systemMessage`, a failing or timed-out hook, one not yet approved):
    shown in the session's view; the model never reads it."""

    type: Literal["hook.reported"] = "hook.reported"
    session_id: str
    event: str
    lines: list[str]


class MessageUpdated(Event):
    type: Literal["message.updated"] = "message.updated"
    message: UserMessage | AssistantMessage = Field(discriminator="role")


class MessagePartUpdated(Event):
    """A part changed; `delta` is the text appended since the last event, when only text grew."""

    type: Literal["message.part.updated"] = "message.part.updated"
    part: Part
    delta: str | None = None


class TodoUpdated(Event):
    type: Literal["todo.updated"] = "todo.updated"
    session_id: str
    todos: list[Todo]
