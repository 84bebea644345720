"""How the store's SQLite file is journaled and its writers kept apart, chosen from the filesystem it is on.

On local disk the store uses WAL: readers never block the writer, and a commit costs no fsync
(`synchronous=NORMAL`; a power cut may lose the last commits, never corrupt the file).

On NFS, CIFS/SMB, Lustre, GPFS, CephFS, FUSE and other shared filesystems it never does. WAL keeps its index
in a `-shm` file every process maps into memory, which SQLite's documentation says does not work over a
network filesystem, and which a FUSE filesystem may not map coherently either. Putting the file on local disk
instead is no answer on a hub: a Kubernetes pod's disk goes with the pod, and with it every session. So there
the store uses SQLite's rollback journal, in its default form (`journal_mode=DELETE`: the mode every
connection gets from the file itself, so a connection that sets nothing, the `sqlite3` shell included, agrees
with ours; TRUNCATE would save an unlink per commit but every connection would have to ask for it), with
`synchronous=FULL` so a commit is on the server before it returns (a crashed client or server loses no
committed turn, and the file stays whole).

A rollback journal lets one writer in at a time, as WAL does, but a writer must also wait for the readers to
finish before it commits, and SQLite's wait for a lock is a poll with growing sleeps: with several kernels of
one person writing at once, a writer can lose that race until its timeout ends in "database is locked". So in
this mode writers queue first on a lock of ours: an exclusive `flock` on `<store>.owners/writer.lock`, beside
the owner locks (`owners.py`), held from `BEGIN IMMEDIATE` to `COMMIT` or around a single writing statement.
The OS drops it when a process dies, SIGKILL included, and SQLite's hot journal rolls back what that process
left half-written, so a killed kernel leaves the others and the file intact. SQLite's own locks stay in force
underneath: they are what keeps writers on two hosts apart, where the network's locks reach. A write that
still finds the file busy (a reader holding it past the timeout, a writer on another host) is tried again
before an error says which file stayed locked for how long. Reads take no lock of ours.

The setting `store.journal` (or `OPENCODE_NB_STORE_JOURNAL`) overrides the choice: `wal` or `rollback`
anywhere, `auto` (the default) as above.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import threading
import time
import weakref
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any, Literal, TypeVar, cast, get_args

from ...errors import OpencodeNbError
from .filesystem import Filesystem, Kind, detect

try:
    import fcntl
except ImportError:  # Windows: no flock; SQLite's own locks alone
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

JournalSetting = Literal["auto", "wal", "rollback"]
Mode = Literal["wal", "rollback"]
JOURNAL_ENV = "OPENCODE_NB_STORE_JOURNAL"
"""Overrides `store.journal` for every store this process opens."""

BUSY_TIMEOUT_S = 30.0
"""How long SQLite itself waits for another connection's lock on each try."""
WRITE_PATIENCE_S = 120.0
"""How long a statement that finds the file busy in SQLite's lock (after ours: a reader past the timeout, a
writer on another host) keeps trying before it fails with an error naming the file."""
SWITCH_TIMEOUT_MS = 1000
"""How long opening a store waits to take a WAL file out of WAL: another process still having it open in WAL
keeps it there, and this store works on in WAL until a later open finds the file free."""

C = TypeVar("C", bound=sqlite3.Connection)


def setting_from(env: Mapping[str, str], configured: str) -> tuple[JournalSetting, str]:
    """The journal setting in force and where it came from: `$OPENCODE_NB_STORE_JOURNAL` over `store.journal`.

    Raises:
        OpencodeNbError: the variable holds something else than auto, wal or rollback.
    """
    value = (env.get(JOURNAL_ENV) or "").strip().lower()
    if value:
        if value not in get_args(JournalSetting):
            raise OpencodeNbError(f"${JOURNAL_ENV}={env.get(JOURNAL_ENV)!r} is not a journal mode: write auto "
                                  "(WAL on local disk, a rollback journal on network and FUSE filesystems), "
                                  "wal or rollback")
        return cast(JournalSetting, value), f"${JOURNAL_ENV}"
    return cast(JournalSetting, configured), "store.journal"


