"""What the session store reads: sessions, a history with its parts, todos, and a few facts asked in SQL.

A history loads with one query per table, each row's JSON validated straight into its model by the
discriminated adapter (`validate_json`, no `json.loads` in between: that measured about twice as slow).
Validating all rows as one JSON array through a list adapter measured no faster and would need a second,
row-by-row pass to find an unreadable row; here a row written by a newer version, or damaged, is skipped
with a warning naming it and the rest of the history still loads.

Ids are time-ordered strings, so ordering by id is ordering by creation.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import ValidationError

from ...errors import NotFoundError, OpencodeNbError
from ..events import Todo
from ..models import (
    AssistantMessage,
    MessageWithParts,
    Part,
    Session,
    UserMessage,
    message_adapter,
    part_adapter,
)
from .connection import StoreConnections
from .dialect import Database, Dialect
from .rows import collector_paused, first_line, log, row_text, todos_adapter

T = TypeVar("T")

def _newest_message_at(d: Dialect, session: str) -> str:
    """When the session's newest message began or ended (the later of the two), as a query on a session id."""
    times = [f"COALESCE({d.number('data', path)}, 0)" for path in ("$.completed_at", "$.created_at")]
    return f"SELECT {d.greatest(*times)} FROM messages WHERE session_id = {session} ORDER BY id DESC LIMIT 1"


