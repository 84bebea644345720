"""The session store's rows for file checkpoints, and for turns an undo took back.

A turn is a person's prompt (a user message that is not synthetic) and everything after it up to the next
one. Its row holds the tree before its first possible file change and after its latest, the files the size
cap left out, and `undone`: the number of the undo that took it back (NULL while it stands). Undos stack,
so redo puts back the highest number first. The messages of a session from its earliest undone turn on are
hidden from every read of the history (`StoreReads.messages`), kept until redo or a new prompt.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .connection import StoreConnections


@dataclass(frozen=True)
class TurnRow:
    session_id: str
    message_id: str
    before_tree: str | None
    after_tree: str | None
    skipped: list[str]
    created_at: float
    undone: int | None
    pruned: bool = False
    """Retention dropped its trees: its files can no longer be undone."""


@dataclass(frozen=True)
class TurnHead:
    """A person's prompt, as the turns are listed: its message id, when, and its first text."""

    message_id: str
    created_at: float
    text: str


_TURN_COLUMNS = "session_id, message_id, before_tree, after_tree, skipped, created_at, undone, pruned"


class StoreCheckpoints(StoreConnections):
    """The checkpoint half of `SessionStore`."""

    def turn_heads(self, session_id: str) -> list[TurnHead]:
        """Every turn's prompt, hidden ones included, oldest first, without loading the history."""
        d = self.dialect
        rows = self._db().execute(
            f"SELECT m.id, {d.number('m.data', '$.created_at')}, "
            f"  (SELECT {d.json('p.data', '$.text')} FROM parts p WHERE p.message_id = m.id "
            f"   AND {d.json('p.data', '$.type')} = 'text' ORDER BY p.id LIMIT 1) "
            f"FROM messages m WHERE m.session_id = ? AND {d.json('m.data', '$.role')} = 'user' "
            f"AND NOT {d.flag('m.data', '$.synthetic')} ORDER BY m.id",
            (session_id,),
        ).fetchall()
        return [TurnHead(r[0], float(r[1] or 0.0), r[2] or "") for r in rows]

    def latest_turn(self, session_id: str) -> str | None:
        """The message id of the session's newest prompt (not synthetic), or None."""
        d = self.dialect
        return self._one(
            f"SELECT id FROM messages WHERE session_id = ? AND {d.json('data', '$.role')} = 'user' "
            f"AND NOT {d.flag('data', '$.synthetic')} ORDER BY id DESC LIMIT 1",
            (session_id,),
        )

    def checkpoint_turns(self, session_id: str | None = None) -> list[TurnRow]:
        """The turns with a row, oldest first: the session's, or the whole project's."""
        where, args = ("WHERE session_id = ?", (session_id,)) if session_id is not None else ("", ())
        rows = self._db().execute(f"SELECT {_TURN_COLUMNS} FROM checkpoint_turns {where} ORDER BY message_id",
                                  args).fetchall()
        return [TurnRow(r[0], r[1], r[2], r[3], json.loads(r[4] or "[]"), r[5], r[6], bool(r[7])) for r in rows]

    def record_before(self, session_id: str, message_id: str, tree: str, skipped: list[str], at: float) -> bool:
        """Set the turn's tree before its first change, unless it has one; returns whether it was set."""
        cursor = self._db().execute(
            "INSERT INTO checkpoint_turns (session_id, message_id, before_tree, after_tree, skipped, created_at) "
            "VALUES (?1, ?2, ?3, ?3, ?4, ?5) ON CONFLICT (message_id) DO UPDATE SET before_tree = ?3, "
            "after_tree = COALESCE(checkpoint_turns.after_tree, ?3) WHERE checkpoint_turns.before_tree IS NULL",
            (session_id, message_id, tree, json.dumps(skipped), at),
        )
        return cursor.rowcount > 0

    def record_after(self, session_id: str, message_id: str, tool: str, tree: str, skipped: list[str],
                     at: float) -> None:
        """Set the turn's latest tree and keep it as one step."""
        with self._tx() as db:
            previous = db.execute("SELECT skipped FROM checkpoint_turns WHERE message_id = ?", (message_id,)).fetchone()
            merged = sorted({*json.loads(previous[0] if previous else "[]"), *skipped})
            db.execute(
                "INSERT INTO checkpoint_turns (session_id, message_id, after_tree, skipped, created_at) "
                "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (message_id) DO UPDATE SET after_tree = ?3, skipped = ?4",
                (session_id, message_id, tree, json.dumps(merged), at),
            )
            db.execute("INSERT INTO checkpoint_steps (session_id, message_id, tool, tree, created_at) "
                       "VALUES (?, ?, ?, ?, ?)", (session_id, message_id, tool, tree, at))

    def step_trees(self, message_id: str) -> list[tuple[str, str]]:
        """(tool, tree) after each step of the turn that may have changed files, in order."""
        return [(r[0], r[1]) for r in self._db().execute(
            "SELECT tool, tree FROM checkpoint_steps WHERE message_id = ? ORDER BY id", (message_id,))]

    def live_trees(self) -> set[str]:
        """Every tree a row still names: what pruning must keep."""
        db = self._db()
        trees = {r[0] for r in db.execute("SELECT before_tree FROM checkpoint_turns WHERE before_tree IS NOT NULL")}
        trees |= {r[0] for r in db.execute("SELECT after_tree FROM checkpoint_turns WHERE after_tree IS NOT NULL")}
        trees |= {r[0] for r in db.execute("SELECT tree FROM checkpoint_steps")}
        return trees

    def mark_undone(self, session_id: str, message_ids: list[str], at: float) -> int:
        """Take the turns back as one undo; returns its number (redo takes the highest first)."""
        with self._tx() as db:
            number = (db.execute("SELECT MAX(undone) FROM checkpoint_turns").fetchone()[0] or 0) + 1
            for message_id in message_ids:
                db.execute(
                    "INSERT INTO checkpoint_turns (session_id, message_id, created_at, undone) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (message_id) DO UPDATE SET undone = excluded.undone",
                    (session_id, message_id, at, number),
                )
        return number

    def last_undo(self, session_id: str) -> list[str]:
        """The turns the session's latest undo took back (what redo puts back), oldest first."""
        return [r[0] for r in self._db().execute(
            "SELECT message_id FROM checkpoint_turns WHERE session_id = ?1 AND undone = "
            "(SELECT MAX(undone) FROM checkpoint_turns WHERE session_id = ?1) ORDER BY message_id", (session_id,))]

    def mark_redone(self, message_ids: list[str]) -> None:
        with self._tx() as db:
            db.executemany("UPDATE checkpoint_turns SET undone = NULL WHERE message_id = ?",
                           [(m,) for m in message_ids])

    def discard_undone(self, session_id: str) -> int:
        """Delete for good what undos of the session kept aside (its messages and turns); returns messages
        deleted. A new prompt after an undo does this: there is no redo past it."""
        with self._tx() as db:
            floor = db.execute("SELECT MIN(message_id) FROM checkpoint_turns WHERE session_id = ? "
                               "AND undone IS NOT NULL", (session_id,)).fetchone()[0]
            if floor is None:
                return 0
            db.execute("DELETE FROM parts WHERE session_id = ? AND message_id >= ?", (session_id, floor))
            deleted = db.execute("DELETE FROM messages WHERE session_id = ? AND id >= ?", (session_id, floor)).rowcount
            db.execute("DELETE FROM checkpoint_steps WHERE session_id = ? AND message_id >= ?", (session_id, floor))
            db.execute("DELETE FROM checkpoint_turns WHERE session_id = ? AND message_id >= ?", (session_id, floor))
        return deleted

    def drop_checkpoints(self, message_ids: list[str]) -> None:
        """Forget the turns' trees (retention): their rows stay for undone marks, without trees."""
        with self._tx() as db:
            db.executemany("DELETE FROM checkpoint_steps WHERE message_id = ?", [(m,) for m in message_ids])
            db.executemany("UPDATE checkpoint_turns SET before_tree = NULL, after_tree = NULL, pruned = 1 "
                           "WHERE message_id = ?",
                           [(m,) for m in message_ids])
