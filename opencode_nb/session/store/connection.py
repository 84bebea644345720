"""The session store's connections to its SQLite file: one per thread, and the transactions on them.

Every write is one transaction (a single statement, or BEGIN IMMEDIATE … COMMIT around several), so a
killed kernel leaves either the old or the new version of a part, never half of one. WAL mode lets a second
kernel or the CLI read while a notebook writes, and `synchronous=NORMAL` makes a commit cost no fsync (a
power cut may lose the last commits, never corrupt the file). On network and FUSE filesystems the store uses
a rollback journal instead, its writers queued on a lock of ours (`journaling.py` says why).

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

from .dialect import POSTGRES, SQLITE, Database
from .journaling import Journaling
from .postgres import Postgres


class StoreConnections:
    """The connections of one store (a SQLite file, or a schema on a PostgreSQL server); the base the store's
    reads and writes are built on."""

    def __init__(self, path: str | Path, journaling: Journaling | None = None, *, url: str | None = None,
                 url_source: str = "store.url") -> None:
        """Args:
            path: the SQLite file; with `url`, its name (without `.sqlite`) names the store on the server.
            url: a PostgreSQL server to keep the store in instead (`postgres.py`).
            url_source: the setting `url` came from, for the errors a person reads.
        """
        self.path = Path(path)
        self.server: Postgres | None = None
        """The PostgreSQL server the store is on; None for a SQLite file."""
        self.dialect = SQLITE
        if url is not None:
            self.server = Postgres(url, self.path.stem, source=url_source)
            self.dialect = POSTGRES
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.where = str(self.path) if self.server is None else self.server.where
        """The store as messages name it (a PostgreSQL URL without its password)."""
        self.journaling = journaling if journaling is not None else Journaling.for_file(self.path)
        """WAL on local disk, a rollback journal with queued writers on network and FUSE filesystems."""
        self._local = threading.local()
        self._connections: weakref.WeakSet[Any] = weakref.WeakSet()
        """Every thread's connection, for `close()`; a thread's goes (and closes) when the thread ends."""
        self._connections_lock = threading.Lock()
        self._closed = False

    def _db(self) -> Database:
        """This thread's connection, opened on first use."""
        db: Database | None = getattr(self._local, "db", None)
        if db is not None:
            return db
        with self._connections_lock:
            if self._closed:
                raise sqlite3.ProgrammingError(f"the session store {self.where} is closed")
            db = self._open()
            self._connections.add(db)
        self._local.db = db
        return db

    def _open(self) -> Database:
        if self.server is not None:
            return self.server.connect()
        # isolation_level=None: we open transactions ourselves; timeout: how long to wait for another writer
        db = sqlite3.connect(  # the journal mode decides the class and the settings: see journaling.py
            self.path, timeout=30, isolation_level=None, check_same_thread=False,
            factory=self.journaling.connection_class(_Connection),
        )
        try:
            self.journaling.configure(db)
            db.execute("PRAGMA foreign_keys=ON")
        except BaseException:
            db.close()
            raise
        return db

    def side_connection(self) -> Database:
        """A short-lived connection of another part of the program to the same store (the notebook's kept
        turns), which the caller closes: the same file in the same journal mode, or the same schema."""
        if self.server is not None:
            return self.server.connect()
        return self.journaling.connect()

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        db = self._db()
        db.execute(self.dialect.begin_write)  # take the write lock now: a read-then-write upgrade could deadlock
        try:
            if self.server is not None:
                self.server.lock_writes(db)
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
    def _snapshot(self) -> Iterator[Any]:
        """Several reads that see one committed state, however other writers interleave."""
        db = self._db()
        db.execute(self.dialect.begin_read)
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
