"""`ws.sessions`: the store plus bus events, as the loop and the views use them.

Persist before render: a part reaches the store before its first event is published. Streaming text
is the one exception to writing through: each delta is published at once so views stream, while the
store receives the latest version of the part at most FLUSH_INTERVAL_S later, on any other change of
that part, on `flush()` and on `close()`. A killed kernel therefore loses at most that much text.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
import threading
from typing import Any

from ..bus import Bus
from ..permission.rules import Grant, Rule
from .events import MessagePartUpdated, MessageUpdated, SessionCreated, SessionUpdated, Todo, TodoUpdated
from .models import AssistantMessage, MessageWithParts, Part, Session, UserMessage, now
from .store import SessionStore

FLUSH_INTERVAL_S = 0.1
"""Streamed text reaches the store at least this often: a killed kernel loses at most 100 ms of output."""


class SessionService:
    def __init__(self, store: SessionStore, bus: Bus) -> None:
        self.store = store
        self.bus = bus
        self._dirty: dict[str, Part] = {}
        """Parts whose newest version has been published but not yet written."""
        self._timer: asyncio.TimerHandle | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------------------------------ sessions

    def create(
        self,
        directory: str,
        title: str = "",
        parent_id: str | None = None,
        permission: list[Rule] | None = None,
    ) -> Session:
        stamp = dt.datetime.now().astimezone().isoformat(timespec="seconds")
        default = f"{'Child' if parent_id else 'New'} session - {stamp}"
        session = Session(directory=str(directory), title=title or default, parent_id=parent_id,
                          permission=list(permission or []))
        session = session.model_copy(update={"slug": make_slug(title, session.id)})
        self.store.create_session(session)
        self.bus.publish(SessionCreated(session=session))
        return session

    def get(self, session_id: str) -> Session:
        return self.store.get_session(session_id)

    def list(self, directory: str | None = None, *, include_children: bool = False) -> list[Session]:
        return self.store.list_sessions(directory, include_children=include_children)

    def children(self, session_id: str) -> list[Session]:
        return self.store.children(session_id)

    def update(self, session: Session, **changes: Any) -> Session:
        """Store a changed session (given fields replaced) and publish it; bumps `updated_at`."""
        session = session.model_copy(update={**changes, "updated_at": now()})
        session = Session.model_validate(session.model_dump())
        self.store.update_session(session)
        self.bus.publish(SessionUpdated(session=session))
        return session

    # ------------------------------------------------------------------------------------------ messages

    def messages(self, session_id: str) -> list[MessageWithParts]:
        self.flush()
        return self.store.messages(session_id)

    def add_message(self, message: UserMessage | AssistantMessage) -> None:
        self.store.add_message(message)
        self.bus.publish(MessageUpdated(message=message))

    def update_message(self, message: UserMessage | AssistantMessage) -> None:
        self.store.update_message(message)
        self.bus.publish(MessageUpdated(message=message))

    def add_part(self, part: Part) -> None:
        self.store.put_part(part)
        self.bus.publish(MessagePartUpdated(part=part))

    def update_part(self, part: Part, delta: str | None = None) -> None:
        """Publish a changed part; with a text `delta`, the store write may wait up to FLUSH_INTERVAL_S."""
        if delta is None:
            with self._lock:
                self._dirty.pop(part.id, None)
            self.store.put_part(part)
        else:
            self._defer(part)
        self.bus.publish(MessagePartUpdated(part=part, delta=delta))

    def _defer(self, part: Part) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.store.put_part(part)  # no loop to flush later from: write through
            return
        with self._lock:
            self._dirty[part.id] = part
            if self._timer is None:
                self._timer = loop.call_later(FLUSH_INTERVAL_S, self.flush)

    def flush(self) -> None:
        """Write every part whose newest version is not stored yet."""
        with self._lock:
            parts = list(self._dirty.values())
            self._dirty.clear()
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        self.store.put_parts(parts)

    # ------------------------------------------------------------------------------------------ todos

    def set_todos(self, session_id: str, todos: list[Todo]) -> None:
        self.store.set_todos(session_id, todos)
        self.bus.publish(TodoUpdated(session_id=session_id, todos=list(todos)))

    def todos(self, session_id: str) -> list[Todo]:
        return self.store.todos(session_id)

    # ------------------------------------------------------------------------------------------ grants

    def root_of(self, session_id: str) -> str:
        session = self.get(session_id)
        while session.parent_id:
            session = self.get(session.parent_id)
        return session.id

    def load_grants(self, root_id: str) -> list[Grant]:
        return list(self.get(root_id).approved)

    def save_grants(self, root_id: str, grants: list[Grant]) -> None:
        self.update(self.get(root_id), approved=list(grants))

    def close(self) -> None:
        self.flush()
        self.store.close()


def make_slug(title: str, session_id: str) -> str:
    """A file-name-safe name: words of the title if any, plus the id's tail so it is unique."""
    words = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40].strip("-")
    tail = session_id.split("_", 1)[-1][-8:].lower()
    return f"{words}-{tail}" if words else tail
