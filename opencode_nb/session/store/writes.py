"""What the session store writes: sessions, messages, parts and todos, each write one transaction.

A write naming a session that does not exist fails as `NotFoundError` naming it, not as SQLite's bare
"FOREIGN KEY constraint failed". An unfinished assistant message is stamped with the writing store's owner
id (see `owners.py`), so a later store can tell whether the process writing it is still alive.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from pydantic_core import PydanticSerializationError

from ... import secrets
from ...errors import NotFoundError
from ..events import Todo
from ..models import AssistantMessage, Part, Session, UserMessage
from .connection import StoreConnections
from .rows import row_json, row_text, todos_adapter

_UPSERT_PART = (
    "INSERT INTO parts (id, session_id, message_id, data) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (id) DO UPDATE SET data = excluded.data"
)


class StoreWrites(StoreConnections):
    """The writing half of `SessionStore`."""

    owner: str
    """The id unfinished messages written here carry; `SessionStore` sets it when it opens."""

    # ------------------------------------------------------------------------------------------ sessions

    def create_session(self, session: Session) -> None:
        self._db().execute(
            "INSERT INTO sessions (id, parent_id, directory, updated_at, data) VALUES (?, ?, ?, ?, ?)",
            (session.id, session.parent_id, row_text(session.directory), session.updated_at, row_json(session)),
        )

    def update_session(self, session: Session) -> None:
        """Replace the stored session.

        Raises:
            NotFoundError: no session has this id.
        """
        cursor = self._db().execute(
            "UPDATE sessions SET parent_id = ?, directory = ?, updated_at = ?, data = ? WHERE id = ?",
            (session.parent_id, row_text(session.directory), session.updated_at, row_json(session), session.id),
        )
        if cursor.rowcount == 0:
            raise NotFoundError("session", session.id)

    def delete_if_empty(self, session_id: str) -> bool:
        """Delete the session if it holds no message and has no child; returns whether it did.

        One statement, so a message written meanwhile by another kernel keeps the session.
        """
        cursor = self._db().execute(
            "DELETE FROM sessions WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM messages WHERE session_id = ?1) "
            "AND NOT EXISTS (SELECT 1 FROM sessions WHERE parent_id = ?1)",
            (session_id,),
        )
        return cursor.rowcount > 0

    # ------------------------------------------------------------------------------------------ messages

    def add_message(self, message: UserMessage | AssistantMessage) -> None:
        """Insert a new message.

        Raises:
            NotFoundError: its session does not exist.
        """
        with self._session_must_exist([message.session_id]):
            self._db().execute(
                "INSERT INTO messages (id, session_id, data, owner) VALUES (?, ?, ?, ?)",
                (message.id, message.session_id, row_json(message), self._owner_of(message)),
            )

    def update_message(self, message: UserMessage | AssistantMessage) -> None:
        """Replace the stored message.

        Raises:
            NotFoundError: no message has this id.
        """
        cursor = self._db().execute(
            "UPDATE messages SET data = ?, owner = ? WHERE id = ?",
            (row_json(message), self._owner_of(message), message.id),
        )
        if cursor.rowcount == 0:
            raise NotFoundError("message", message.id)

    def _owner_of(self, message: UserMessage | AssistantMessage) -> str | None:
        unfinished = isinstance(message, AssistantMessage) and message.completed_at is None
        return self.owner if unfinished else None

    # ------------------------------------------------------------------------------------------ parts

    def put_part(self, part: Part) -> None:
        """Insert the part, or replace the stored version of it (one statement, so one transaction).

        Raises:
            NotFoundError: its session does not exist.
        """
        data = row_json(part)
        with self._session_must_exist([part.session_id]):
            self._db().execute(_UPSERT_PART, (part.id, part.session_id, part.message_id, data))

    def add_part(self, part: Part) -> None:
        """Store a new part (an existing id is replaced, so a retried write is harmless)."""
        self.put_part(part)

    def update_part(self, part: Part) -> None:
        """Store a new version of a part."""
        self.put_part(part)

    def put_parts(self, parts: Sequence[Part]) -> None:
        """Write several parts in one transaction: all of them land, or none.

        Raises:
            NotFoundError: the session of one of them does not exist.
        """
        if not parts:
            return
        rows = [(p.id, p.session_id, p.message_id, row_json(p)) for p in parts]
        with self._session_must_exist([p.session_id for p in parts]), self._tx() as db:
            db.executemany(_UPSERT_PART, rows)

    # ------------------------------------------------------------------------------------------ todos

    def set_todos(self, session_id: str, todos: Sequence[Todo]) -> None:
        """Replace the session's todo list.

        Raises:
            NotFoundError: the session does not exist.
        """
        try:
            data = todos_adapter.dump_json(list(todos)).decode()
        except PydanticSerializationError:
            data = row_text(json.dumps(todos_adapter.dump_python(list(todos), mode="json"), ensure_ascii=False))
        data = secrets.active().redact_json(data)
        with self._session_must_exist([session_id]):
            self._db().execute(
                "INSERT INTO todos (session_id, data) VALUES (?, ?) "
                "ON CONFLICT (session_id) DO UPDATE SET data = excluded.data",
                (session_id, data),
            )

    @contextmanager
    def _session_must_exist(self, session_ids: list[str]) -> Iterator[None]:
        """Turn the database's bare "FOREIGN KEY constraint failed" into the id that is missing."""
        try:
            yield
        except Exception as exc:  # sqlite3.IntegrityError, psycopg's ForeignKeyViolation
            if "FOREIGN KEY" not in str(exc).upper():
                raise
            for session_id in dict.fromkeys(session_ids):
                if self._one("SELECT 1 FROM sessions WHERE id = ?", (session_id,)) is None:
                    raise NotFoundError("session", session_id, "create the session before writing to it") from None
            raise
