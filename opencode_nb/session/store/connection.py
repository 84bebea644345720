"""The session store's connections to its SQLite file: one per thread, and the transactions on them.

Every write is one transaction (a single statement, or BEGIN IMMEDIATE … COMMIT around several), so a
killed kernel leaves either the old or the new version of a part, never half of one. WAL mode lets a second
kernel or the CLI read while a notebook writes, and `synchronous=NORMAL` makes a commit cost no fsync (a
power cut may lose the last commits, never corrupt the file).

Each thread gets its own connection (`bench/bench_store.py` compares it with one connection behind a
lock). Two threads appending at once ran as fast either way, within the noise of a busy 2-core machine;
but behind a lock, an append from the loop waited out a whole 10k-part history load in another thread
(about 170 ms), where with its own connection it waits a fraction of a millisecond: WAL readers never
block the writer. SQLite still lets one writer in at a time, so concurrent writes queue, never
interleave. A thread's connection closes when it is collected after the thread ends, and `close()`
closes every one still open.
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class StoreConnections:
    """The connections of one store file; the base the store's reads and writes are built on."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._connections: weakref.WeakSet[_Connection] = weakref.WeakSet()
        """Every thread's connection, for `close()`; a thread's goes (and closes) when the thread ends."""
        self._connections_lock = threading.Lock()
        self._closed = False

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

    def _close_connections(self) -> None:
        """Close every thread's connection; any later use raises instead of opening a new one."""
        with self._connections_lock:
            self._closed = True
            connections = list(self._connections)
        for db in connections:
            db.close()


class _Connection(sqlite3.Connection):
    """A connection that can be weakly referenced, so the store can close the ones still open."""
