"""The product's own writer never follows a link out of its root, never writes through a second name, and puts
back what was at a name whatever it has become. Each case is run against a temporary HOME that must stay as
it was."""

from __future__ import annotations

import os
import stat
import sys
import threading
import time
from pathlib import Path

import pytest

from opencode_nb import fs
from opencode_nb.fs import Refused

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="folder descriptors: Linux and macOS")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / ".profile").write_text("# the person's profile\n")
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir()
    return folder


def listing(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): (p.read_text() if p.is_file() and not p.is_symlink() else "")
            for p in sorted(folder.rglob("*"))}


def test_a_file_is_written_with_its_folders_and_keeps_its_mode(root):
    fs.write_file(root, "a/b/c.txt", b"one")
    assert (root / "a/b/c.txt").read_bytes() == b"one" and fs.kind(root, "a/b") == "dir"
    os.chmod(root / "a/b/c.txt", 0o640)
    fs.write_file(root, "a/b/c.txt", b"two")
    assert stat.S_IMODE((root / "a/b/c.txt").stat().st_mode) == 0o640
    fs.write_file(root, root / "a/b/c.txt", b"three", mode=0o600)  # an absolute path under the root
    assert (root / "a/b/c.txt").read_bytes() == b"three"
    assert stat.S_IMODE((root / "a/b/c.txt").stat().st_mode) == 0o600
    assert sorted(p.name for p in (root / "a/b").iterdir()) == ["c.txt"]  # no temporary file left


@pytest.mark.parametrize("depth", ["sub", "sub/deeper"])
def test_a_folder_replaced_by_a_link_anywhere_below_root_is_refused(root, home, depth):
    before = listing(home)
    (root / "sub").symlink_to(home)
    with pytest.raises(Refused, match="symbolic link"):
        fs.write_file(root, f"{depth}/.profile", b"sandbox: off")
    with pytest.raises(Refused):
        fs.make_dir(root, f"{depth}/x")
    with pytest.raises(Refused):
        fs.make_symlink(root, f"{depth}/y", "/etc/passwd")
    with pytest.raises(Refused):
        fs.remove(root, f"{depth}/.profile")
    assert fs.kind(root, "sub/.profile") == "missing" and fs.kind(root, "sub") == "link"
    assert listing(home) == before


def test_a_file_where_a_folder_should_be_is_refused(root):
    (root / "sub").write_text("a file")
    with pytest.raises(Refused, match="a file where a folder was expected"):
        fs.write_file(root, "sub/x", b"x")
    assert (root / "sub").read_text() == "a file"


def test_a_link_at_the_name_is_replaced_as_an_entry_never_followed(root, home):
    (root / "out.txt").symlink_to(home / ".profile")
    fs.write_file(root, "out.txt", b"ours")
    assert (home / ".profile").read_text() == "# the person's profile\n"
    assert not (root / "out.txt").is_symlink() and (root / "out.txt").read_bytes() == b"ours"


def test_a_hard_linked_file_is_replaced_and_its_other_name_keeps_its_content(root, home):
    os.link(home / ".profile", root / "linked")
    fs.write_file(root, "linked", b"ours")
    assert (home / ".profile").read_text() == "# the person's profile\n"
    assert (root / "linked").read_bytes() == b"ours"
    assert (root / "linked").stat().st_ino != (home / ".profile").stat().st_ino


def test_a_fifo_or_folder_in_the_way_is_refused_or_replaced_with_replace_kind(root, home):
    os.mkfifo(root / "pipe")
    (root / "folder" / "inner").mkdir(parents=True)
    (root / "folder" / "inner" / "f").write_text("x")
    (root / "folder" / "out").symlink_to(home)  # removing the folder must not follow this link
    for name in ("pipe", "folder"):
        with pytest.raises(Refused, match="not a file"):
            fs.write_file(root, name, b"back")
        fs.write_file(root, name, b"back", replace_kind=True)
        assert fs.kind(root, name) == "file" and (root / name).read_bytes() == b"back"
    assert (home / ".profile").exists()
    fs.make_dir(root, "pipe", replace_kind=True)
    assert fs.kind(root, "pipe") == "dir"
    fs.make_symlink(root, "pipe", "target", replace_kind=True)
    assert os.readlink(root / "pipe") == "target"
    fs.make_symlink(root, "pipe", "other")  # a link is replaced by a link without asking
    assert os.readlink(root / "pipe") == "other"


