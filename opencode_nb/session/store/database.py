"""Opening the SQLite file: the owner lock taken, the schema migrated, leftovers finalised, and the lock
released last on `close()`."""


from __future__ import annotations

import os
import weakref
from pathlib import Path

from ... import id as ids
from .checkpoints import StoreCheckpoints
from .owners import INTERRUPTED, finalise_leftovers, hold_owner_lock, release_owner, unlink
from .reads import StoreReads
from .rows import log
from .schema import MIGRATIONS as _MIGRATIONS
from .schema import SCHEMA_VERSION, migrate
from .writes import StoreWrites

__all__ = ["INTERRUPTED", "SCHEMA_VERSION", "_MIGRATIONS", "SessionStore"]


class SessionStore(StoreReads, StoreWrites, StoreCheckpoints):
    """The SQLite file of one workspace; every method is safe to call from any thread."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        self.owner = ids.ascending("run")
        """This store's id as the writer of unfinished messages (see `owners.py`)."""
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