class Journaling:
    """The journal mode and writer locking of one store file, and the notice that says what they are and why.

    Args:
        path: the store's SQLite file.
        setting: `auto`, `wal` or `rollback`.
        source: where the setting came from, for the notice (`store.journal`, `$OPENCODE_NB_STORE_JOURNAL`).
        filesystem: what `filesystem.detect` found, when the caller has it already (tests pass their own).
    """

    def __init__(self, path: str | Path, setting: JournalSetting = "auto", *, source: str = "store.journal",
                 filesystem: Filesystem | None = None) -> None:
        self.path = Path(path)
        self.setting: JournalSetting = setting
        self.source = source
        self.filesystem = filesystem if filesystem is not None else detect(self.path)
        self.mode: Mode = ("rollback" if self.filesystem.kind.networked else "wal") if setting == "auto" else setting
        """The mode chosen; `in_force` is the one the file is in once a store has opened it."""
        self.in_force: Mode | None = None
        real = self.path.resolve()
        self.writer_lock = real.with_name(real.name + ".owners") / "writer.lock"
        """Where writers queue in rollback mode (beside the owner locks, on the store's own filesystem)."""

    @classmethod
    def for_file(cls, path: str | Path, env: Mapping[str, str] | None = None, configured: str = "auto") -> Journaling:
        """The journaling of `path` under `$OPENCODE_NB_STORE_JOURNAL` (of `env`, else this process's) over
        `configured`: what a store opened without a workspace's setting uses."""
        setting, source = setting_from(os.environ if env is None else env, configured)
        return cls(path, setting, source=source)

    # ------------------------------------------------------------------------------------------ connections

    def connection_class(self, base: type[C]) -> type[C]:
        """The class to open connections with: `base` in WAL mode, `base` with writers queued in rollback mode."""
        if self.mode == "wal":
            return base
        return cast("type[C]", _serialised(base))

    def configure(self, db: sqlite3.Connection) -> None:
        """Settings of every new connection (the journal mode itself lives in the file: `switch` sets it)."""
        if self.mode == "wal":
            db.execute("PRAGMA synchronous=NORMAL")
            return
        db.execute("PRAGMA synchronous=FULL")
        if isinstance(db, SerialisedWrites):
            db._writer = _WriterLock(self.writer_lock) if fcntl is not None else None
            db._label = str(self.path)

    def connect(self) -> sqlite3.Connection:
        """A short-lived connection of another part of the program to the same file, in the same mode."""
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                             factory=self.connection_class(sqlite3.Connection))
        try:
            self.configure(db)
        except BaseException:
            db.close()
            raise
        return db

    def switch(self, db: sqlite3.Connection) -> Mode:
        """Put the file in the chosen mode when the store opens it; returns the mode it is in."""
        if self.mode == "wal":
            found = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]  # kept in the file: once is enough
        else:
            db.execute(f"PRAGMA busy_timeout={SWITCH_TIMEOUT_MS}")
            try:
                # once, without our retries: a file held in WAL elsewhere stays so (below)
                found = sqlite3.Connection.execute(db, "PRAGMA journal_mode=DELETE").fetchone()[0]
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                found = "wal"
                log.warning("%s: another process has the session store open in WAL mode, so it stays in WAL "
                            "until a store opens it while none does", self.path)
            finally:
                db.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        self.in_force = "wal" if str(found).lower() == "wal" else "rollback"
        return self.in_force

    # ------------------------------------------------------------------------------------------ notice

    def notice(self) -> str:
        """One line for `%agent config` and `opencode-nb config`: the filesystem, the mode and why."""
        fs = self.filesystem
        where = f"Session store: {self.path} is on {fs.describe()}"
        mode = self.in_force or self.mode
        if self.setting == "auto":
            if mode == "wal" and fs.kind.networked:
                return (f"{where}: WAL should be off there but another process still has the file open in WAL; "
                        "close the other kernels and the next one to open it switches it to a rollback journal.")
            if fs.kind.networked:
                return (f"{where}: WAL is off there (SQLite's WAL is unsafe on network and FUSE filesystems); "
                        "using a rollback journal with one writer at a time. Set store.journal (or "
                        f"${JOURNAL_ENV}) to choose otherwise, or put the data dir on a lasting local disk "
                        "(OPENCODE_NB_DATA_DIR).")
            if fs.kind is Kind.UNKNOWN:
                return f"{where}, which could not be told apart from local disk: using WAL. Set store.journal: " \
                       "rollback if it is a network or FUSE filesystem."
            return f"{where}: using WAL (readers never wait for a writer)."
        if mode == "wal" and fs.kind.networked:
            return (f"{where}, but {self.source} says wal: SQLite's WAL is unsafe there, more so with several "
                    f"kernels or hosts on one file. Set {self.source} to auto (or rollback) unless this "
                    f"filesystem is known to share memory maps and locks correctly.")
        if mode == "rollback":
            return (f"{where}: using a rollback journal with one writer at a time, as {self.source} says "
                    f"({'auto would do the same here' if fs.kind.networked else 'auto would use WAL here'}).")
        return f"{where}: using WAL, as {self.source} says."