class StoreReads(StoreConnections):
    """The reading half of `SessionStore`."""

    # ------------------------------------------------------------------------------------------ sessions

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
            args.append(row_text(str(directory)))
        if not include_children:
            where.append("parent_id IS NULL")
        sql = "SELECT id, data FROM sessions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        # A session's `updated_at` moves only when the session itself is rewritten (its title, its cost), so
        # a session resumed today would list under one renamed yesterday: its newest message says when.
        sql += (f" ORDER BY COALESCE(({_newest_message_at(self.dialect, 'sessions.id')}), updated_at) DESC, "
                "id DESC")
        return self._load(self._db(), sql, tuple(args), Session.model_validate_json, "session")

    def last_activity(self, session_id: str) -> float | None:
        """When something last happened in the session: its newest message began or ended, or a part of it
        did (a tool still running, text still streaming); None when it has no message.

        Read from the newest message (ids ascend) and its parts by index, so a listing of many long sessions
        reads a few rows of each.
        """
        db = self._db()
        newest = db.execute("SELECT id FROM messages WHERE session_id = ? ORDER BY id DESC LIMIT 1",
                            (session_id,)).fetchone()
        if newest is None:
            return None
        d = self.dialect
        message_at = db.execute(_newest_message_at(d, "?"), (session_id,)).fetchone()[0]
        times = [f"COALESCE({d.number('data', path)}, 0)"
                 for path in ("$.started_at", "$.ended_at", "$.state.started_at", "$.state.ended_at")]
        part_at = db.execute(
            f"SELECT MAX({d.greatest(*times)}) FROM parts WHERE session_id = ? AND message_id = ?",
            (session_id, newest[0]),
        ).fetchone()[0]
        return max(float(message_at or 0), float(part_at or 0)) or None

    def children(self, session_id: str) -> list[Session]:
        """Sessions whose parent is `session_id`, oldest first."""
        sql = "SELECT id, data FROM sessions WHERE parent_id = ? ORDER BY id"
        return self._load(self._db(), sql, (session_id,), Session.model_validate_json, "session")

    def has_messages(self, session_id: str) -> bool:
        return self._one("SELECT 1 FROM messages WHERE session_id = ? LIMIT 1", (session_id,)) is not None

    def slug_taken(self, slug: str) -> bool:
        """Whether a session already has this slug (only asked when a session is created)."""
        return self._one(f"SELECT 1 FROM sessions WHERE {self.dialect.json('data', '$.slug')} = ? LIMIT 1",
                         (slug,)) is not None

    # ------------------------------------------------------------------------------------------ messages

    def get_message(self, message_id: str) -> UserMessage | AssistantMessage:
        """The stored message.

        Raises:
            NotFoundError: no message has this id.
        """
        data = self._one("SELECT data FROM messages WHERE id = ?", (message_id,))
        if data is None:
            raise NotFoundError("message", message_id)
        return self._validate_row(message_adapter.validate_json, data, "message", message_id)

    def messages(self, session_id: str, since: str | None = None, *, hidden: bool = False) -> list[MessageWithParts]:
        """Every message of the session with its parts, both in creation order; with `since`, only the messages
        whose id is not below it (ids ascend), so reading one run of a long session does not read it all.

        The turns an undo took back are left out (they wait for a redo) unless `hidden` is set. Rows this
        version cannot read are skipped with a warning, and so are the parts of such a message.
        """
        floor = "" if since is None else since
        with self._snapshot() as db:
            ceiling = None if hidden else db.execute(
                "SELECT MIN(message_id) FROM checkpoint_turns WHERE session_id = ? AND undone IS NOT NULL",
                (session_id,)).fetchone()[0]
            below = "" if ceiling is None else " AND id < ?"
            below_parts = "" if ceiling is None else " AND message_id < ?"
            extra = () if ceiling is None else (ceiling,)
            messages = self._load(
                db,
                f"SELECT id, data FROM messages WHERE session_id = ? AND id >= ?{below} ORDER BY id",
                (session_id, floor, *extra),
                message_adapter.validate_json,
                "message",
            )
            parts = self._load(
                db,
                f"SELECT id, data FROM parts WHERE session_id = ? AND message_id >= ?{below_parts} "
                "ORDER BY message_id, id",
                (session_id, floor, *extra),
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
        d = self.dialect
        tokens = " + ".join(d.number("data", f"$.tokens.{kind}")
                            for kind in ("input", "output", "reasoning", "cache_read", "cache_write"))
        row = self._db().execute(
            f"SELECT (SELECT {d.json('data', '$.agent')} FROM messages WHERE session_id = ?1 "
            f"        AND {d.json('data', '$.role')} = 'assistant' ORDER BY id DESC LIMIT 1), "
            f"       COALESCE(SUM({tokens}), 0) "
            f"FROM messages WHERE session_id = ?1 AND {d.json('data', '$.role')} = 'assistant'",
            (session_id,),
        ).fetchone()
        return row[0] or "", int(row[1])

    def current_agent(self, session_id: str, before: str | None = None) -> str | None:
        """The agent named by the session's newest user message (with `before`, the newest older than that
        message id), read in SQL without loading the history."""
        older = "" if before is None else "AND id < ? "
        d = self.dialect
        row = self._db().execute(
            f"SELECT {d.json('data', '$.agent')} FROM messages WHERE session_id = ? {older}"
            f"AND {d.json('data', '$.role')} = 'user' ORDER BY id DESC LIMIT 1",
            (session_id,) if before is None else (session_id, before),
        ).fetchone()
        return row[0] if row and row[0] else None

    # ------------------------------------------------------------------------------------------ todos

    def todos(self, session_id: str) -> list[Todo]:
        """The session's todo list; empty if it never had one. Unreadable items are skipped."""
        data = self._one("SELECT data FROM todos WHERE session_id = ?", (session_id,))
        if data is None:
            return []
        try:
            return todos_adapter.validate_json(data)
        except (ValidationError, ValueError) as exc:
            log.warning("todos of session %s are partly unreadable: %s", session_id, first_line(exc))
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

    # ------------------------------------------------------------------------------------------ rows

    def _load(
        self, db: Database, sql: str, args: tuple[Any, ...], load: Callable[[str], T], kind: str
    ) -> list[T]:
        """Validate the `data` of every row `sql` selects (as `id, data`), skipping unreadable ones."""
        out = []
        with collector_paused():
            for row_id, data in db.execute(sql, args):
                try:
                    out.append(load(data))
                except ValueError as exc:  # pydantic's ValidationError is one too
                    log.warning("skipping unreadable %s row %s in %s: %s", kind, row_id, self.where, first_line(exc))
        return out

    def _validate_row(self, load: Callable[[str], T], data: str, kind: str, row_id: str) -> T:
        try:
            return load(data)
        except (ValidationError, ValueError) as exc:
            raise OpencodeNbError(
                f"{kind} {row_id!r} in {self.where} cannot be read by this opencode_nb ({first_line(exc)}); "
                "it may have been written by a newer version: upgrade opencode_nb"
            ) from exc
