"""Opening the store (its SQLite file, or its schema on a PostgreSQL server): the owner lock taken, the schema
migrated, leftovers finalised, and the lock released last on `close()`."""


from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import cast

from ... import id as ids
from .checkpoints import StoreCheckpoints
from .journaling import Journaling
from .owners import INTERRUPTED, FileOwnerLock, finalise_leftovers
from .postgres import PostgresOwnerLock
from .reads import StoreReads
from .rows import log
from .schema import MIGRATIONS as _MIGRATIONS
from .schema import SCHEMA_VERSION, migrate
from .writes import StoreWrites

__all__ = ["INTERRUPTED", "SCHEMA_VERSION", "_MIGRATIONS", "SessionStore"]


class SessionStore(StoreReads, StoreWrites, StoreCheckpoints):
    """The store of one workspace (a SQLite file, or a schema on a PostgreSQL server); every method is safe to
    call from any thread."""

    def __init__(self, path: str | Path, journaling: Journaling | None = None, *, url: str | None = None,
                 url_source: str = "store.url") -> None:
        """Args:
            path: the SQLite file; with `url`, its name (without `.sqlite`) names the store on the server.
            journaling: the journal mode and where its setting came from; by default chosen from the
                filesystem the file is on (`journaling.py`).
            url: a PostgreSQL server to keep the store in instead of the file (`postgres.py`).
            url_source: where `url` came from (`store.url`, `$OPENCODE_NB_STORE_URL`), for its errors.

        Raises:
            StoreUrlError: `url` cannot be used; the message names the setting and what to do.
        """
        super().__init__(path, journaling, url=url, url_source=url_source)
        self.owner = ids.ascending("run")
        """This store's id as the writer of unfinished messages (see `owners.py`)."""
        self._owner_lock: FileOwnerLock | PostgresOwnerLock
        if self.server is not None:
            self._owner_lock = PostgresOwnerLock(self.server, self.owner)
        else:
            real = self.path.resolve()  # two kernels reaching the file through different links share one folder
            self._owner_lock = FileOwnerLock(real.with_name(real.name + ".owners"), self.owner)
        try:
            if self.server is None:
                self.journaling.switch(cast(sqlite3.Connection, self._db()))  # WAL, or a rollback journal
            with self._tx() as db:  # IMMEDIATE: two kernels opening a new file at once migrate it once
                migrate(db, self.where, self.dialect)
            self._finalise_leftovers()
        except BaseException:
            self.close()
            raise

    def _finalise_leftovers(self) -> None:
        """Register this store as an owner and finish what dead owners left unfinished (one transaction,
        so two stores opening at once never finalise the same rows twice)."""
        lock = self._owner_lock
        with self._tx() as db:
            finalised, gone = finalise_leftovers(db, self.where, self.owner, lambda other: lock.alive(db, other))
        for owner in filter(None, gone):  # after the commit: a rolled-back finalisation keeps its evidence
            lock.gone(owner)
        if finalised:
            log.warning("%s: marked %d messages left unfinished by a process that ended as interrupted",
                        self.where, finalised)

    def close(self) -> None:
        """Close the file; calling it again is harmless.

        The owner lock is released last: what this store left unfinished becomes a leftover for the next
        store opened on the file to finalise, and nothing here can write it any more.
        """
        self._close_connections()
        self._owner_lock.release()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
