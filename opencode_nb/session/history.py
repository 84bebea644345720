"""The in-memory history of one running session, and its provider messages built incrementally.

A loop run loads the session once and then keeps this copy current from the parts it writes itself;
it never re-reads the store between steps. Converting a message to provider form is cached per message
and only redone when one of its parts changed, and the flat list of provider messages is rebuilt only
from the first entry that changed, which is almost always the newest one. So the cost of a step does not
grow with the length of the session.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .convert import to_llm_messages
from .models import (
    AgentPart,
    AssistantMessage,
    CompactionPart,
    MessageWithParts,
    Part,
    SubtaskPart,
    UserMessage,
)
from .service import SessionService


@dataclass
class Entry:
    message: UserMessage | AssistantMessage
    index: int
    parts: dict[str, Part] = field(default_factory=dict)
    """Parts by id; insertion order is creation order."""
    converted: list[Any] | None = None
    """Cached provider messages for this entry; None when a part changed since."""


class History:
    def __init__(self, items: list[MessageWithParts]) -> None:
        self.entries: dict[str, Entry] = {}
        self._order: list[Entry] = []
        self._last_user: Entry | None = None
        self._last_assistant: Entry | None = None
        self._summary: Entry | None = None
        """The newest completed compaction summary: the model sees nothing before the request it answers."""
        self._flat: list[Any] = []
        self._offsets: list[int] = []
        """Where each entry's messages start in `_flat` (entries before the summary have none)."""
        self._dirty = 0
        """Index of the first entry whose provider messages must be rebuilt."""
        for item in items:
            self.put_message(item.message)
            entry = self.entries[item.message.id]
            entry.parts = {p.id: p for p in item.parts}

    @classmethod
    def load(cls, sessions: SessionService, session_id: str) -> History:
        return cls(sessions.messages(session_id))

    # ------------------------------------------------------------------------------------------ updates

    def put_message(self, message: UserMessage | AssistantMessage) -> None:
        entry = self.entries.get(message.id)
        if entry is None:
            entry = Entry(message, len(self._order))
            self.entries[message.id] = entry
            self._order.append(entry)
        else:
            entry.message = message
            self._changed(entry)
        if isinstance(message, UserMessage):
            if self._last_user is None or entry.index >= self._last_user.index:
                self._last_user = entry
        else:
            if self._last_assistant is None or entry.index >= self._last_assistant.index:
                self._last_assistant = entry
            completed_summary = message.summary and message.finish == "stop" and message.error is None
            if completed_summary and entry.index > 0 and (self._summary is None or entry.index > self._summary.index):
                self._summary = entry
                self._dirty = 0  # everything before it drops out of view

    def put_part(self, part: Part) -> None:
        entry = self.entries.get(part.message_id)
        if entry is None:
            return
        entry.parts[part.id] = part
        self._changed(entry)

    def _changed(self, entry: Entry) -> None:
        entry.converted = None
        self._dirty = min(self._dirty, entry.index)

    # ------------------------------------------------------------------------------------------ queries

    def last_user(self) -> UserMessage | None:
        message = self._last_user.message if self._last_user else None
        return message if isinstance(message, UserMessage) else None

    def last_assistant(self) -> AssistantMessage | None:
        message = self._last_assistant.message if self._last_assistant else None
        return message if isinstance(message, AssistantMessage) else None

    def after(self, message_id: str) -> list[Entry]:
        """The entries newer than `message_id`, oldest first."""
        return self._order[self.entries[message_id].index + 1:]

    def answered(self, user: UserMessage) -> bool:
        """True when a finished assistant message after `user` needs nothing more (no tool calls to follow)."""
        latest = self._last_assistant
        if latest is None or latest.index < self.entries[user.id].index:
            return False
        message = latest.message
        assert isinstance(message, AssistantMessage)
        if message.summary:  # a requested compaction is answered by its summary
            return message.parent_id == user.id and message.finish is not None
        return message.finish is not None and message.finish != "tool-calls"

    def pending_task(self) -> tuple[UserMessage, CompactionPart | SubtaskPart | AgentPart] | None:
        """A compaction, subtask or @agent request on the newest user message that nothing has answered yet."""
        user = self.last_user()
        if user is None:
            return None
        if self._last_assistant is not None and self._last_assistant.index > self.entries[user.id].index:
            return None
        for part in self.entries[user.id].parts.values():
            if isinstance(part, CompactionPart | SubtaskPart | AgentPart):
                return user, part
        return None

    def parts(self, message_id: str) -> list[Part]:
        return list(self.entries[message_id].parts.values())

    def visible(self) -> list[Entry]:
        """The entries the model sees: from the compaction request that the newest summary answers, on."""
        return self._order[self._start():]

    def _start(self) -> int:
        return self._summary.index - 1 if self._summary is not None else 0

    def llm_messages(self) -> list[Any]:
        start = self._start()
        if self._dirty < start or len(self._offsets) < start:
            self._flat, self._offsets, self._dirty = [], [0] * start, start
        dirty = max(self._dirty, start)
        if dirty < len(self._order):
            del self._flat[self._offsets[dirty] if dirty < len(self._offsets) else len(self._flat):]
            del self._offsets[dirty:]
            for entry in self._order[dirty:]:
                if entry.converted is None:
                    entry.converted = to_llm_messages(
                        MessageWithParts.model_construct(message=entry.message, parts=list(entry.parts.values()))
                    )
                self._offsets.append(len(self._flat))
                self._flat.extend(entry.converted)
        self._dirty = len(self._order)
        return list(self._flat)