class SerialisedWrites(sqlite3.Connection):
    """A connection whose writes queue on the store's writer lock before they reach SQLite's (rollback mode).

    Statements are told apart by their first word: `BEGIN IMMEDIATE`/`EXCLUSIVE` takes the lock until
    `COMMIT`/`ROLLBACK`; a writing statement outside a transaction holds it while it runs; a plain `BEGIN`
    (a snapshot of reads) and every read take none. A deferred transaction that reads and then writes never
    waits for our lock while it holds SQLite's shared lock (the writer it waits for would wait for it).
    """

    _writer: _WriterLock | None = None
    _label = ""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        lock = self._writer
        verb = _verb(sql)
        if lock is None or verb == "read":
            return self._patiently(sql, parameters)
        if verb == "begin-write":
            lock.acquire(self._label)
            try:
                return self._patiently(sql, parameters)
            except BaseException:
                lock.release()
                raise
        if verb == "end":
            try:
                return super().execute(sql, parameters)
            finally:
                if lock.depth and not self.in_transaction:
                    lock.release()
        if self.in_transaction:  # inside BEGIN IMMEDIATE (lock held) or a deferred snapshot (see above)
            return super().execute(sql, parameters)
        lock.acquire(self._label)
        try:
            return self._patiently(sql, parameters)
        finally:
            lock.release()

    def _patiently(self, sql: str, parameters: Any) -> sqlite3.Cursor:
        """Try again a statement that found the file busy, when nothing of it happened (outside a transaction)."""
        deadline = time.monotonic() + WRITE_PATIENCE_S
        while True:
            try:
                return super().execute(sql, parameters)
            except sqlite3.OperationalError as exc:
                if not _busy(exc) or self.in_transaction:
                    raise
                if time.monotonic() >= deadline:
                    raise sqlite3.OperationalError(
                        f"the session store {self._label} stayed locked by another process for "
                        f"{WRITE_PATIENCE_S:.0f} s; a kernel or a process on another host may hang while "
                        "writing it: stop it, or restart this kernel") from exc
                time.sleep(0.05)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        super().close()


def _serialised(base: type[sqlite3.Connection]) -> type[SerialisedWrites]:
    if issubclass(base, SerialisedWrites):
        return base
    found = _CLASSES.get(base)
    if found is None:
        found = _CLASSES[base] = type(f"Serialised{base.__name__}", (SerialisedWrites, base), {})
    return found


