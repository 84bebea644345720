"""Sessions, messages, parts and todos in one SQLite file per workspace.

Rows hold the whole model as JSON plus the few columns we query by. Every write is one transaction, so
a killed kernel leaves either the old or the new version of a part, never half of one. WAL mode lets a
second kernel or the CLI read while a notebook writes. One connection is shared by every thread behind a
lock: SQLite serialises writers anyway, and one connection keeps the page cache warm for the loop.

Ids are time-ordered strings, so ordering by id is ordering by creation.
"""

from __future__ import annotations

import gc
import json
import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..errors import NotFoundError, OpencodeNbError
from .events import Todo
from .models import (
    AssistantMessage,
    Message,
    MessageWithParts,
    Part,
    Session,
    UserMessage,
    message_adapter,
    part_adapter,
)

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    parent_id TEXT,
    directory TEXT NOT NULL,
    updated_at REAL NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_by_directory ON sessions (directory, updated_at);
CREATE INDEX IF NOT EXISTS sessions_by_parent ON sessions (parent_id);
CREATE TABLE IF NOT EXISTS messages (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_session ON messages (session_id, id);
CREATE TABLE IF NOT EXISTS parts (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    message_id TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS parts_by_session ON parts (session_id, message_id, id);
CREATE TABLE IF NOT EXISTS todos (
    session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    data TEXT NOT NULL
);
"""

_todos_adapter = TypeAdapter(list[Todo])
_list_adapters: dict[str, TypeAdapter[Any]] = {
    "part": TypeAdapter(list[Part]),
    "message": TypeAdapter(list[Message]),
    "session": TypeAdapter(list[Session]),
}


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large history is built.

    Validating ten thousand parts allocates hundreds of thousands of objects, none of them garbage; the
    collector's generation sweeps over them would otherwise double the load time.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class SessionStore:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise OpencodeNbError(
                f"{self.path} was written by a newer opencode_nb (store schema {version}); upgrade opencode_nb "
                "or set OPENCODE_NB_DATA_DIR to another directory"
            )
        self._db.executescript(_SCHEMA)  # idempotent, and runs in its own transaction
        self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _read(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    # ------------------------------------------------------------------------------------------ sessions

    def create_session(self, session: Session) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO sessions (id, parent_id, directory, updated_at, data) VALUES (?, ?, ?, ?, ?)",
                (session.id, session.parent_id, session.directory, session.updated_at, session.model_dump_json()),
            )

    def update_session(self, session: Session) -> None:
        with self._tx() as db:
            cursor = db.execute(
                "UPDATE sessions SET parent_id = ?, directory = ?, updated_at = ?, data = ? WHERE id = ?",
                (session.parent_id, session.directory, session.updated_at, session.model_dump_json(), session.id),
            )
            if cursor.rowcount == 0:
                raise NotFoundError("session", session.id)

    def get_session(self, session_id: str) -> Session:
        rows = self._read("SELECT data FROM sessions WHERE id = ?", (session_id,))
        if not rows:
            raise NotFoundError("session", session_id)
        return Session.model_validate_json(rows[0][0])

    def list_sessions(self, directory: str | None = None, *, include_children: bool = False) -> list[Session]:
        """Newest first by last activity; root sessions only unless asked."""
        sql = "SELECT id, data FROM sessions"
        where, args = [], []
        if directory is not None:
            where.append("directory = ?")
            args.append(directory)
        if not include_children:
            where.append("parent_id IS NULL")
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY updated_at DESC, id DESC"
        return self._load_rows(self._read(sql, tuple(args)), Session.model_validate_json, "session")

    def children(self, session_id: str) -> list[Session]:
        rows = self._read("SELECT id, data FROM sessions WHERE parent_id = ? ORDER BY id", (session_id,))
        return self._load_rows(rows, Session.model_validate_json, "session")

    # ------------------------------------------------------------------------------------------ messages

    def add_message(self, message: UserMessage | AssistantMessage) -> None:
        with self._tx() as db:
            db.execute("INSERT INTO messages (id, session_id, data) VALUES (?, ?, ?)",
                       (message.id, message.session_id, message.model_dump_json()))

    def update_message(self, message: UserMessage | AssistantMessage) -> None:
        with self._tx() as db:
            cursor = db.execute("UPDATE messages SET data = ? WHERE id = ?", (message.model_dump_json(), message.id))
            if cursor.rowcount == 0:
                raise NotFoundError("message", message.id)

    def get_message(self, message_id: str) -> UserMessage | AssistantMessage:
        rows = self._read("SELECT data FROM messages WHERE id = ?", (message_id,))
        if not rows:
            raise NotFoundError("message", message_id)
        return message_adapter.validate_json(rows[0][0])

    def put_part(self, part: Part) -> None:
        """Insert the part, or replace the stored version of it."""
        self.put_parts([part])

    add_part = put_part
    update_part = put_part

    def put_parts(self, parts: list[Part]) -> None:
        """Write several parts in one transaction (the coalescing writer flushes through here)."""
        if not parts:
            return
        with self._tx() as db:
            db.executemany(
                "INSERT INTO parts (id, session_id, message_id, data) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET data = excluded.data",
                [(p.id, p.session_id, p.message_id, p.model_dump_json()) for p in parts],
            )

    def messages(self, session_id: str) -> list[MessageWithParts]:
        """Every message of the session with its parts, both in creation order."""
        messages = self._load_rows(
            self._read("SELECT id, data FROM messages WHERE session_id = ? ORDER BY id", (session_id,)),
            message_adapter.validate_json, "message",
        )
        parts = self._load_rows(
            self._read("SELECT id, data FROM parts WHERE session_id = ? ORDER BY message_id, id", (session_id,)),
            part_adapter.validate_json, "part",
        )
        by_message: dict[str, list[Part]] = {m.id: [] for m in messages}
        for part in parts:
            bucket = by_message.get(part.message_id)
            if bucket is not None:
                bucket.append(part)
        return [MessageWithParts.model_construct(message=m, parts=by_message[m.id]) for m in messages]

    # ------------------------------------------------------------------------------------------ todos

    def set_todos(self, session_id: str, todos: list[Todo]) -> None:
        data = json.dumps([t.model_dump(mode="json") for t in todos])
        with self._tx() as db:
            db.execute("INSERT INTO todos (session_id, data) VALUES (?, ?) "
                       "ON CONFLICT (session_id) DO UPDATE SET data = excluded.data", (session_id, data))

    def todos(self, session_id: str) -> list[Todo]:
        rows = self._read("SELECT data FROM todos WHERE session_id = ?", (session_id,))
        return _todos_adapter.validate_json(rows[0][0]) if rows else []

    # ------------------------------------------------------------------------------------------ misc

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @staticmethod
    def _load_rows(rows: list[tuple[Any, ...]], load: Any, kind: str) -> list[Any]:
        """Validate rows; a row this version cannot read is skipped with a warning, never fatal.

        The common case validates every row in one call (one JSON array through a list adapter), which
        is several times faster than row by row; only if that fails are rows checked one at a time.
        """
        many = _list_adapters.get(kind)
        if many is not None and rows:
            try:
                with _collector_paused():
                    return many.validate_json("[" + ",".join(data for _, data in rows) + "]")  # type: ignore[no-any-return]
            except (ValidationError, ValueError):
                pass
        out = []
        for row_id, data in rows:
            try:
                out.append(load(data))
            except (ValidationError, ValueError) as exc:
                log.warning("skipping unreadable %s row %s: %s", kind, row_id, str(exc).splitlines()[0])
        return out
