"""The session store on a PostgreSQL server (`store.url` / `$OPENCODE_NB_STORE_URL`), through psycopg 3.

**One schema per person and project.** A store that would be one SQLite file (one per project) is one schema
here, named from the server's `current_user` and the file's name (`opencode_nb_<hash>`), created by and owned
by that role. PostgreSQL gives nobody else any right on a new schema or its tables, so another role on the same
database cannot read, change or drop a row of it, even with SQL of its own: the database enforces it, not a
WHERE clause of ours. A schema of that name owned by another role is refused (someone made it first to watch
what we would write there). Superusers see everything, as root sees every file; the role needs `CREATE` on the
database, or an administrator makes the schema for it (`CREATE SCHEMA … AUTHORIZATION role`; the error says
which). The tables, queries and migrations are the SQLite store's (`dialect.py` has what differs).

**Transactions.** Each thread has its own connection in autocommit, so a single statement commits itself, as
in SQLite. A transaction that writes first takes a transaction-level advisory lock on the schema, so writers
of one store queue as SQLite's `BEGIN IMMEDIATE` makes them (a numbered undo reads its number and writes it in
one go); single statements do not queue. `synchronous_commit=off` on our connections is SQLite's
`synchronous=NORMAL`: a crash of the server may lose the last commits of the moment, never corrupt the store,
and a commit costs no wait for the disk.

**Owners.** Each open store holds a session-level advisory lock named by its schema and owner id on a
connection of its own (`PostgresOwnerLock`); the server drops it when that connection ends, however the
process died. A store that opens finalises the messages of owners whose lock it can take.
"""

from __future__ import annotations

import hashlib
import os
import re
import weakref
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from ...errors import OpencodeNbError
from .owners import live_here

if TYPE_CHECKING:
    import psycopg

URL_ENV = "OPENCODE_NB_STORE_URL"
"""A PostgreSQL URL that overrides `store.url`."""
INSTALL = "pip install 'opencode_nb[postgres]'"
CONNECT_TIMEOUT_S = 10


class StoreUrlError(OpencodeNbError):
    """The store's PostgreSQL URL is wrong, or the server it names cannot be used; the message says what to do."""


def redacted(url: str) -> str:
    """The URL with its password (if any) replaced, for every message a person sees."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<a URL that cannot be read>"
    if parts.password is None:
        return url if "password" not in parts.query else urlunsplit(parts._replace(query="…"))
    host = parts.hostname or ""
    user = parts.username or ""
    netloc = f"{user}:***@{host}" + (f":{parts.port}" if _port(parts) else "")
    return urlunsplit(parts._replace(netloc=netloc, query="…" if "password" in parts.query else parts.query))


def _port(parts: Any) -> int | None:
    try:
        return int(parts.port) if parts.port else None
    except ValueError:
        return None


def is_url(location: str) -> bool:
    return location.startswith(("postgresql://", "postgres://"))


def _driver() -> Any:
    try:
        import psycopg
    except ImportError:
        raise StoreUrlError(f"the session store is set to a PostgreSQL server, but psycopg is not installed: "
                            f"{INSTALL}") from None
    return psycopg


class Postgres:
    """One store on a PostgreSQL server: the URL checked, the schema made (or found), connections opened.

    Args:
        url: `postgresql://user@host:port/database`, the password in it, in `PGPASSWORD` or in `~/.pgpass`.
        name: the store's name (a SQLite store's file name without `.sqlite`): with the role, it names the schema.
        source: the setting the URL came from, for errors (`store.url` or `$OPENCODE_NB_STORE_URL`).

    Raises:
        StoreUrlError: psycopg is missing, the URL is not one, the server cannot be reached or refuses the
            role, or the schema cannot be made or belongs to another role.
    """

    def __init__(self, url: str, name: str, *, source: str = "store.url") -> None:
        self.url, self.source = url, source
        self.label = redacted(url)
        setting = f"{source} ({self.label})"
        if not is_url(url):
            raise StoreUrlError(f"{setting} is not a PostgreSQL URL: write postgresql://user@host:5432/database")
        self._psycopg = _driver()
        try:
            self._psycopg.conninfo.conninfo_to_dict(url)
        except self._psycopg.ProgrammingError:
            raise StoreUrlError(f"{setting} cannot be read as a PostgreSQL URL: write "
                                "postgresql://user@host:5432/database (with special characters %-encoded)") from None
        first = self._raw()
        try:
            self.user: str = first.execute("SELECT current_user").fetchone()[0]  # type: ignore[index]
            digest = hashlib.sha256(f"{self.user}\0{name}".encode()).hexdigest()[:24]
            self.schema = f"opencode_nb_{digest}"
            """This role's schema for the store `name`; nobody else has any right on it."""
            self._make_schema(first)
        finally:
            first.close()
        self.where = f"{self.label} (schema {self.schema})"
        self._lock_key = f"opencode_nb/{self.schema}"

    # ------------------------------------------------------------------------------------------ connections

    def connect(self) -> PostgresConnection:
        """A connection in autocommit whose unqualified names are this store's tables."""
        raw = self._raw()
        try:
            raw.execute("SELECT set_config('search_path', %s, false), set_config('synchronous_commit', 'off', false)",
                        (_quoted(self.schema),))
        except BaseException:
            raw.close()
            raise
        return PostgresConnection(raw)

    def _raw(self) -> psycopg.Connection[Any]:
        psycopg = self._psycopg
        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S,
                                   application_name="opencode_nb")  # type: ignore[no-any-return]
        except psycopg.OperationalError as exc:
            raise StoreUrlError(self._why(exc)) from None

    def _why(self, exc: Exception) -> str:
        """One sentence for a failed connection: the setting, what went wrong, what to do; never the password."""
        info = self._psycopg.conninfo.conninfo_to_dict(self.url)
        text = str(exc)
        password = info.get("password")
        if password:
            text = text.replace(str(password), "***")
        reason = " ".join(text.strip().splitlines()[-1:]).strip() or type(exc).__name__
        reason = re.sub(r"^connection to server .*? failed: ", "", reason)
        setting = f"{self.source} ({self.label})"
        low = text.lower()
        if "authentication" in low or "no password supplied" in low or ("role" in low and "does not exist" in low):
            return (f"The PostgreSQL server of {setting} refused the credentials of role "
                    f"{info.get('user') or os.environ.get('PGUSER') or 'of this login'} ({reason}): correct the user "
                    f"and password in {self.source} (a password belongs in {{env:NAME}}, $PGPASSWORD or ~/.pgpass).")
        if "database" in low and "does not exist" in low:
            return (f"The database named by {setting} does not exist on the server ({reason}): create it "
                    f"(createdb) or name another in {self.source}.")
        return (f"The PostgreSQL server of {setting} cannot be reached ({reason}): start it, or correct the host "
                f"and port in {self.source}.")

    def _make_schema(self, db: psycopg.Connection[Any]) -> None:
        errors = self._psycopg.errors
        owner = db.execute("SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = %s",
                           (self.schema,)).fetchone()
        if owner is None:
            try:
                db.execute(f"CREATE SCHEMA IF NOT EXISTS {_quoted(self.schema)}")
            except errors.InsufficientPrivilege:
                raise StoreUrlError(
                    f"Role {self.user} may not create its session store's schema in the database of "
                    f"{self.source} ({self.label}): an administrator can run `GRANT CREATE ON DATABASE "
                    f"<database> TO {_quoted(self.user)}`, or `CREATE SCHEMA {self.schema} AUTHORIZATION "
                    f"{_quoted(self.user)}`.") from None
            except errors.UniqueViolation:  # another kernel made it at the same moment
                pass
            owner = db.execute("SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = %s",
                               (self.schema,)).fetchone()
        if owner is None or owner[0] != self.user:
            raise StoreUrlError(
                f"The schema {self.schema} meant for role {self.user}'s sessions in {self.source} ({self.label}) "
                f"belongs to role {owner[0] if owner else 'nobody'}: opencode_nb will not keep sessions where "
                f"another role can read them. Ask an administrator to drop it (DROP SCHEMA {self.schema} CASCADE).")

    # ------------------------------------------------------------------------------------------ locks

    def lock_writes(self, db: Any) -> None:
        """Queue this transaction behind the store's other writers (inside it: released at its end)."""
        db.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (self._lock_key,))

    def owner_key(self, owner: str) -> str:
        return f"{self._lock_key}/{owner}"


