"""The one way a running loop changes its session.

A run keeps the session's history in memory (history.py) so a step never re-reads the store. Two copies
must then agree, so nothing writes one without the other: every message and part the loop, the
processor, compaction or a subtask produces goes through `RunLog`, which stores and publishes it through
the session service and puts it into the history in the same call.
"""

from __future__ import annotations

from .history import History
from .models import AssistantMessage, Part, UserMessage
from .service import SessionService


class RunLog:
    def __init__(self, sessions: SessionService, session_id: str) -> None:
        self.sessions = sessions
        self.session_id = session_id
        self.history = History.load(sessions, session_id)

    def add_message(self, message: UserMessage | AssistantMessage) -> None:
        self.sessions.add_message(message)
        self.history.put_message(message)

    def update_message(self, message: UserMessage | AssistantMessage) -> None:
        self.sessions.update_message(message)
        self.history.put_message(message)

    def add_part(self, part: Part) -> None:
        self.sessions.add_part(part)
        self.history.put_part(part)

    def update_part(self, part: Part, delta: str | None = None) -> None:
        self.sessions.update_part(part, delta=delta)
        self.history.put_part(part)
