"""Sessions, messages, parts and todos in one SQLite file per workspace.

Rows hold the whole model as JSON plus the few columns we query by. Every write is one transaction (a
single statement, or BEGIN IMMEDIATE … COMMIT around several), so a killed kernel leaves either the old
or the new version of a part, never half of one. WAL mode lets a second kernel or the CLI read while a
notebook writes, and `synchronous=NORMAL` makes a commit cost no fsync (a power cut may lose the last
commits, never corrupt the file).

Each thread gets its own connection (`bench/bench_store.py` compares it with one connection behind a
lock). Two threads appending at once ran as fast either way, within the noise of a busy 2-core machine;
but behind a lock, an append from the loop waited out a whole 10k-part history load in another thread
(about 170 ms), where with its own connection it waits a fraction of a millisecond: WAL readers never
block the writer. SQLite still lets one writer in at a time, so concurrent writes queue, never
interleave. A thread's connection closes when it is collected after the thread ends, and `close()`
closes every one still open.

Ids are time-ordered strings, so ordering by id is ordering by creation.

A history loads with one query per table, each row's JSON validated straight into its model by the
discriminated adapter (`validate_json`, no `json.loads` in between: that measured about twice as slow).
Validating all rows as one JSON array through a list adapter measured no faster and would need a second,
row-by-row pass to find an unreadable row; here a row written by a newer version, or damaged, is skipped
with a warning naming it and the rest of the history still loads.
"""

from __future__ import annotations

