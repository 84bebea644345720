"""The checkpoint store's git config tampered with directly (as a process reaching the data dir some other way
than through the sandbox would): git run on the store must never run what it names. By effect, each attack
with a control where `verify` (and the pinned command-line settings) are switched off."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from opencode_nb.checkpoint import gitconfig
from opencode_nb.checkpoint.store import SnapshotStore


def planted(ran: Path) -> dict[str, str]:
    marker = f"touch {ran}"
    return {
        "fsmonitor": f'[core]\n\tfsmonitor = "{marker}; echo"\n',
        "clean filter": f'[filter "x"]\n\tclean = "{marker}; cat"\n\trequired = true\n',
        "process filter": f'[filter "y"]\n\tprocess = "{marker}"\n',
        "include": "[include]\n\tpath = {extra}\n",
    }


@pytest.fixture
def store(tmp_path: Path) -> SnapshotStore:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    (root / ".gitattributes").write_text("* filter=x\n*.txt filter=y\n")
    made = SnapshotStore(tmp_path / "store.git", root)
    made.ensure()
    made.snapshot()
    return made


def tamper(store: SnapshotStore, attack: str, ran: Path) -> None:
    text = planted(ran)[attack]
    if attack == "include":
        extra = store.git_dir.parent / "extra.cfg"
        extra.write_text(planted(ran)["fsmonitor"])
        text = text.format(extra=extra)
    with open(store.git_dir / "config", "a") as out:
        out.write(text)
    (store.work_tree / "a.txt").write_text("changed\n")


@pytest.mark.parametrize("attack", ["fsmonitor", "clean filter", "process filter", "include"])
def test_a_tampered_store_config_runs_nothing(store, attack, tmp_path):
    ran = tmp_path / "ran"
    tamper(store, attack, ran)
    store.snapshot()
    assert not ran.exists()
    assert gitconfig.acceptable((store.git_dir / "config").read_text()) is not None  # written afresh


@pytest.mark.parametrize("attack", ["fsmonitor", "clean filter", "process filter", "include"])
def test_control_without_the_check_it_runs(store, attack, tmp_path, monkeypatch):
    monkeypatch.setattr(gitconfig, "verify", lambda git_dir: [])
    weak = SnapshotStore(store.git_dir, store.work_tree)
    weak._env["GIT_CONFIG_COUNT"] = "0"
    ran = tmp_path / "ran"
    tamper(weak, attack, ran)
    with contextlib.suppress(Exception):  # a failing filter may fail the snapshot; what matters is that it ran
        weak.snapshot()
    assert ran.exists()


def test_a_link_or_a_commondir_in_the_store_is_removed(store, tmp_path):
    elsewhere = tmp_path / "elsewhere.cfg"
    elsewhere.write_text(planted(tmp_path / "ran")["fsmonitor"])
    (store.git_dir / "config").unlink()
    (store.git_dir / "config").symlink_to(elsewhere)
    (store.git_dir / "commondir").write_text(str(tmp_path) + "\n")
    store.snapshot()
    assert not (tmp_path / "ran").exists()
    assert not (store.git_dir / "config").is_symlink() and not (store.git_dir / "commondir").exists()
    assert elsewhere.read_text() == planted(tmp_path / "ran")["fsmonitor"]  # the link's target untouched


def test_the_config_ensure_writes_is_accepted_as_it_is(store):
    text = (store.git_dir / "config").read_bytes()
    assert gitconfig.verify(store.git_dir) == []
    assert (store.git_dir / "config").read_bytes() == text
