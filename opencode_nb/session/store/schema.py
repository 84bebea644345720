"""The session store's tables, and the steps that bring an older file up to them.

The version lives in the file (`PRAGMA user_version`), so a store opening a file knows which steps it still
needs, and refuses a file written by a newer opencode_nb rather than misread it. A store on PostgreSQL runs the
same steps in its own column types (`dialect.ddl`) and keeps its version in a one-row table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import OpencodeNbError
from .dialect import SQLITE, Dialect

MIGRATIONS: list[tuple[str, ...]] = [
    (  # 0 -> 1: the first schema
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            parent_id TEXT,
            directory TEXT NOT NULL,
            updated_at REAL NOT NULL,
            data TEXT NOT NULL
        )""",
        "CREATE INDEX sessions_by_directory ON sessions (directory, updated_at)",
        "CREATE INDEX sessions_by_parent ON sessions (parent_id)",
        """CREATE TABLE messages (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            data TEXT NOT NULL
        )""",
        "CREATE INDEX messages_by_session ON messages (session_id, id)",
        """CREATE TABLE parts (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            message_id TEXT NOT NULL,
            data TEXT NOT NULL
        )""",
        "CREATE INDEX parts_by_session ON parts (session_id, message_id, id)",
        """CREATE TABLE todos (
            session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
            data TEXT NOT NULL
        )""",
    ),
    (  # 1 -> 2: who is writing each unfinished message, so a dead process's leftovers can be finalised
        "ALTER TABLE messages ADD COLUMN owner TEXT",
        "CREATE INDEX messages_unfinished ON messages (owner) WHERE owner IS NOT NULL",
        """CREATE TABLE owners (
            id TEXT PRIMARY KEY,
            pid INTEGER NOT NULL,
            host TEXT NOT NULL,
            opened_at REAL NOT NULL
        )""",
        # Leftovers written before owners were recorded: their writer is long gone or about to be.
        """UPDATE messages SET owner = '' WHERE (json_extract(data, '$.role') = 'assistant'
               AND json_extract(data, '$.completed_at') IS NULL)
            OR id IN (SELECT message_id FROM parts WHERE json_extract(data, '$.type') = 'tool'
                      AND json_extract(data, '$.state.status') IN ('pending', 'running'))""",
    ),
    (  # 2 -> 3: file checkpoints per turn, and the turns an undo took back (hidden until redo)
        """CREATE TABLE checkpoint_turns (
            message_id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            before_tree TEXT,
            after_tree TEXT,
            skipped TEXT NOT NULL DEFAULT '[]',
            created_at REAL NOT NULL,
            undone INTEGER,
            pruned INTEGER NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX checkpoint_turns_by_session ON checkpoint_turns (session_id, message_id)",
        """CREATE TABLE checkpoint_steps (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            message_id TEXT NOT NULL,
            tool TEXT NOT NULL,
            tree TEXT NOT NULL,
            created_at REAL NOT NULL
        )""",
        "CREATE INDEX checkpoint_steps_by_turn ON checkpoint_steps (message_id, id)",
    ),
    (  # 3 -> 4: a notebook's turns (cells by id), for an undo after a kernel restart (kernel/notebook/records.py)
        """CREATE TABLE notebook_turns (
            id TEXT PRIMARY KEY,
            project TEXT NOT NULL,
            notebook TEXT NOT NULL,
            session_id TEXT,
            message_id TEXT,
            undone INTEGER NOT NULL DEFAULT 0,
            undo_seq INTEGER,
            data TEXT NOT NULL,
            updated_at REAL NOT NULL
        )""",
        "CREATE INDEX notebook_turns_by_notebook ON notebook_turns (project, notebook, updated_at)",
    ),
]
"""Step i takes a file from schema version i to i + 1; a later change appends a step, never edits one."""

SCHEMA_VERSION = len(MIGRATIONS)
"""Kept in `PRAGMA user_version` (on PostgreSQL in the table `store_version`); a store from a newer version is
refused rather than misread."""


def migrate(db: Any, where: Path | str, dialect: Dialect = SQLITE) -> None:
    """Bring the store up to `SCHEMA_VERSION`, inside the caller's writing transaction: two kernels opening
    a new store at once then migrate it once. The statements are SQLite's, in `dialect`'s types.

    Raises:
        OpencodeNbError: the store was written by a newer opencode_nb.
    """
    version = _version(db, dialect)
    if version > SCHEMA_VERSION:
        raise OpencodeNbError(
            f"{where} was written by a newer opencode_nb (store schema {version}, this version reads "
            f"up to {SCHEMA_VERSION}); upgrade opencode_nb, or set OPENCODE_NB_DATA_DIR to another directory"
        )
    for step in MIGRATIONS[version:]:
        for statement in step:
            db.execute(dialect.ddl(statement))
    if version < SCHEMA_VERSION:
        if dialect is SQLITE:
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        else:
            db.execute("UPDATE store_version SET version = ?", (SCHEMA_VERSION,))


def _version(db: Any, dialect: Dialect) -> int:
    if dialect is SQLITE:
        return int(db.execute("PRAGMA user_version").fetchone()[0])
    db.execute("CREATE TABLE IF NOT EXISTS store_version (version INTEGER NOT NULL)")
    row = db.execute("SELECT version FROM store_version").fetchone()
    if row is None:
        db.execute("INSERT INTO store_version (version) VALUES (0)")
        return 0
    return int(row[0])