import gc
import json
import logging
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from ..errors import NotFoundError, OpencodeNbError
from .events import Todo
from .models import (
    AssistantMessage,
    MessageWithParts,
    Part,
    Session,
    UserMessage,
    message_adapter,
    part_adapter,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

_MIGRATIONS: list[tuple[str, ...]] = [
    (  # 0 -> 1: the first schema
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            parent_id TEXT,
            directory TEXT NOT NULL,
            updated_at REAL NOT NULL,
            data TEXT NOT NULL
        )""",
        "CREATE INDEX sessions_by_directory ON sessions (directory, updated_at)",
        "CREATE INDEX sessions_by_parent ON sessions (parent_id)",
        """CREATE TABLE messages (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            data TEXT NOT NULL
        )""",
        "CREATE INDEX messages_by_session ON messages (session_id, id)",
        """CREATE TABLE parts (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            message_id TEXT NOT NULL,
            data TEXT NOT NULL
        )""",
        "CREATE INDEX parts_by_session ON parts (session_id, message_id, id)",
        """CREATE TABLE todos (
            session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
            data TEXT NOT NULL
        )""",
    ),
]
"""Step i takes a file from schema version i to i + 1; a later change appends a step, never edits one."""

SCHEMA_VERSION = len(_MIGRATIONS)
"""Kept in `PRAGMA user_version`; a file from a newer version is refused rather than misread."""

_todos_adapter = TypeAdapter(list[Todo])

_UPSERT_PART = (
    "INSERT INTO parts (id, session_id, message_id, data) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (id) DO UPDATE SET data = excluded.data"
)


class SessionStore:
    """The SQLite file of one workspace; every method is safe to call from any thread."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._connections: weakref.WeakSet[_Connection] = weakref.WeakSet()
        """Every thread's connection, for `close()`; a thread's goes (and closes) when the thread ends."""
        self._connections_lock = threading.Lock()
        self._closed = False
        try:
            self._db().execute("PRAGMA journal_mode=WAL")  # kept in the file: once is enough
            self._migrate()
        except BaseException:
            self.close()
            raise

    def _db(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use."""
        db: _Connection | None = getattr(self._local, "db", None)
        if db is not None:
            return db
        with self._connections_lock:
            if self._closed:
                raise sqlite3.ProgrammingError(f"the session store {self.path} is closed")
            # isolation_level=None: we open transactions ourselves; timeout: how long to wait for another writer
            db = sqlite3.connect(
                self.path, timeout=30, isolation_level=None, check_same_thread=False, factory=_Connection
            )
            try:
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute("PRAGMA foreign_keys=ON")
            except BaseException:
                db.close()
                raise
            self._connections.add(db)
        self._local.db = db
        return db

    def _migrate(self) -> None:
        with self._tx() as db:  # IMMEDIATE: two kernels opening a new file at once migrate it once
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise OpencodeNbError(
                    f"{self.path} was written by a newer opencode_nb (store schema {version}, this version reads "
                    f"up to {SCHEMA_VERSION}); upgrade opencode_nb, or set OPENCODE_NB_DATA_DIR to another directory"
                )
            for step in _MIGRATIONS[version:]:
                for statement in step:
                    db.execute(statement)
            if version < SCHEMA_VERSION:
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")  # take the write lock now: a read-then-write upgrade could deadlock
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Writes made inside, on this thread, commit together: one commit instead of one per statement."""
        with self._tx():
            yield

    @contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        """Several reads that see one committed state, however other writers interleave."""
        db = self._db()
        db.execute("BEGIN")
        try:
            yield db
        finally:
            db.execute("COMMIT")

    def _one(self, sql: str, args: tuple[Any, ...]) -> Any:
        row = self._db().execute(sql, args).fetchone()
        return None if row is None else row[0]

    # ------------------------------------------------------------------------------------------ sessions

    def create_session(self, session: Session) -> None:
        self._db().execute(
            "INSERT INTO sessions (id, parent_id, directory, updated_at, data) VALUES (?, ?, ?, ?, ?)",
            (session.id, session.parent_id, session.directory, session.updated_at, session.model_dump_json()),
        )

    def update_session(self, session: Session) -> None:
        """Replace the stored session.

        Raises:
            NotFoundError: no session has this id.
        """
        cursor = self._db().execute(
            "UPDATE sessions SET parent_id = ?, directory = ?, updated_at = ?, data = ? WHERE id = ?",
            (session.parent_id, session.directory, session.updated_at, session.model_dump_json(), session.id),
        )
        if cursor.rowcount == 0:
            raise NotFoundError("session", session.id)

    def get_session(self, session_id: str) -> Session:
        """The stored session.

        Raises:
            NotFoundError: no session has this id.
        """
        data = self._one("SELECT data FROM sessions WHERE id = ?", (session_id,))
        if data is None:
            raise NotFoundError("session", session_id)
        return self._validate_row(Session.model_validate_json, data, "session", session_id)

    def list_sessions(self, directory: str | None = None, include_children: bool = False) -> list[Session]:
        """Newest activity first; root sessions only unless `include_children`; every directory if None."""
        where, args = [], []
        if directory is not None:
            where.append("directory = ?")
            args.append(str(directory))
        if not include_children:
            where.append("parent_id IS NULL")
        sql = "SELECT id, data FROM sessions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY updated_at DESC, id DESC"
        return self._load(self._db(), sql, tuple(args), Session.model_validate_json, "session")

    def children(self, session_id: str) -> list[Session]:
        """Sessions whose parent is `session_id`, oldest first."""
        sql = "SELECT id, data FROM sessions WHERE parent_id = ? ORDER BY id"
        return self._load(self._db(), sql, (session_id,), Session.model_validate_json, "session")

    def slug_taken(self, slug: str) -> bool:
        """Whether a session already has this slug (only asked when a session is created)."""
        return self._one("SELECT 1 FROM sessions WHERE json_extract(data, '$.slug') = ? LIMIT 1", (slug,)) is not None

    # ------------------------------------------------------------------------------------------ messages

    def add_message(self, message: UserMessage | AssistantMessage) -> None:
        """Insert a new message.

        Raises:
            NotFoundError: its session does not exist.
        """
        with self._session_must_exist([message.session_id]):
            self._db().execute(
                "INSERT INTO messages (id, session_id, data) VALUES (?, ?, ?)",
                (message.id, message.session_id, message.model_dump_json()),
            )

    def update_message(self, message: UserMessage | AssistantMessage) -> None:
        """Replace the stored message.

        Raises:
            NotFoundError: no message has this id.
        """
        cursor = self._db().execute(
            "UPDATE messages SET data = ? WHERE id = ?", (message.model_dump_json(), message.id)
        )
        if cursor.rowcount == 0:
            raise NotFoundError("message", message.id)

    def get_message(self, message_id: str) -> UserMessage | AssistantMessage:
        """The stored message.

        Raises:
            NotFoundError: no message has this id.
        """
        data = self._one("SELECT data FROM messages WHERE id = ?", (message_id,))
        if data is None:
            raise NotFoundError("message", message_id)
        return self._validate_row(message_adapter.validate_json, data, "message", message_id)

    # ------------------------------------------------------------------------------------------ parts

    def put_part(self, part: Part) -> None:
        """Insert the part, or replace the stored version of it (one statement, so one transaction).

        Raises:
            NotFoundError: its session does not exist.
        """
        data = part.model_dump_json()
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
        rows = [(p.id, p.session_id, p.message_id, p.model_dump_json()) for p in parts]
        with self._session_must_exist([p.session_id for p in parts]), self._tx() as db:
            db.executemany(_UPSERT_PART, rows)

    def messages(self, session_id: str) -> list[MessageWithParts]:
        """Every message of the session with its parts, both in creation order.

        Rows this version cannot read are skipped with a warning, and so are the parts of such a message.
        """
        with self._snapshot() as db:
            messages = self._load(
                db,
                "SELECT id, data FROM messages WHERE session_id = ? ORDER BY id",
                (session_id,),
                message_adapter.validate_json,
                "message",
            )
            parts = self._load(
                db,
                "SELECT id, data FROM parts WHERE session_id = ? ORDER BY message_id, id",
                (session_id,),
                part_adapter.validate_json,
                "part",
            )
        by_message: dict[str, list[Part]] = {m.id: [] for m in messages}
        orphans = 0
        for part in parts:
            bucket = by_message.get(part.message_id)
            if bucket is None:
                orphans += 1
            else:
                bucket.append(part)
        if orphans:
            log.warning("skipping %d parts of session %s whose message could not be read", orphans, session_id)
        # The parts were validated just above: building the wrappers unvalidated saves a second pass.
        return [MessageWithParts.model_construct(message=m, parts=by_message[m.id]) for m in messages]

    def activity(self, session_id: str) -> tuple[str, int]:
        """The agent of the session's latest answer and the tokens of all its answers, read in SQL: a listing
        of many sessions must not load their parts."""
        row = self._db().execute(
            "SELECT (SELECT json_extract(data, '$.agent') FROM messages WHERE session_id = ?1 "
            "        AND json_extract(data, '$.role') = 'assistant' ORDER BY id DESC LIMIT 1), "
            "       COALESCE(SUM(json_extract(data, '$.tokens.input') + json_extract(data, '$.tokens.output')"
            "            + json_extract(data, '$.tokens.reasoning') + json_extract(data, '$.tokens.cache_read')"
            "            + json_extract(data, '$.tokens.cache_write')), 0) "
            "FROM messages WHERE session_id = ?1 AND json_extract(data, '$.role') = 'assistant'",
            (session_id,),
        ).fetchone()
        return row[0] or "", int(row[1])

    def current_agent(self, session_id: str) -> str | None:
        """The agent named by the session's newest user message, read in SQL without loading the history."""
        row = self._db().execute(
            "SELECT json_extract(data, '$.agent') FROM messages WHERE session_id = ? "
            "AND json_extract(data, '$.role') = 'user' ORDER BY id DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        return row[0] if row and row[0] else None

    # ------------------------------------------------------------------------------------------ todos

    def set_todos(self, session_id: str, todos: Sequence[Todo]) -> None:
        """Replace the session's todo list.

        Raises:
            NotFoundError: the session does not exist.
        """
        data = _todos_adapter.dump_json(list(todos)).decode()
        with self._session_must_exist([session_id]):
            self._db().execute(
                "INSERT INTO todos (session_id, data) VALUES (?, ?) "
                "ON CONFLICT (session_id) DO UPDATE SET data = excluded.data",
                (session_id, data),
            )

    def todos(self, session_id: str) -> list[Todo]:
        """The session's todo list; empty if it never had one. Unreadable items are skipped."""
        data = self._one("SELECT data FROM todos WHERE session_id = ?", (session_id,))
        if data is None:
            return []
        try:
            return _todos_adapter.validate_json(data)
        except (ValidationError, ValueError) as exc:
            log.warning("todos of session %s are partly unreadable: %s", session_id, _first_line(exc))
        try:
            items = json.loads(data)
        except ValueError:
            return []
        todos = []
        for item in items if isinstance(items, list) else []:
            try:
                todos.append(Todo.model_validate(item))
            except ValidationError:
                continue
        return todos

    # ------------------------------------------------------------------------------------------ misc

    def close(self) -> None:
        """Close the file; calling it again is harmless."""
        with self._connections_lock:
            self._closed = True
            connections = list(self._connections)
        for db in connections:
            db.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _session_must_exist(self, session_ids: list[str]) -> Iterator[None]:
        """Turn SQLite's bare "FOREIGN KEY constraint failed" into the id that is missing."""
        try:
            yield
        except sqlite3.IntegrityError as exc:
            if "FOREIGN KEY" not in str(exc):
                raise
            for session_id in dict.fromkeys(session_ids):
                if self._one("SELECT 1 FROM sessions WHERE id = ?", (session_id,)) is None:
                    raise NotFoundError("session", session_id, "create the session before writing to it") from None
            raise

    def _load(
        self, db: sqlite3.Connection, sql: str, args: tuple[Any, ...], load: Callable[[str], T], kind: str
    ) -> list[T]:
        """Validate the `data` of every row `sql` selects (as `id, data`), skipping unreadable ones."""
        out = []
        with _collector_paused():
            for row_id, data in db.execute(sql, args):
                try:
                    out.append(load(data))
                except ValueError as exc:  # pydantic's ValidationError is one too
                    log.warning("skipping unreadable %s row %s in %s: %s", kind, row_id, self.path, _first_line(exc))
        return out

    def _validate_row(self, load: Callable[[str], T], data: str, kind: str, row_id: str) -> T:
        try:
            return load(data)
        except (ValidationError, ValueError) as exc:
            raise OpencodeNbError(
                f"{kind} {row_id!r} in {self.path} cannot be read by this opencode_nb ({_first_line(exc)}); "
                "it may have been written by a newer version: upgrade opencode_nb"
            ) from exc


class _Connection(sqlite3.Connection):
    """A connection that can be weakly referenced, so the store can close the ones still open."""


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large history is built.

    Validating ten thousand parts allocates hundreds of thousands of objects, none of them garbage; the
    collector's sweeps over them made the median load of a 10k-part session nearly twice as slow.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _first_line(exc: Exception) -> str:
    text = str(exc)
    lines = text.splitlines()
    # pydantic puts the count on the first line and the field and problem on the next two
    return " ".join(line.strip() for line in lines[:3]) if lines else text