def test_remove_takes_the_entry_not_what_a_link_points_at(root, home):
    (root / "link").symlink_to(home)
    fs.remove(root, "link")
    assert not os.path.lexists(root / "link") and (home / ".profile").exists()
    fs.remove(root, "missing/too")  # missing is fine, under a missing folder too
    (root / "tree" / "a").mkdir(parents=True)
    (root / "tree" / "a" / "home").symlink_to(home)
    with pytest.raises(Refused, match="not empty"):
        fs.remove(root, "tree")
    fs.remove(root, "tree", recursive=True)
    assert not (root / "tree").exists() and (home / ".profile").exists()


def test_protected_paths_are_refused_before_anything_happens(root):
    (root / "opencode.yaml").write_text("model: a/b\n")
    def guard(path):
        return path.name == "opencode.yaml"

    for call in (lambda: fs.write_file(root, "opencode.yaml", b"sandbox: off", protected=guard),
                 lambda: fs.remove(root, "opencode.yaml", protected=guard),
                 lambda: fs.make_symlink(root, "opencode.yaml", "x", protected=guard, replace_kind=True),
                 lambda: fs.make_dir(root, "opencode.yaml", protected=guard, replace_kind=True)):
        with pytest.raises(Refused, match="protected"):
            call()
    assert (root / "opencode.yaml").read_text() == "model: a/b\n"


def test_paths_that_climb_or_leave_the_root_are_refused(root, tmp_path):
    with pytest.raises(Refused, match=r"'\.\.'"):
        fs.write_file(root, "../escape", b"x")
    with pytest.raises(Refused, match="not under"):
        fs.write_file(root, tmp_path / "escape", b"x")
    assert not (tmp_path / "escape").exists()


def test_the_root_itself_may_be_a_link_the_person_chose(tmp_path, root):
    chosen = tmp_path / "chosen"
    chosen.symlink_to(root)
    fs.write_file(chosen, "f", b"x")
    fs.write_file(chosen, chosen / "g", b"y")
    assert (root / "f").read_bytes() == b"x" and (root / "g").read_bytes() == b"y"


def test_only_if_is_asked_in_the_folder_held(root):
    (root / "f").write_text("old")
    seen = (root / "f").lstat()
    def same(now):
        return now is not None and (now.st_ino, now.st_dev) == (seen.st_ino, seen.st_dev)

    fs.write_file(root, "f", b"new", only_if=same)
    with pytest.raises(Refused, match="changed since"):
        fs.write_file(root, "f", b"newer", only_if=same)  # it is another inode now
    with pytest.raises(Refused, match="changed since"):
        fs.write_file(root, "f", b"x", only_if=lambda now: now is None)
    assert (root / "f").read_bytes() == b"new"


def test_move_takes_a_link_as_a_link_and_refuses_a_linked_folder_on_the_way(root, home, tmp_path):
    away = tmp_path / "away"
    (root / "made").symlink_to(home)
    fs.move(root, "made", away, "q/made")
    assert os.readlink(away / "q" / "made") == str(home) and not os.path.lexists(root / "made")
    (root / ".claude").symlink_to(home)  # a folder on the way that a command swapped for a link
    (home / "skills").mkdir()
    with pytest.raises(Refused):
        fs.move(root, ".claude/skills", away, "q/skills")
    assert (home / "skills").is_dir()
    with pytest.raises(Refused, match="taken"):
        (root / "x").write_text("x")
        fs.move(root, "x", away, "q/made")


