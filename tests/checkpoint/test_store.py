"""The snapshot store on its own: what a checkpoint holds when the tree changes shape."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from opencode_nb.checkpoint.records import not_recorded
from opencode_nb.checkpoint.store import SnapshotStore


def store(tmp_path: Path) -> tuple[SnapshotStore, Path]:
    root = tmp_path / "project"
    root.mkdir()
    return SnapshotStore(tmp_path / "store.git", root, max_file_bytes=1000, excludes=[]), root


def test_a_folder_replaced_by_a_file_a_deleted_file_and_a_symlink_are_recorded(tmp_path):
    snapshots, root = store(tmp_path)
    (root / "d").mkdir()
    (root / "d" / "b.txt").write_text("b\n")
    (root / "gone.txt").write_text("soon gone\n")
    os.symlink("gone.txt", root / "link")
    first = snapshots.snapshot()
    shutil.rmtree(root / "d")
    (root / "d").write_text("now a file\n")
    (root / "gone.txt").unlink()
    second = snapshots.snapshot()
    changes = {c.path: c.status for c in snapshots.changes(first.tree, second.tree)}
    assert changes == {"d": "added", "d/b.txt": "deleted", "gone.txt": "deleted"}


def test_an_unchanged_tree_gives_the_same_checkpoint_and_a_same_size_edit_is_seen(tmp_path):
    snapshots, root = store(tmp_path)
    (root / "a.txt").write_text("a\n")
    first = snapshots.snapshot()
    assert snapshots.snapshot().tree == first.tree
    (root / "a.txt").write_text("b\n")  # same size, same second: git's racy check still sees it
    assert [(c.path, c.status) for c in snapshots.changes(first.tree, snapshots.snapshot().tree)] == [
        ("a.txt", "modified")]


def test_a_repository_of_its_own_inside_the_project_is_left_out_and_said(tmp_path):
    """Its own git keeps its files; an undo must not rewrite them. Even one without a commit (which git
    cannot record) does not stop the checkpoint."""
    snapshots, root = store(tmp_path)
    (root / "a.txt").write_text("a\n")
    subprocess.run(["git", "init", "-q", str(root / "sub")], check=True)
    (root / "sub" / "x.txt").write_text("x")
    (root / "big.bin").write_bytes(b"x" * 5000)
    snap = snapshots.snapshot()
    assert sorted(snap.skipped) == ["big.bin", "sub/"]
    assert not_recorded(sorted(snap.skipped)) == "big.bin (over the size cap), sub/ (a repository of its own)"
    assert [c.path for c in snapshots.changes(snapshots.snapshot().tree, snap.tree)] == []
