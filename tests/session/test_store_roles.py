"""Two people on one PostgreSQL database: the server itself keeps each one's sessions from the other.

Each role's store is a schema it owns and nobody else has a right on, so bob's own SQL is refused as well as
his store's listing coming back empty; a schema made in advance under alice's store's name by bob is not used.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from pathlib import Path

import pytest

from opencode_nb.session.models import Session
from opencode_nb.session.store import SessionStore
from opencode_nb.session.store.postgres import StoreUrlError
from tests.postgres import Server

_numbers = itertools.count(1)


@pytest.fixture
def people(pg_server: Server) -> dict[str, str]:
    """The URLs of roles alice and bob (neither a superuser) on one database both may create schemas in."""
    n = f"{os.getpid()}_{next(_numbers)}"
    database = f"team{n}"
    pg_server.database(database)
    urls = {}
    for person in ("alice", "bob"):
        role = f"{person}{n}"
        password = pg_server.role(role)
        pg_server.admin(f"GRANT CONNECT, CREATE ON DATABASE {database} TO {role}")
        urls[person] = pg_server.url(role, password, database)
    return urls


def test_bob_sees_none_of_alices_sessions_and_the_server_refuses_his_sql_on_them(people, tmp_path: Path):
    import psycopg

    with SessionStore(tmp_path / "project.sqlite", url=people["alice"]) as alice:
        session = Session(directory="/srv/project", title="alice's analysis")
        alice.create_session(session)
        schema = alice.server.schema if alice.server else ""
        with SessionStore(tmp_path / "project.sqlite", url=people["bob"]) as bob:  # the same project, by name
            assert bob.server is not None and bob.server.schema != schema
            assert bob.list_sessions() == [] and bob.list_sessions("/srv/project") == []
        assert [s.id for s in alice.list_sessions()] == [session.id]
    with psycopg.connect(people["bob"], autocommit=True) as db:
        for sql in (f'SELECT data FROM "{schema}".sessions', f'DELETE FROM "{schema}".sessions',
                    f'DROP TABLE "{schema}".sessions'):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match=f"permission denied for schema {schema}"
                               "|must be owner"):
                db.execute(sql)
    with SessionStore(tmp_path / "project.sqlite", url=people["alice"]) as alice:
        assert [s.title for s in alice.list_sessions()] == ["alice's analysis"]


def test_a_schema_bob_made_under_alices_stores_name_is_refused_not_used(people, tmp_path: Path):
    import psycopg

    # the name alice's store "project" takes is no secret: a hash of her role's name and the store's name
    role = people["alice"].split("//")[1].split(":")[0]
    schema = "opencode_nb_" + hashlib.sha256(f"{role}\0project".encode()).hexdigest()[:24]
    with psycopg.connect(people["bob"], autocommit=True) as db:
        db.execute(f'CREATE SCHEMA "{schema}"')
        db.execute(f'GRANT USAGE, CREATE ON SCHEMA "{schema}" TO PUBLIC')
    with pytest.raises(StoreUrlError, match=f"{schema} .*belongs to role bob.*DROP SCHEMA"):
        SessionStore(tmp_path / "project.sqlite", url=people["alice"])
