"""What an unchanged snapshot skips (`write-tree`, the index listing) and that it never skips a change."""

from __future__ import annotations

import os
from pathlib import Path

from opencode_nb.checkpoint.store import SnapshotStore


def counted(store: SnapshotStore) -> list[str]:
    calls: list[str] = []
    run = store._run

    def counting(*args: str, **kwargs: object) -> str:
        calls.append(args[0])
        return run(*args, **kwargs)  # type: ignore[arg-type]

    store._run = counting  # type: ignore[method-assign]
    return calls


def make(tmp_path: Path) -> tuple[SnapshotStore, Path]:
    root = tmp_path / "project"
    (root / "d").mkdir(parents=True)
    (root / "a.txt").write_text("a\n")
    (root / "d" / "b.txt").write_text("b\n")
    (root / ".gitignore").write_text("*.log\n")
    return SnapshotStore(tmp_path / "store.git", root), root


def test_an_unchanged_tree_costs_one_listing_and_gives_the_same_tree(tmp_path):
    store, _ = make(tmp_path)
    first = store.snapshot(fresh=True)
    store.snapshot()
    calls = counted(store)
    assert store.snapshot().tree == first.tree
    assert calls == ["ls-files"]


def test_a_change_after_a_reused_tree_is_recorded(tmp_path):
    store, root = make(tmp_path)
    first = store.snapshot(fresh=True)
    assert store.snapshot().tree == first.tree
    (root / "d" / "b.txt").write_text("changed\n")
    changed = store.snapshot()
    assert changed.tree != first.tree
    assert [c.path for c in store.changes(first.tree, changed.tree)] == ["d/b.txt"]


def test_another_store_on_the_same_index_is_not_mistaken_for_ours(tmp_path):
    """A second workspace on the project writes the same store: its index is then another file, and the
    tree is written afresh, with the ignore files it recorded."""
    store, root = make(tmp_path)
    store.snapshot(fresh=True)
    store.snapshot()
    other = SnapshotStore(tmp_path / "store.git", root)
    (root / "new.txt").write_text("new\n")
    (root / "d" / ".gitignore").write_text("*.tmp\n")
    theirs = other.snapshot()
    calls = counted(store)
    ours = store.snapshot()
    assert ours.tree == theirs.tree
    assert "write-tree" in calls and calls.count("ls-files") >= 2


def test_an_exclude_written_in_a_turn_is_noted_even_when_nothing_is_listed(tmp_path):
    """`.git/info/exclude` is never listed (`.git` is ours to leave out), so a snapshot that reuses its tree
    still notes what the ignore files hold: the turn's `*` is not adopted at the next turn's start."""
    store, root = make(tmp_path)
    (root / ".git" / "info").mkdir(parents=True)
    (root / ".git" / "info" / "exclude").write_text("")
    store.snapshot(fresh=True)
    store.snapshot()
    (root / ".git" / "info" / "exclude").write_text("*\n")
    store.snapshot()  # the turn's last step: nothing listed, the tree reused
    (root / "hidden.txt").write_text("made by the next turn\n")
    after = store.snapshot(fresh=True)
    assert "hidden.txt" in store.entries(after.tree, ["hidden.txt"])
    assert os.path.exists(root / "hidden.txt")
