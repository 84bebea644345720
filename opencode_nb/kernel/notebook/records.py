"""The journal's turns kept in the project's store, so an undo after a kernel restart still finds the cells.

One row per turn (`notebook_turns`, schema step 3 -> 4 of the session store): the notebook it changed, its
session and checkpoint turn (`message_id`), whether it stands or which undo took it back, and its changes as
JSON, cells by id with the sources and outputs needed to take them back. A turn's row is written again each
time the turn changes, so a kernel that dies mid-turn leaves what it had done so far.

A new kernel for the same notebook (same project, same notebook path) reads the rows on first use. Live
bindings are not kept: their values lived in the old kernel; a run read back is a `GoneRun` naming what it
bound, so the undo can say those names went with that kernel.

Each call opens its own short connection to the store (`SessionStore.side_connection`): its file in its journal
mode (WAL on local disk, where it never blocks the session store's readers; on a network filesystem a rollback
journal whose writers queue on the store's writer lock), or its schema on the PostgreSQL server. The SQL is what
both take (`?` placeholders, `ON CONFLICT … DO UPDATE`).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ...errors import OpencodeNbError
from ...session.store.dialect import Database
from .journal import KEEP_TURNS, Deleted, Files, GoneRun, Inserted, LiveRun, Reinsert, Replaced, Restored, Turn, Undone

if TYPE_CHECKING:
    from ...session.store.database import SessionStore
    from ..python.live import LiveRunner

log = logging.getLogger(__name__)


def _database_errors() -> tuple[type[Exception], ...]:
    """What a failed statement raises on either backend (psycopg only when it is installed); a server that
    cannot be reached raises the store's own error (OpencodeNbError)."""
    try:
        import psycopg
    except ImportError:
        return (sqlite3.Error, OpencodeNbError)
    return (sqlite3.Error, psycopg.Error, OpencodeNbError)

_KINDS: dict[str, type[Any]] = {
    "inserted": Inserted, "replaced": Replaced, "deleted": Deleted, "files": Files, "live": GoneRun,
    "reinsert": Reinsert, "restored": Restored,
}
_KIND_OF = {Inserted: "inserted", Replaced: "replaced", Deleted: "deleted", Files: "files", LiveRun: "live",
            GoneRun: "live", Reinsert: "reinsert", Restored: "restored"}

KEEP_UNDONE = 2 * KEEP_TURNS
"""How many turns taken back are kept per notebook, for a redo after a restart; older rows are dropped."""


