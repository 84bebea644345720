"""Leftovers of a dead process: who owns each unfinished message, and finishing what a dead owner left.

A kernel killed mid-run leaves its assistant message unfinished and its tool parts pending or running, and
nothing it owned will ever finish them. Each open store is therefore an *owner*: it holds an exclusive
`flock` on its own file in `<store>.owners/` for as long as it is open, and every assistant message it
writes while unfinished carries its id (the `owner` column, cleared once the message completes). The OS
drops the lock the moment the process dies, SIGKILL included. When a store is opened, every other owner
whose lock can be taken is dead: its unfinished messages end as "aborted" and their pending or running tool
parts as errors, both saying "interrupted: the process running it ended". An owner whose lock is held
(another kernel on the same file, or another store open in this process) is left alone, however old its
run. A store closed (or a process that exits) with a run unfinished leaves it to the next store opened
likewise. Rows from before owners were recorded have the owner '' and count as dead. Where `flock` does not
exist (Windows), other owners always count as alive. On PostgreSQL the lock is an advisory lock of the server
instead of a file (`postgres.PostgresOwnerLock`); the finalising is the same.
"""

from __future__ import annotations

import os
import socket
import weakref
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from ..models import (
    AssistantMessage,
    MessageError,
    ToolErrored,
    ToolPart,
    ToolPending,
    ToolRunning,
    message_adapter,
    now,
    part_adapter,
)
from .rows import first_line, log, row_json

try:
    import fcntl
except ImportError:  # Windows: no flock, so no owner can be proven dead
    fcntl = None  # type: ignore[assignment]

INTERRUPTED = "interrupted: the process running it ended"
"""What a message or tool call left unfinished by a dead process says once a new store finalises it."""

_LIVE_OWNERS: set[str] = set()
"""Owners open in this process. Checked before the lock file, so a run of this process is never finalised,
even where a file system's `flock` does not exclude two descriptors of one process."""


def live_here(owner: str, live: bool = True) -> None:
    """Count `owner` as open in this process (or no longer), whatever its lock is."""
    if live:
        _LIVE_OWNERS.add(owner)
    else:
        _LIVE_OWNERS.discard(owner)


def finalise_leftovers(db: Any, path: Path | str, owner: str, alive: Callable[[str], bool]) -> tuple[int, list[str]]:
    """Register `owner` and finish what dead owners left unfinished, inside the caller's transaction (so
    two stores opening at once never finalise the same rows twice). `alive(other)` asks the lock of another
    owner (its lock file, or its advisory lock on the server); owners open in this process are never asked.

    Returns:
        How many messages were finalised, and the dead owners whose rows went: their lock files are for the
        caller to unlink once the transaction has committed.
    """
    finalised = 0
    gone: list[str] = []
    db.execute("INSERT INTO owners (id, pid, host, opened_at) VALUES (?, ?, ?, ?)",
               (owner, os.getpid(), socket.gethostname(), now()))
    owners = {row[0] for row in db.execute("SELECT DISTINCT owner FROM messages WHERE owner IS NOT NULL")}
    owners |= {row[0] for row in db.execute("SELECT id FROM owners")}
    for other in sorted(owners - {owner}):
        if other in _LIVE_OWNERS or (other and alive(other)):
            continue
        rows = db.execute("SELECT id, data FROM messages WHERE owner = ?", (other,)).fetchall()
        for message_id, data in rows:
            finalised += _finalise_message(db, path, message_id, data)
        db.execute("DELETE FROM owners WHERE id = ?", (other,))
        gone.append(other)
    return finalised, gone


def _finalise_message(db: Any, path: Path | str, message_id: str, data: str) -> int:
    try:
        message = message_adapter.validate_json(data)
    except ValueError as exc:
        log.warning("leaving unreadable message row %s in %s as it is: %s", message_id, path, first_line(exc))
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
        db.execute("UPDATE parts SET data = ? WHERE id = ?", (row_json(part.model_copy(update={"state": state})),
                                                            part_id))
    if isinstance(message, AssistantMessage) and message.completed_at is None:
        message = message.model_copy(update={
            "finish": "aborted", "completed_at": ended,
            "error": MessageError(kind="aborted", message=f"The run was {INTERRUPTED}.")})
    db.execute("UPDATE messages SET data = ?, owner = NULL WHERE id = ?", (row_json(message), message_id))
    return 1


class FileOwnerLock:
    """This store's owner lock beside a SQLite file: `<store>.owners/<owner>.lock`, held with `flock`."""

    def __init__(self, owners_dir: Path, owner: str) -> None:
        self.owners_dir = owners_dir
        lock = owners_dir / f"{owner}.lock"
        self.release = weakref.finalize(self, release_owner, owner, lock, hold_owner_lock(lock, owner), os.getpid())
        """Let go of the lock (once; also when the store is collected)."""

    def alive(self, db: Any, other: str) -> bool:
        return owner_alive(self.owners_dir, other)

    def gone(self, other: str) -> None:
        """After the finalising transaction committed: a rolled-back one keeps its evidence."""
        unlink(self.owners_dir / f"{other}.lock")


def hold_owner_lock(lock: Path, owner: str) -> int | None:
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


def release_owner(owner: str, lock: Path, fd: int | None, pid: int) -> None:
    """Unlink the lock file before letting go of it: a store that finds no file knows its owner is gone.

    Only in the process that opened the store: a forked copy (the kernel's sandbox) that lets go of its
    inherited store must not unlink the lock its parent still holds.
    """
    _LIVE_OWNERS.discard(owner)
    if fd is None:
        return
    if os.getpid() == pid:
        unlink(lock)
    os.close(fd)


def owner_alive(folder: Path, owner: str) -> bool:
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


def unlink(path: Path) -> None:
    with suppress(FileNotFoundError):
        path.unlink()
