"""Sessions, messages, parts and todos in one SQLite file per workspace.

Rows hold the whole model as JSON plus the few columns we query by. `SessionStore` is the one class callers
use; it is put together from modules with one job each:

- `store_connection`: a connection per thread, transactions, why WAL (every write is one transaction);
- `store_schema`: the tables and the migrations that bring an older file up to them;
- `store_reads` / `store_writes`: the queries, each half a base class of `SessionStore`;
- `store_checkpoints`: file checkpoints per turn, and the turns an undo hid;
- `store_owners`: the owner lock each open store holds, and finishing what a dead process left unfinished;
- `store_rows`: model to row text (surrogates mended, secrets redacted) and back.

This module opens the file: it takes the owner lock, migrates, finalises leftovers, and releases the lock
last on `close()`.
"""

from __future__ import annotations

import os
import weakref
from pathlib import Path

from .. import id as ids
from .store_checkpoints import StoreCheckpoints
from .store_owners import INTERRUPTED, finalise_leftovers, hold_owner_lock, release_owner, unlink
from .store_reads import StoreReads
from .store_rows import log
from .store_schema import MIGRATIONS as _MIGRATIONS
from .store_schema import SCHEMA_VERSION, migrate
from .store_writes import StoreWrites

__all__ = ["INTERRUPTED", "SCHEMA_VERSION", "_MIGRATIONS", "SessionStore"]
"""`_MIGRATIONS` stays importable from here for the tests that build an old file by hand."""


class SessionStore(StoreReads, StoreWrites, StoreCheckpoints):
    """The SQLite file of one workspace; every method is safe to call from any thread."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        self.owner = ids.ascending("run")
        """This store's id as the writer of unfinished messages (see `store_owners`)."""
        real = self.path.resolve()  # two kernels reaching the file through different links share one folder
        self._owners_dir = real.with_name(real.name + ".owners")
        lock = self._owners_dir / f"{self.owner}.lock"
        self._release = weakref.finalize(self, release_owner, self.owner, lock, hold_owner_lock(lock, self.owner),
                                         os.getpid())
        try:
            self._db().execute("PRAGMA journal_mode=WAL")  # kept in the file: once is enough
            with self._tx() as db:  # IMMEDIATE: two kernels opening a new file at once migrate it once
                migrate(db, self.path)
            self._finalise_leftovers()
        except BaseException:
            self.close()
            raise

    def _finalise_leftovers(self) -> None:
        """Register this store as an owner and finish what dead owners left unfinished (one transaction,
        so two stores opening at once never finalise the same rows twice)."""
        with self._tx() as db:
            finalised, gone = finalise_leftovers(db, self.path, self._owners_dir, self.owner)
        for owner in filter(None, gone):  # after the commit: a rolled-back finalisation keeps its evidence
            unlink(self._owners_dir / f"{owner}.lock")
        if finalised:
            log.warning("%s: marked %d messages left unfinished by a process that ended as interrupted",
                        self.path, finalised)

    def close(self) -> None:
        """Close the file; calling it again is harmless.

        The owner lock is released last: what this store left unfinished becomes a leftover for the next
        store opened on the file to finalise, and nothing here can write it any more.
        """
        self._close_connections()
        self._release()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
