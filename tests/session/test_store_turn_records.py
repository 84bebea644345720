"""The notebook's kept turns (kernel/notebook/records.py) live in the session store on either backend: a kernel
started after a restart reads back what the one before wrote, a turn written again replaces its row, and on
PostgreSQL nothing goes to a SQLite file beside it."""

from __future__ import annotations

import logging

import pytest

from opencode_nb.kernel.notebook.journal import Inserted, Replaced, Turn, Undone
from opencode_nb.kernel.notebook.records import TurnRecords
from opencode_nb.session.store import SessionStore
from tests.session.test_store import backend, only_on, raw_sql, reopen, store, store_url

__all__ = ["backend", "store", "store_url"]  # the fixtures, shared with test_store.py


@pytest.fixture(autouse=True)
def _no_server_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)  # the notebook's key comes from the callable here


def records(store: SessionStore, notebook: str = "analysis.ipynb") -> TurnRecords:
    return TurnRecords(store, "/project", lambda: notebook)


def test_turns_written_by_one_kernel_are_read_back_by_the_next_on_the_same_store(store: SessionStore) -> None:
    first = Turn("ses_1", "cell_a", "%%agent plot it", started=1.0, message_id="msg_1")
    first.record(Inserted("cell_b", "df.plot()"))
    second = Turn("ses_1", "cell_a", "%%agent again", started=2.0, message_id="msg_2")
    second.record(Replaced("cell_b", "df.plot()", "code", "df.plot(kind='bar')", "code"))
    writer = records(store)
    writer.save(first, None)
    writer.save(second, None)
    writer.save(second, Undone("ses_1", [second], files=False, report="took it back", seq=1), undone=True)
    records(store, "other.ipynb").save(Turn("ses_2", started=3.0), None)
    store.close()
    with reopen(store) as later:
        kept, redoable = records(later).load()
        rows = raw_sql(later, "SELECT id, undone FROM notebook_turns WHERE notebook = ? ORDER BY updated_at",
                       ("analysis.ipynb",))
    assert [(t.id, t.changes[0][1]) for t in kept] == [(first.id, Inserted("cell_b", "df.plot()"))]
    [redo] = redoable
    assert (redo.seq, redo.report, [t.id for t in redo.turns]) == (1, "took it back", [second.id])
    assert rows == [(first.id, 0), (second.id, 1)]  # written again: one row, replaced in place


def test_a_forgotten_turn_goes_from_the_store(store: SessionStore) -> None:
    turn = Turn("ses_1", started=1.0)
    kept = records(store)
    kept.save(turn, None)
    kept.forget(turn.id)
    assert kept.load() == ([], []) and raw_sql(store, "SELECT COUNT(*) FROM notebook_turns") == [(0,)]


@only_on("postgresql", "on SQLite the store is the file itself")
def test_on_postgresql_the_turns_are_on_the_server_and_no_file_is_made(store: SessionStore) -> None:
    records(store).save(Turn("ses_1", started=1.0), None)
    assert raw_sql(store, "SELECT COUNT(*) FROM notebook_turns") == [(1,)]
    assert not store.path.exists() and not store.path.parent.joinpath("s.sqlite-wal").exists()


def test_a_store_that_cannot_be_written_is_logged_not_raised(store: SessionStore, caplog) -> None:
    raw_sql(store, "DROP TABLE notebook_turns")
    with caplog.at_level(logging.ERROR):
        records(store).save(Turn("ses_1", started=1.0), None)
        assert records(store).load() == ([], [])
    assert "could not keep the notebook's turn" in caplog.text and store.where in caplog.text