_CLASSES: dict[type[sqlite3.Connection], type[SerialisedWrites]] = {}


WRITES_AFTER_WITH = re.compile(r"\b(INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)
"""A common table expression may lead into a write (`WITH old AS (...) DELETE ...`): then it is one. A word in a
string literal counts too, which only takes the writers' lock when it was not needed."""


def _verb(sql: str) -> Literal["read", "write", "begin-write", "end"]:
    head = sql.lstrip()[:24].upper()
    if head.startswith("WITH"):
        return "write" if WRITES_AFTER_WITH.search(sql) else "read"
    if head.startswith(("SELECT", "EXPLAIN")):
        return "read"
    if head.startswith("BEGIN"):
        return "begin-write" if "IMMEDIATE" in head or "EXCLUSIVE" in head else "read"
    if head.startswith(("COMMIT", "END", "ROLLBACK")) and "TO" not in head.split():
        return "end"
    if head.startswith("PRAGMA"):  # settings and the schema version (migrated inside BEGIN IMMEDIATE)
        return "read"
    return "write"


def _busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc)
    return "database is locked" in text or "database is busy" in text


_HELD = threading.local()
"""The writer locks this thread holds (`paths`), through whichever of its connections."""


class _WriterLock:
    """One connection's hold on the writer lock file: `flock` per open file, so threads and processes queue alike."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.depth = 0
        self._fd: int | None = None
        self._pid = 0
        self._broken = False
        self._closer: weakref.finalize[Any, Any] | None = None

    def acquire(self, label: str) -> None:
        if self.depth:
            self.depth += 1
            return
        fd = self._file()
        if fd is not None:
            self._wait(fd, label)
        self.depth = 1

    def _wait(self, fd: int, label: str) -> None:
        """Queue in the kernel's wait for the lock (a blocking `flock`), not in a poll.

        Polling with sleeps, as SQLite's busy handler does, is unfair: with 8 kernels on a FUSE mount the p95 of
        an append was 70-180 ms and single writes waited seconds, where the kernel's queue gave 31-36 ms and at
        most ~110 ms (`bench/bench_store_kernels.py`). The wait has no timeout: the lock is held for one
        transaction at a time, and a holder that dies lets go of it.
        """
        assert fcntl is not None
        held = _HELD.__dict__.setdefault("paths", set())
        if self.path in held:
            raise sqlite3.OperationalError(
                f"this thread already writes the session store {label} through another connection: it would wait "
                "for itself")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:  # this filesystem has no flock: SQLite's own locks alone
            self._give_up(exc)
            return
        held.add(self.path)

    def release(self) -> None:
        self.depth -= 1
        if self.depth == 0 and self._fd is not None and fcntl is not None and not self._broken:
            _HELD.__dict__.setdefault("paths", set()).discard(self.path)
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _file(self) -> int | None:
        if self._broken:
            return None
        if self._fd is not None and self._pid != os.getpid():
            # a forked child shares the parent's open file, and so its lock: it gets one of its own (closing
            # its copy of the parent's leaves the parent's lock alone: flock holds while any copy is open)
            self.close()
        if self._fd is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            except OSError as exc:
                self._give_up(exc)
                return None
            self._pid = os.getpid()
            self._closer = weakref.finalize(self, _close_quietly, self._fd)
        return self._fd

    def _give_up(self, exc: OSError) -> None:
        log.warning("the session store's writer lock %s cannot be used (%s): writers rely on SQLite's own "
                    "locks alone", self.path, exc)
        self._broken = True
        self.close()

    def close(self) -> None:
        if self.depth:
            _HELD.__dict__.setdefault("paths", set()).discard(self.path)
            self.depth = 0
        if self._closer is not None:
            self._closer()
        self._fd, self._closer = None, None


def _close_quietly(fd: int) -> None:
    with suppress(OSError):
        os.close(fd)
