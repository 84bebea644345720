import os
import stat
import threading

import pytest

from opencode_nb.tool.files import safeopen
from opencode_nb.tool.files.safeopen import PathChanged, fd_path, open_entry, open_path


@pytest.fixture
def places(tmp_path):
    """`proj/` with a file and a folder, and `outside/` beside it with a file of the same name."""
    proj, outside = tmp_path / "proj", tmp_path / "outside"
    (proj / "sub").mkdir(parents=True)
    outside.mkdir()
    (proj / "sub" / "f.txt").write_text("inside")
    (outside / "f.txt").write_text("outside")
    return proj, outside


def test_the_opened_file_says_where_it_really_is_even_through_a_linked_folder(places):
    proj, outside = places
    (proj / "door").symlink_to(outside)
    with open_path(proj / "door" / "f.txt") as opened:
        assert opened.kind == "file" and opened.path == outside / "f.txt" and opened.read_bytes() == b"outside"


def test_a_link_in_the_last_component_is_resolved_again_and_reported_as_its_target(places):
    proj, outside = places
    (proj / "link.txt").symlink_to(outside / "f.txt")
    with open_path(proj / "link.txt") as opened:
        assert opened.path == outside / "f.txt"


def test_what_is_read_is_the_file_that_was_opened_even_if_the_name_changes_after(places):
    proj, outside = places
    name = proj / "sub" / "f.txt"
    with open_path(name) as opened:
        name.unlink()
        name.symlink_to(outside / "f.txt")
        assert opened.read_bytes() == b"inside"


def test_errors_are_kept_not_raised_so_permission_can_come_first(places):
    proj, _ = places
    assert open_path(proj / "nope.txt").kind == "missing"
    assert open_path(proj / "sub" / "f.txt" / "x").kind == "error"
    with open_path(proj / "sub") as opened:
        assert opened.kind == "dir"


def test_a_fifo_opens_without_blocking_and_is_not_a_file(places):
    proj, _ = places
    os.mkfifo(proj / "pipe")
    with open_path(proj / "pipe") as opened:
        assert opened.kind == "other" and stat.S_ISFIFO(opened.stat.st_mode)


def test_a_missing_file_is_made_with_its_folders_in_the_folder_that_was_checked(places):
    proj, _ = places
    with open_path(proj / "new" / "deep" / "f.txt", for_write=True) as opened:
        assert opened.kind == "missing" and opened.to_make == ("new", "deep", "f.txt")
        assert opened.path == proj / "new" / "deep" / "f.txt" and not (proj / "new").exists()
        opened.write_bytes(b"made")
    assert (proj / "new" / "deep" / "f.txt").read_bytes() == b"made"


def test_an_existing_file_is_overwritten_in_place(places):
    proj, _ = places
    target = proj / "sub" / "f.txt"
    inode = target.stat().st_ino
    with open_path(target, for_write=True) as opened:
        opened.write_bytes(b"new")
    assert target.read_bytes() == b"new" and target.stat().st_ino == inode


def test_a_file_replaced_by_a_link_after_the_check_is_not_written_through(places):
    proj, outside = places
    target = proj / "sub" / "f.txt"
    with open_path(target, for_write=True) as opened:
        target.rename(proj / "sub" / "moved.txt")
        target.symlink_to(outside / "f.txt")
        with pytest.raises(PathChanged):
            opened.write_bytes(b"pwned")
    assert (outside / "f.txt").read_text() == "outside" and (proj / "sub" / "moved.txt").read_text() == "inside"


def test_a_new_name_that_appears_as_a_link_before_the_write_is_refused(places):
    proj, outside = places
    with open_path(proj / "sub" / "new.txt", for_write=True) as opened:
        (proj / "sub" / "new.txt").symlink_to(outside / "g.txt")
        with pytest.raises(PathChanged):
            opened.write_bytes(b"pwned")
    assert not (outside / "g.txt").exists()


def test_a_folder_to_make_that_appears_as_a_link_is_refused(places):
    proj, outside = places
    with open_path(proj / "new" / "f.txt", for_write=True) as opened:
        (proj / "new").symlink_to(outside)
        with pytest.raises(PathChanged):
            opened.write_bytes(b"pwned")
    assert (outside / "f.txt").read_text() == "outside" and sorted(os.listdir(outside)) == ["f.txt"]


def test_a_folder_moved_out_of_the_project_while_waiting_is_caught(places):
    proj, outside = places
    with open_path(proj / "sub" / "new.txt", for_write=True) as opened:
        (proj / "sub").rename(outside / "sub")
        with pytest.raises(PathChanged):
            opened.write_bytes(b"late")
    assert not (outside / "sub" / "new.txt").exists()


def test_entries_are_opened_beneath_their_folder_without_following_links(places):
    proj, outside = places
    (proj / "sub" / "link.txt").symlink_to(outside / "f.txt")
    fd = os.open(proj / "sub", os.O_RDONLY)
    try:
        assert open_entry(fd, "link.txt", proj / "sub" / "link.txt").kind == "error"
        with open_entry(fd, "f.txt", proj / "sub" / "f.txt") as entry:
            assert entry.read_bytes() == b"inside"
    finally:
        os.close(fd)


def test_without_proc_the_fallback_accepts_only_the_same_inode(places, monkeypatch):
    proj, outside = places
    monkeypatch.setattr(safeopen, "HAS_PROC_FD", False)
    monkeypatch.setattr(safeopen.sys, "platform", "linux")
    name = proj / "sub" / "f.txt"
    fd = os.open(name, os.O_RDONLY)
    try:
        assert fd_path(fd, name) == name
        name.unlink()
        name.symlink_to(outside / "f.txt")
        assert fd_path(fd, name) is None  # the name now leads elsewhere: not this file
    finally:
        os.close(fd)


def test_opening_while_a_link_flips_always_reports_the_file_actually_opened(places):
    proj, outside = places
    link, spare = proj / "flip", proj / "flip.next"
    targets = [proj / "sub" / "f.txt", outside / "f.txt"]
    link.symlink_to(targets[0])
    stop = threading.Event()

    def flipper():
        i = 0
        while not stop.is_set():
            i ^= 1
            os.symlink(targets[i], spare)
            os.replace(spare, link)

    thread = threading.Thread(target=flipper)
    thread.start()
    try:
        for _ in range(2000):
            with open_path(link) as opened:
                if opened.fd is not None:
                    expected = b"inside" if opened.path == targets[0] else b"outside"
                    assert opened.path in targets and opened.read_bytes() == expected
    finally:
        stop.set()
        thread.join()