class TurnRecords:
    """The kept turns of one notebook of one project, in the session store (either backend)."""

    def __init__(self, store: SessionStore, project: str, notebook: Callable[[], str | None], *,
                 names_of: Callable[[str], list[str]] | None = None) -> None:
        self.project, self.notebook = project, notebook
        self.where = store.where
        self._connect: Callable[[], Database] = store.side_connection
        self._errors = _database_errors()
        self.names_of = names_of
        """The names a live run of this kernel bound, kept so a later kernel can say they are gone."""
        self._names: dict[str, tuple[str, ...]] = {}

    def key(self) -> str | None:
        """The notebook the turns belong to; None while no front end or server has named it.

        The server's name for it (`JPY_SESSION_NAME`, set for every kernel it starts) comes first: a page says
        which notebook it shows only once it connects, and in another form (relative to the server's root),
        so a kernel that recorded a turn before the page connected would otherwise keep it under another key.
        """
        return os.environ.get("JPY_SESSION_NAME") or self.notebook() or None

    @contextmanager
    def _db(self) -> Iterator[Database]:
        db = self._connect()
        try:
            yield db
        finally:
            db.close()

    def save(self, turn: Turn, undo: Undone | None, *, undone: bool = False) -> None:
        """Write `turn` as it is: standing, or taken back (by `undo`, which a redo can still put back)."""
        notebook = self.key()
        if notebook is None:
            return
        data = json.dumps(self._encode(turn, undo), default=str)
        row = (turn.id, self.project, notebook, turn.session_id, turn.message_id, int(undone),
               undo.seq if undo is not None else None, data, time.time())
        try:
            with self._db() as db:
                db.execute("INSERT INTO notebook_turns (id, project, notebook, session_id, message_id, undone, "
                           "undo_seq, data, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE "
                           "SET project = excluded.project, notebook = excluded.notebook, session_id = "
                           "excluded.session_id, message_id = excluded.message_id, undone = excluded.undone, "
                           "undo_seq = excluded.undo_seq, data = excluded.data, updated_at = excluded.updated_at",
                           row)
                self._trim(db, notebook)
        except self._errors:
            log.exception("could not keep the notebook's turn %s in %s", turn.id, self.where)

    def _trim(self, db: Database, notebook: str) -> None:
        db.execute("DELETE FROM notebook_turns WHERE project = ? AND notebook = ? AND undone = 1 AND id NOT IN "
                   "(SELECT id FROM notebook_turns WHERE project = ? AND notebook = ? AND undone = 1 "
                   " ORDER BY updated_at DESC LIMIT ?)", (self.project, notebook, self.project, notebook, KEEP_UNDONE))

    def forget(self, turn_id: str) -> None:
        """A turn too old to undo (the journal keeps `KEEP_TURNS`): its row goes."""
        try:
            with self._db() as db:
                db.execute("DELETE FROM notebook_turns WHERE id = ?", (turn_id,))
        except self._errors:
            log.exception("could not drop the notebook's turn %s from %s", turn_id, self.where)

    def load(self) -> tuple[list[Turn], list[Undone]]:
        """The standing turns (oldest first) and the undos a redo can still put back (oldest first)."""
        notebook = self.key()
        if notebook is None:
            return [], []
        try:
            with self._db() as db:
                rows = db.execute("SELECT data, undone FROM notebook_turns WHERE project = ? AND notebook = ? "
                                  "ORDER BY updated_at", (self.project, notebook)).fetchall()
        except self._errors:
            log.exception("could not read the notebook's turns from %s", self.where)
            return [], []
        kept: list[Turn] = []
        undos: dict[int, tuple[dict[str, Any], list[tuple[int, Turn]]]] = {}
        for data, undone in rows:
            try:
                turn, undo = _decode(json.loads(data))
            except (ValueError, KeyError, TypeError):
                log.warning("a kept turn of %s could not be read; it is left out", notebook)
                continue
            if not undone:
                kept.append(turn)
            elif undo is not None:
                undos.setdefault(undo["seq"], (undo, []))[1].append((undo["position"], turn))
        redoable = [Undone(u["session_id"], [t for _, t in sorted(taken, key=lambda p: p[0])], u["files"],
                           u["report"], u["seq"]) for u, taken in (undos[s] for s in sorted(undos))]
        kept.sort(key=lambda t: t.started)
        return kept, redoable

    # ------------------------------------------------------------------------------------------ JSON

    def _encode(self, turn: Turn, undo: Undone | None) -> dict[str, Any]:
        return {
            "id": turn.id, "session_id": turn.session_id, "cell_id": turn.cell_id, "cell_source": turn.cell_source,
            "started": turn.started, "message_id": turn.message_id, "report": turn.report,
            "changes": [[n, self._step(c)] for n, c in turn.changes],
            "undid": [self._step(c) for c in turn.undid],
            "undo": None if undo is None else {
                "seq": undo.seq, "session_id": undo.session_id, "files": undo.files, "report": undo.report,
                "position": next(i for i, t in enumerate(undo.turns) if t is turn)},
        }

    def _step(self, change: Any) -> dict[str, Any]:
        fields = dataclasses.asdict(change)
        if isinstance(change, LiveRun) and not isinstance(change, GoneRun):
            if change.run_id not in self._names and self.names_of is not None:
                self._names[change.run_id] = tuple(self.names_of(change.run_id))
            fields["names"] = list(self._names.get(change.run_id, ()))
        return {"kind": _KIND_OF[type(change)], **fields}


def _decode(data: dict[str, Any]) -> tuple[Turn, dict[str, Any] | None]:
    turn = Turn(data["session_id"], data["cell_id"], data["cell_source"], started=data["started"],
                id=data["id"], report=data["report"], message_id=data["message_id"])
    turn.changes = [(int(n), _change(c)) for n, c in data["changes"]]
    turn.undid = [_change(c) for c in data["undid"]]
    return turn, data["undo"]


def _change(data: dict[str, Any]) -> Any:
    fields = dict(data)
    kind = _KINDS[fields.pop("kind")]
    if kind is GoneRun:
        fields["names"] = tuple(fields.get("names", ()))
    return kind(**fields)


def bound_by(runner: LiveRunner) -> Callable[[str], list[str]]:
    """The names each live run of `runner` created or rebound, for `TurnRecords.names_of`."""
    def names(run_id: str) -> list[str]:
        record = runner.records.get(run_id)
        return [] if record is None else [*record.created, *(n for n in record.previous if n not in record.created)]
    return names
