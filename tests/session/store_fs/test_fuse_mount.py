"""The store on a real FUSE mount: found to be FUSE, never in WAL, working, and said so in `%agent config` and
`opencode-nb config`."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from opencode_nb.session.models import Session, TextPart, UserMessage
from opencode_nb.session.store import SessionStore
from opencode_nb.session.store.filesystem import Kind

pytestmark = pytest.mark.timeout(120)


def test_a_store_on_a_fuse_mount_uses_a_rollback_journal_leaves_no_wal_files_and_works(fuse_dir: Path) -> None:
    folder = fuse_dir / "plain"
    folder.mkdir()
    path = folder / "sessions" / "p.sqlite"
    with SessionStore(path) as store:
        assert store.journaling.filesystem.kind is Kind.FUSE and store.journaling.mode == "rollback"
        session = Session(directory="/p")
        store.create_session(session)
        for n in range(20):
            message = UserMessage(session_id=session.id, agent="build")
            with store.transaction():
                store.add_message(message)
                store.put_part(TextPart(session_id=session.id, message_id=message.id, text=f"turn {n}"))
        assert store._db().execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert "FUSE" in store.journaling.notice() and "WAL is off there" in store.journaling.notice()
        left = sorted(p.name for p in path.parent.iterdir())
    assert not [name for name in left if name.endswith(("-wal", "-shm"))], left
    with SessionStore(path) as store:
        assert [p.text for m in store.messages(session.id) for p in m.parts] == [  # type: ignore[union-attr]
            f"turn {n}" for n in range(20)]
        assert store._db().execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_wal_file_left_on_a_fuse_mount_is_taken_out_of_wal_with_its_commits(fuse_dir: Path) -> None:
    folder = fuse_dir / "older"
    folder.mkdir()
    path = folder / "p.sqlite"
    with SessionStore(path, _wal(path)) as store:  # as an older opencode_nb left it
        session = Session(directory="/p")
        store.create_session(session)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()
    with SessionStore(path) as store:
        assert store.journaling.in_force == "rollback"
        assert store.get_session(session.id).id == session.id
    assert not (folder / "p.sqlite-wal").exists()


def _wal(path: Path):  # type: ignore[no-untyped-def]
    from opencode_nb.session.store.journaling import Journaling

    return Journaling(path, "wal")


def test_the_cli_config_names_fuse_and_the_rollback_journal(fuse_dir: Path, tmp_path: Path) -> None:
    data = fuse_dir / "cli-data"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_NB_")},
           "OPENCODE_NB_DATA_DIR": str(data), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    done = subprocess.run([sys.executable, "-m", "opencode_nb.cli", "config"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("Session store: "))
    assert f"{data}/sessions/" in line and " is on FUSE (fuse): WAL is off there" in line
    assert "rollback journal with one writer at a time" in line


def test_agent_config_in_a_kernel_names_fuse_and_the_rollback_journal(fuse_dir: Path, tmp_path: Path) -> None:
    from tests.kernel.frontend import FakeFrontend

    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "opencode.yaml").write_text(yaml.safe_dump({"model": "scripted/test"}))
    data = fuse_dir / "kernel-data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_NB_") and k not in ("JPY_SESSION_NAME",
                                                                                                   "CI")}
    env.update({"OPENCODE_NB_DATA_DIR": str(data), "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
                "OPENCODE_NB_HEADLESS": "1"})
    frontend = FakeFrontend(str(project), env, render_views=False)
    try:
        assert frontend.run("%load_ext opencode_nb")["content"]["status"] == "ok"
        text = frontend.text(frontend.run_id("%agent config"))
    finally:
        frontend.close()
    line = next(line for line in text.splitlines() if line.startswith("# Session store: "))
    assert f"{data}/sessions/" in line and " is on FUSE (fuse): WAL is off there" in line
    assert not list((data / "sessions").glob("*-wal"))
