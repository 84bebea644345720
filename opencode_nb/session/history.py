"""The in-memory history of one running session, and its provider messages built incrementally.

A loop run loads the session once and then keeps this copy current from the parts it writes itself;
it never re-reads the store between steps. Converting a message to provider form is cached per message
and only redone when one of its parts changed, so the cost of a step does not grow with the length of
the session.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .convert import to_llm_messages
from .models import (
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
    parts: dict[str, Part] = field(default_factory=dict)
    """Parts by id; insertion order is creation order."""
    converted: list[Any] | None = None
    """Cached provider messages for this entry; None when a part changed since."""


class History:
    def __init__(self, items: list[MessageWithParts]) -> None:
        self.entries: dict[str, Entry] = {}
        for item in items:
            self.entries[item.message.id] = Entry(item.message, {p.id: p for p in item.parts})

    @classmethod
    def load(cls, sessions: SessionService, session_id: str) -> History:
        return cls(sessions.messages(session_id))

    # ------------------------------------------------------------------------------------------ updates

    def put_message(self, message: UserMessage | AssistantMessage) -> None:
        entry = self.entries.get(message.id)
        if entry is None:
            self.entries[message.id] = Entry(message)
        else:
            entry.message = message
            entry.converted = None

    def put_part(self, part: Part) -> None:
        entry = self.entries.get(part.message_id)
        if entry is None:
            return
        entry.parts[part.id] = part
        entry.converted = None

    # ------------------------------------------------------------------------------------------ queries

    def last_user(self) -> UserMessage | None:
        for entry in reversed(self.entries.values()):
            if isinstance(entry.message, UserMessage):
                return entry.message
        return None

    def last_assistant(self) -> AssistantMessage | None:
        for entry in reversed(self.entries.values()):
            if isinstance(entry.message, AssistantMessage):
                return entry.message
        return None

    def answered(self, user: UserMessage) -> bool:
        """True when a finished assistant message after `user` needs nothing more (no tool calls to follow)."""
        for entry in reversed(self.entries.values()):
            message = entry.message
            if message.id <= user.id:
                return False
            if isinstance(message, AssistantMessage) and message.summary:
                if message.parent_id == user.id:  # a requested compaction is answered by its summary
                    return message.finish is not None
            elif isinstance(message, AssistantMessage):
                return message.finish is not None and message.finish != "tool-calls"
        return False

    def pending_task(self) -> tuple[UserMessage, CompactionPart | SubtaskPart] | None:
        """A compaction or subtask request on the newest user message that nothing has answered yet."""
        user = self.last_user()
        if user is None:
            return None
        for entry in reversed(self.entries.values()):
            if entry.message.id <= user.id:
                break
            if isinstance(entry.message, AssistantMessage):
                return None
        for part in self.entries[user.id].parts.values():
            if isinstance(part, CompactionPart | SubtaskPart):
                return user, part
        return None

    def parts(self, message_id: str) -> list[Part]:
        return list(self.entries[message_id].parts.values())

    def visible(self) -> list[Entry]:
        """The entries the model sees: everything from the newest completed compaction summary on."""
        entries = list(self.entries.values())
        for i in range(len(entries) - 1, 0, -1):
            message = entries[i].message
            if (
                isinstance(message, AssistantMessage)
                and message.summary
                and message.finish == "stop"
                and message.error is None
            ):
                # The summary answers the compaction request just before it: start there.
                return entries[i - 1 :]
        return entries

    def llm_messages(self) -> list[Any]:
        out: list[Any] = []
        for entry in self.visible():
            if entry.converted is None:
                entry.converted = to_llm_messages(
                    MessageWithParts(message=entry.message, parts=list(entry.parts.values()))
                )
            out.extend(entry.converted)
        return out
