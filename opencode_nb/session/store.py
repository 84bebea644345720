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

Leftovers of a dead process. A kernel killed mid-run leaves its assistant message unfinished and its tool
parts pending or running, and nothing it owned will ever finish them. Each open store is therefore an
*owner*: it holds an exclusive `flock` on its own file in `<store>.owners/` for as long as it is open, and
every assistant message it writes while unfinished carries its id (the `owner` column, cleared once the
message completes). The OS drops the lock the moment the process dies, SIGKILL included. When a store is
opened, every other owner whose lock can be taken is dead: its unfinished messages end as "aborted" and
their pending or running tool parts as errors, both saying "interrupted: the process running it ended".
An owner whose lock is held (another kernel on the same file, or another store open in this process)
is left alone, however old its run. A store closed (or a process that exits) with a run unfinished
leaves it to the next store opened likewise. Rows from before owners were recorded have the owner '' and
count as dead. Where `flock` does not exist (Windows), other owners always count as alive.

Text that UTF-8 cannot encode (surrogates, from a model's `\\ud83d` escapes) is stored with split pairs
joined and lone halves as U+FFFD instead of failing the write.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import re
import socket
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError

from .. import id as ids
from .. import secrets
from ..errors import NotFoundError, OpencodeNbError
from .events import Todo
from .models import (
    AssistantMessage,
    MessageError,
    MessageWithParts,
    Part,
    Session,
    ToolErrored,
    ToolPart,
    ToolPending,
    ToolRunning,
    UserMessage,
    message_adapter,
    now,
    part_adapter,
)

try:
    import fcntl
except ImportError:  # Windows: no flock, so no owner can be proven dead
    fcntl = None  # type: ignore[assignment]

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
    (  # 1 -> 2: who is writing each unfinished message, so a dead process's leftovers can be finalised
        "ALTER TABLE messages ADD COLUMN owner TEXT",
        "CREATE INDEX messages_unfinished ON messages (owner) WHERE owner IS NOT NULL",
        """CREATE TABLE owners (
            id TEXT PRIMARY KEY,
            pid INTEGER NOT NULL,
            host TEXT NOT NULL,
            opened_at REAL NOT NULL
        )""",
        # Leftovers written before owners were recorded: their writer is long gone or about to be.
        """UPDATE messages SET owner = '' WHERE (json_extract(data, '$.role') = 'assistant'
               AND json_extract(data, '$.completed_at') IS NULL)
            OR id IN (SELECT message_id FROM parts WHERE json_extract(data, '$.type') = 'tool'
                      AND json_extract(data, '$.state.status') IN ('pending', 'running'))""",
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

INTERRUPTED = "interrupted: the process running it ended"
"""What a message or tool call left unfinished by a dead process says once a new store finalises it."""

_LIVE_OWNERS: set[str] = set()
"""Owners open in this process. Checked before the lock file, so a run of this process is never finalised,
even where a file system's `flock` does not exclude two descriptors of one process."""
_UNPAIRED = re.compile("[\ud800-\udfff]")


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
        self.owner = ids.ascending("run")
        """This store's id as the writer of unfinished messages (see the module docstring)."""
        real = self.path.resolve()  # two kernels reaching the file through different links share one folder
        self._owners_dir = real.with_name(real.name + ".owners")
        lock = self._owners_dir / f"{self.owner}.lock"
        self._release = weakref.finalize(self, _release_owner, self.owner, lock, _hold_owner_lock(lock, self.owner),
                                         os.getpid())
        try:
            self._db().execute("PRAGMA journal_mode=WAL")  # kept in the file: once is enough
            self._migrate()
            self._finalise_leftovers()
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

    def _finalise_leftovers(self) -> None:
        """Register this store as an owner and finish what dead owners left unfinished (one transaction,
        so two stores opening at once never finalise the same rows twice)."""
        finalised = 0
        gone: list[str] = []
        with self._tx() as db:
            db.execute("INSERT INTO owners (id, pid, host, opened_at) VALUES (?, ?, ?, ?)",
                       (self.owner, os.getpid(), socket.gethostname(), now()))
            owners = {row[0] for row in db.execute("SELECT DISTINCT owner FROM messages WHERE owner IS NOT NULL")}
            owners |= {row[0] for row in db.execute("SELECT id FROM owners")}
            for owner in sorted(owners - {self.owner}):
                if _owner_alive(self._owners_dir, owner):
                    continue
                rows = db.execute("SELECT id, data FROM messages WHERE owner = ?", (owner,)).fetchall()
                for message_id, data in rows:
                    finalised += self._finalise_message(db, message_id, data)
                db.execute("DELETE FROM owners WHERE id = ?", (owner,))
                gone.append(owner)
        for owner in filter(None, gone):  # after the commit: a rolled-back finalisation keeps its evidence
            _unlink(self._owners_dir / f"{owner}.lock")
        if finalised:
            log.warning("%s: marked %d messages left unfinished by a process that ended as interrupted",
                        self.path, finalised)

    def _finalise_message(self, db: sqlite3.Connection, message_id: str, data: str) -> int:
        try:
            message = message_adapter.validate_json(data)
        except ValueError as exc:
            log.warning("leaving unreadable message row %s in %s as it is: %s", message_id, self.path, _first_line(exc))
            db.execute("UPDATE messages SET owner = NULL WHERE id = ?", (message_id,))
            return 0
        ended = now()
        rows = db.execute("SELECT id, data FROM parts WHERE session_id = ? AND message_id = ?",
                          (message.session_id, message_id)).fetchall()
        for part_id, part_data in rows:
            try:
                part = part_adapter.validate_json(part_data)
            except ValueError:
                continue
            if not isinstance(part, ToolPart) or not isinstance(part.state, ToolPending | ToolRunning):
                continue
            running = part.state if isinstance(part.state, ToolRunning) else None
            state = ToolErrored(
                input=part.state.input,
                error=f"Tool execution {INTERRUPTED}",
                metadata={**(running.metadata if running else {}), "interrupted": True},  # its output so far
                started_at=running.started_at if running else ended,
            )
            db.execute("UPDATE parts SET data = ? WHERE id = ?", (_json(part.model_copy(update={"state": state})),
                                                                part_id))
        if isinstance(message, AssistantMessage) and message.completed_at is None:
            message = message.model_copy(update={
                "finish": "aborted", "completed_at": ended,
                "error": MessageError(kind="aborted", message=f"The run was {INTERRUPTED}.")})
        db.execute("UPDATE messages SET data = ?, owner = NULL WHERE id = ?", (_json(message), message_id))
        return 1

    def _owner_of(self, message: UserMessage | AssistantMessage) -> str | None:
        unfinished = isinstance(message, AssistantMessage) and message.completed_at is None
        return self.owner if unfinished else None

    def _one(self, sql: str, args: tuple[Any, ...]) -> Any:
        row = self._db().execute(sql, args).fetchone()
        return None if row is None else row[0]

    # ------------------------------------------------------------------------------------------ sessions

    def create_session(self, session: Session) -> None:
        self._db().execute(
            "INSERT INTO sessions (id, parent_id, directory, updated_at, data) VALUES (?, ?, ?, ?, ?)",
            (session.id, session.parent_id, _text(session.directory), session.updated_at, _json(session)),
        )

    def update_session(self, session: Session) -> None:
        """Replace the stored session.

        Raises:
            NotFoundError: no session has this id.
        """
        cursor = self._db().execute(
            "UPDATE sessions SET parent_id = ?, directory = ?, updated_at = ?, data = ? WHERE id = ?",
            (session.parent_id, _text(session.directory), session.updated_at, _json(session), session.id),
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
            args.append(_text(str(directory)))
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

    def has_messages(self, session_id: str) -> bool:
        return self._one("SELECT 1 FROM messages WHERE session_id = ? LIMIT 1", (session_id,)) is not None

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
                "INSERT INTO messages (id, session_id, data, owner) VALUES (?, ?, ?, ?)",
                (message.id, message.session_id, _json(message), self._owner_of(message)),
            )

    def update_message(self, message: UserMessage | AssistantMessage) -> None:
        """Replace the stored message.

        Raises:
            NotFoundError: no message has this id.
        """
        cursor = self._db().execute(
            "UPDATE messages SET data = ?, owner = ? WHERE id = ?",
            (_json(message), self._owner_of(message), message.id),
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
        data = _json(part)
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
        rows = [(p.id, p.session_id, p.message_id, _json(p)) for p in parts]
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
        try:
            data = _todos_adapter.dump_json(list(todos)).decode()
        except PydanticSerializationError:
            data = _text(json.dumps(_todos_adapter.dump_python(list(todos), mode="json"), ensure_ascii=False))
        data = secrets.active().redact_json(data)
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
        """Close the file; calling it again is harmless.

        The owner lock is released last: what this store left unfinished becomes a leftover for the next
        store opened on the file to finalise, and nothing here can write it any more.
        """
        with self._connections_lock:
            self._closed = True
            connections = list(self._connections)
        for db in connections:
            db.close()
        self._release()

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


def _json(model: BaseModel) -> str:
    """The row text of a model; an unpaired surrogate, which UTF-8 cannot encode, becomes U+FFFD. Known secret
    values are redacted here, where every row is made, so nothing stored holds a key (see `secrets`)."""
    try:
        text = model.model_dump_json()
    except PydanticSerializationError:
        # surrogates, which UTF-8 cannot encode: the rare slow path (the usual one must stay one call)
        text = _text(json.dumps(model.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":")))
    return secrets.active().redact_json(text)


def _text(value: str) -> str:
    """Split surrogate pairs joined into their character, lone halves replaced by U+FFFD."""
    if _UNPAIRED.search(value) is None:
        return value
    return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _hold_owner_lock(lock: Path, owner: str) -> int | None:
    """Create and lock this owner's file; the descriptor stays open (and locked) until the store closes."""
    _LIVE_OWNERS.add(owner)
    if fcntl is None:
        return None
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BaseException:
        os.close(fd)
        _LIVE_OWNERS.discard(owner)
        raise
    return fd


def _release_owner(owner: str, lock: Path, fd: int | None, pid: int) -> None:
    """Unlink the lock file before letting go of it: a store that finds no file knows its owner is gone.

    Only in the process that opened the store: a forked copy (the kernel's sandbox) that lets go of its
    inherited store must not unlink the lock its parent still holds.
    """
    _LIVE_OWNERS.discard(owner)
    if fd is None:
        return
    if os.getpid() == pid:
        _unlink(lock)
    os.close(fd)


def _owner_alive(folder: Path, owner: str) -> bool:
    """Whether the store `owner` is still open somewhere: in this process, or holding its lock file."""
    if owner in _LIVE_OWNERS:
        return True
    if not owner:
        return False
    if fcntl is None:
        return True
    try:
        fd = os.open(folder / f"{owner}.lock", os.O_RDWR)
    except FileNotFoundError:
        return False  # closed cleanly, or never got as far as locking
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def _unlink(path: Path) -> None:
    with suppress(FileNotFoundError):
        path.unlink()


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