def test_moving_across_file_systems_copies_without_following(root, home, tmp_path, monkeypatch):
    (root / "made" / "inner").mkdir(parents=True)
    (root / "made" / "inner" / "f").write_text("content")
    (root / "made" / "home").symlink_to(home)
    real_rename = os.rename

    def cross_device(src, dst, *, src_dir_fd=None, dst_dir_fd=None):
        if src_dir_fd is not None and src == "made":
            raise OSError(18, "Invalid cross-device link")
        return real_rename(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

    monkeypatch.setattr(os, "rename", cross_device)
    fs.move(root, "made", tmp_path / "away", "made")
    moved = tmp_path / "away" / "made"
    assert (moved / "inner" / "f").read_text() == "content" and os.readlink(moved / "home") == str(home)
    assert not (root / "made").exists() and (home / ".profile").exists()


def test_a_folder_swapped_for_a_link_between_calls_is_refused_every_time(root, home):
    """The race: a thread flips `sub` between a real folder and a link to HOME while files are written
    under it. Whatever the timing, nothing appears in HOME."""
    before = listing(home)
    (root / "sub").mkdir()
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            try:
                os.rename(root / "sub", root / "real")
                (root / "sub").symlink_to(home)
                os.unlink(root / "sub")
                os.rename(root / "real", root / "sub")
            except OSError:
                pass

    flipper = threading.Thread(target=flip)
    flipper.start()
    written = refused = 0
    deadline = time.monotonic() + 5
    try:
        while (written < 50 or refused < 50) and time.monotonic() < deadline:
            try:
                fs.write_file(root, f"sub/f{written + refused}", b"x", make_parents=False)
                written += 1
            except (Refused, FileNotFoundError):
                refused += 1
    finally:
        stop.set()
        flipper.join()
    assert listing(home) == before
    assert refused > 0  # the race was really run


def test_a_component_swapped_between_the_walk_and_the_write_changes_only_which_entry(root, home, monkeypatch):
    """A deterministic race: right after the walk holds `sub`, it is renamed away and a link to HOME put in
    its place. The write still lands in the folder held (now `moved`), never in HOME."""
    (root / "sub").mkdir()
    real_open = os.open

    def swapping_open(path, flags, mode=0o777, *, dir_fd=None):
        fd = real_open(path, flags, mode, dir_fd=dir_fd)
        if path == "sub" and not (root / "moved").exists():
            os.rename(root / "sub", root / "moved")
            (root / "sub").symlink_to(home)
        return fd

    monkeypatch.setattr(os, "open", swapping_open)
    fs.write_file(root, "sub/.profile", b"sandbox: off")
    assert (home / ".profile").read_text() == "# the person's profile\n"
    assert (root / "moved" / ".profile").read_bytes() == b"sandbox: off"


def test_a_new_file_is_never_opened_through_a_name_planted_before(root, home):
    (root / "tool_1").symlink_to(home / ".profile")
    with pytest.raises(Refused, match="already there"):
        fs.create_file(root, "tool_1")
    fd = fs.create_file(root, "out/tool_2")
    try:
        os.write(fd, b"output")
    finally:
        os.close(fd)
    assert (root / "out" / "tool_2").read_bytes() == b"output"
    assert stat.S_IMODE((root / "out" / "tool_2").stat().st_mode) == 0o600
    assert (home / ".profile").read_text() == "# the person's profile\n"


def test_read_file_reads_no_link_and_no_pipe(root, home):
    (root / "f").write_text("mine")
    (root / "l").symlink_to(home / ".profile")
    os.mkfifo(root / "p")
    (root / "d").symlink_to(home)
    assert fs.read_file(root, "f") == b"mine" and fs.read_file(root, "f", limit=2) == b"mi"
    for name in ("l", "p", "d/.profile"):
        with pytest.raises(Refused):
            fs.read_file(root, name)
    with pytest.raises(FileNotFoundError):
        fs.read_file(root, "missing")