@lru_cache(maxsize=1024)
def _placeholders(sql: str) -> tuple[str, tuple[int, ...] | None]:
    """SQLite's `?` and `?N` as psycopg's `%s` (literal `%` doubled), and which argument each one takes
    (None: in order). Quoted text is left alone."""
    out: list[str] = []
    order: list[int] = []
    numbered = False
    position = 0
    for index, piece in enumerate(re.split(r"('(?:[^']|'')*')", sql)):
        if index % 2:  # a string literal
            out.append(piece.replace("%", "%%"))
            continue
        def take(match: re.Match[str]) -> str:
            nonlocal numbered, position
            if match[1]:
                numbered = True
                order.append(int(match[1]) - 1)
            else:
                order.append(position)
                position += 1
            return "%s"
        out.append(re.sub(r"\?(\d*)", take, piece.replace("%", "%%")))
    return "".join(out), (tuple(order) if numbered else None)


class PostgresConnection:
    """A psycopg connection that takes the store's queries as SQLite's driver does (`?` placeholders)."""

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self.raw = raw
        self._pid = os.getpid()

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Any:
        if not parameters:
            return self.raw.execute(sql)  # type: ignore[arg-type]
        query, order = _placeholders(sql)
        args = parameters if order is None else [parameters[i] for i in order]
        return self.raw.execute(query, args)  # type: ignore[arg-type]

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Any:
        query, order = _placeholders(sql)
        rows = [row if order is None else [row[i] for i in order] for row in parameters]
        cursor = self.raw.cursor()
        cursor.executemany(query, rows)  # type: ignore[arg-type]
        return cursor

    def close(self) -> None:
        # A forked copy (the kernel's sandbox) must not end the parent's session on their shared socket.
        if os.getpid() == self._pid:
            self.raw.close()


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class PostgresOwnerLock:
    """This store's owner lock on the server: a session-level advisory lock on a connection kept for it.

    The server drops the lock when that connection ends: a clean close, or the kernel's death (its socket
    closes with it). Another store takes the lock of an owner only inside its finalising transaction, so the
    probe ends with that transaction.
    """

    def __init__(self, server: Postgres, owner: str) -> None:
        self.server = server
        holder = server.connect()
        try:
            holder.execute("SELECT pg_advisory_lock(hashtextextended(?, 0))", (server.owner_key(owner),))
        except BaseException:
            holder.close()
            raise
        live_here(owner)
        self.release = weakref.finalize(self, _let_go, owner, holder)
        """Let go of the lock (once; also when the store is collected)."""

    def alive(self, db: Any, other: str) -> bool:
        taken = db.execute("SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0))",
                           (self.server.owner_key(other),)).fetchone()[0]
        return not taken

    def gone(self, other: str) -> None:
        """Nothing to clean up: a dead owner's lock went with its connection."""



def _let_go(owner: str, holder: PostgresConnection) -> None:
    live_here(owner, False)
    holder.close()
