"""The journal mode chosen for each filesystem, the setting that overrides it, and writers queued in rollback mode."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from opencode_nb import Workspace
from opencode_nb.errors import OpencodeNbError
from opencode_nb.kernel.magics import listing
from opencode_nb.session.models import Session, TextPart, UserMessage
from opencode_nb.session.store import SessionStore
from opencode_nb.session.store.filesystem import Filesystem, Kind
from opencode_nb.session.store.journaling import JOURNAL_ENV, Journaling

NFS = Filesystem(Kind.NFS, "nfs4", "/home")
EXT4 = Filesystem(Kind.LOCAL, "ext4", "/")


def journal_mode(path: Path) -> str:
    db = sqlite3.connect(path)
    try:
        return str(db.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        db.close()


@pytest.mark.parametrize(("filesystem", "setting", "mode"), [
    (EXT4, "auto", "wal"), (NFS, "auto", "rollback"), (Filesystem(Kind.FUSE, "fuse.sshfs", "/r"), "auto", "rollback"),
    (Filesystem(Kind.UNKNOWN, "", None), "auto", "wal"), (NFS, "wal", "wal"), (EXT4, "rollback", "rollback"),
])
def test_auto_keeps_wal_on_local_disk_only_and_a_setting_forces_either(filesystem, setting, mode, tmp_path) -> None:
    assert Journaling(tmp_path / "s.sqlite", setting, filesystem=filesystem).mode == mode


def test_the_notice_names_the_file_the_filesystem_the_choice_and_the_ways_out(tmp_path) -> None:
    path = tmp_path / "s.sqlite"
    notice = Journaling(path, filesystem=NFS).notice()
    assert notice.startswith(f"Session store: {path} is on NFS (nfs4): WAL is off there")
    assert "rollback journal with one writer at a time" in notice
    assert "store.journal" in notice and JOURNAL_ENV in notice and "OPENCODE_NB_DATA_DIR" in notice
    assert Journaling(path, filesystem=EXT4).notice() == (f"Session store: {path} is on local disk (ext4): using WAL "
                                                          "(readers never wait for a writer).")
    forced = Journaling(path, "wal", source=f"${JOURNAL_ENV}", filesystem=NFS).notice()
    assert f"but ${JOURNAL_ENV} says wal: SQLite's WAL is unsafe there" in forced


def test_the_variable_overrides_the_config_and_a_wrong_value_says_what_to_write(tmp_path) -> None:
    chosen = Journaling.for_file(tmp_path / "s.sqlite", {JOURNAL_ENV: "Rollback"}, configured="wal")
    assert (chosen.setting, chosen.source) == ("rollback", f"${JOURNAL_ENV}")
    assert Journaling.for_file(tmp_path / "s.sqlite", {}, configured="wal").source == "store.journal"
    with pytest.raises(OpencodeNbError, match=r"OPENCODE_NB_STORE_JOURNAL='delete' is not a journal mode: write auto"):
        Journaling.for_file(tmp_path / "s.sqlite", {JOURNAL_ENV: "delete"})


def test_in_rollback_mode_the_file_has_a_rollback_journal_full_sync_and_no_wal_files(tmp_path) -> None:
    path = tmp_path / "s.sqlite"
    with SessionStore(path, Journaling(path, "rollback")) as store:
        session = Session(directory="/p")
        store.create_session(session)
        message = UserMessage(session_id=session.id, agent="build")
        store.add_message(message)
        store.put_part(TextPart(session_id=session.id, message_id=message.id, text="hi"))
        assert store._db().execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert store.journaling.in_force == "rollback"
        assert journal_mode(path) == "delete"
        assert not (tmp_path / "s.sqlite-wal").exists() and not (tmp_path / "s.sqlite-shm").exists()
    with SessionStore(path, Journaling(path, "rollback")) as store:
        assert [p.text for m in store.messages(session.id) for p in m.parts] == ["hi"]  # type: ignore[union-attr]


def test_a_wal_file_goes_out_of_wal_when_a_rollback_store_opens_it_and_back_when_wal_is_asked(tmp_path) -> None:
    path = tmp_path / "s.sqlite"
    SessionStore(path, Journaling(path, "wal")).close()
    assert journal_mode(path) == "wal"
    SessionStore(path, Journaling(path, "rollback")).close()
    assert journal_mode(path) == "delete" and not (tmp_path / "s.sqlite-wal").exists()
    SessionStore(path, Journaling(path, "wal")).close()
    assert journal_mode(path) == "wal"


def test_a_file_another_process_holds_in_wal_stays_in_wal_and_the_notice_says_why(tmp_path) -> None:
    path = tmp_path / "s.sqlite"
    wal = SessionStore(path, Journaling(path, "wal"))
    try:
        wal.list_sessions()
        journaling = Journaling(path, filesystem=NFS)
        with SessionStore(path, journaling) as store:
            assert journaling.in_force == "wal"
            assert "another process still has the file open in WAL" in journaling.notice()
            store.create_session(Session(directory="/p"))  # and it works on, in WAL
    finally:
        wal.close()
    with SessionStore(path, Journaling(path, filesystem=NFS)) as store:
        assert store.journaling.in_force == "rollback"


def test_in_rollback_mode_a_write_waits_for_the_writer_holding_the_lock_and_then_lands(tmp_path) -> None:
    path = tmp_path / "s.sqlite"
    with SessionStore(path, Journaling(path, "rollback")) as store:
        session = Session(directory="/p")
        store.create_session(session)
        other = os.open(store.journaling.writer_lock, os.O_RDWR)  # another kernel, in the middle of a write
        fcntl.flock(other, fcntl.LOCK_EX)
        landed = threading.Event()

        def write() -> None:
            store.add_message(UserMessage(session_id=session.id, agent="build"))
            landed.set()

        writer = threading.Thread(target=write)
        writer.start()
        try:
            assert not landed.wait(0.4)
            assert store.messages(session.id) == []  # reads do not queue
        finally:
            fcntl.flock(other, fcntl.LOCK_UN)
            os.close(other)
        writer.join(10)
        assert landed.is_set() and len(store.messages(session.id)) == 1


def test_a_write_that_opens_with_a_common_table_expression_queues_on_the_lock_too(tmp_path) -> None:
    path = tmp_path / "s.sqlite"
    with SessionStore(path, Journaling(path, "rollback")) as store:
        store.create_session(Session(directory="/p"))
        other = os.open(store.journaling.writer_lock, os.O_RDWR)
        fcntl.flock(other, fcntl.LOCK_EX)
        landed = threading.Event()

        def write() -> None:
            db = store.side_connection()
            try:
                db.execute("WITH gone AS (SELECT id FROM sessions) DELETE FROM sessions WHERE id IN gone")
                db.commit()
            finally:
                db.close()
            landed.set()

        writer = threading.Thread(target=write)
        writer.start()
        try:
            assert not landed.wait(0.4), "a WITH ... DELETE is a write: it waits for the writer holding the lock"
        finally:
            fcntl.flock(other, fcntl.LOCK_UN)
            os.close(other)
        writer.join(10)
        assert landed.is_set() and store.list_sessions() == []


def test_wal_mode_takes_no_lock_of_ours(tmp_path) -> None:
    path = tmp_path / "s.sqlite"
    with SessionStore(path, Journaling(path, "wal")) as store:
        store.create_session(Session(directory="/p"))
        assert not store.journaling.writer_lock.exists()


def test_the_notebooks_turn_records_write_in_the_stores_mode_and_queue_on_its_lock(tmp_path) -> None:
    from opencode_nb.kernel.notebook.journal import Turn
    from opencode_nb.kernel.notebook.records import TurnRecords

    path = tmp_path / "s.sqlite"
    journaling = Journaling(path, "rollback")
    with SessionStore(path, journaling) as store:
        records = TurnRecords(store, "/project", lambda: "a.ipynb")
        other = os.open(journaling.writer_lock, os.O_RDWR)
        fcntl.flock(other, fcntl.LOCK_EX)
        saved = threading.Thread(target=records.save, args=(Turn("ses_1", "c1", "%%agent go", started=time.time()),
                                                            None))
        saved.start()
        try:
            saved.join(0.4)
            assert saved.is_alive()
        finally:
            fcntl.flock(other, fcntl.LOCK_UN)
            os.close(other)
        saved.join(10)
        assert [t.session_id for t in records.load()[0]] == ["ses_1"]
        assert journal_mode(path) == "delete"


def test_the_workspace_takes_store_journal_from_config_and_the_variable_over_it(tmp_path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)}
    (tmp_path / "p").mkdir()
    with Workspace(tmp_path / "p", {"store": {"journal": "rollback"}}, data_dir=tmp_path / "d", env=env) as ws:
        assert ws.store_journaling.mode == "rollback" and journal_mode(ws.store_path) == "delete"
        shown = listing.config(ws, [])["text/plain"]
        assert f"# Session store: {ws.store_path} is on local disk" in shown
        assert "using a rollback journal with one writer at a time, as store.journal says" in shown
        assert "store:" in shown and "journal: rollback" in shown
    with Workspace(tmp_path / "p", {"store": {"journal": "rollback"}}, data_dir=tmp_path / "d",
                   env={**env, JOURNAL_ENV: "wal"}) as ws:
        assert ws.store_journaling.mode == "wal" and journal_mode(ws.store_path) == "wal"
