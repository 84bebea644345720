"""Moving an entry from one tree to another without following a link in either (`move`).

What a sandboxed command made at a protected path is moved out of the project into the quarantine folder;
the path is one the command could change, so the move goes through the same walk as every other write:
one `renameat` between the two folders held, and across file systems a copy through descriptors (links
copied as links, files read with no-follow, folders walked the same way), then the original removed.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .walk import (
    CLOEXEC,
    LIST_FLAGS,
    NOFOLLOW,
    TEMP_FLAGS,
    Protected,
    Refused,
    checked,
    chmod_fd,
    kind_of,
    lstat_entry,
    remove_entry,
    split,
    walk,
    write_all,
)

__all__ = ["move"]


def move(root: Path, relative: str | Path, dest_root: Path, dest_relative: str | Path, *,
         protected: Protected | None = None) -> None:
    """Move the entry `relative` (a link as a link, a folder with everything in it) to `dest_relative` under
    `dest_root`, which must be free. One `renameat` between the two folders held; across file systems a copy
    through descriptors (links copied as links, never followed), then the original removed the same way.

    Raises:
        Refused: a component of either path is a link or not a folder, the destination is taken, or
            `protected` says the source is protected.
        FileNotFoundError: nothing is at `relative`.
    """
    base, parts = split(root, relative)
    path = checked(base, parts, protected, "move")
    dest_base, dest_parts = split(dest_root, dest_relative)
    dest = checked(dest_base, dest_parts, None, "move onto")
    with walk(base, parts[:-1], make_parents=False) as source, \
            walk(dest_base, dest_parts[:-1], make_parents=True) as target:
        name, dest_name = parts[-1], dest_parts[-1]
        found = kind_of(lstat_entry(source, name, path))
        if found == "missing":
            raise FileNotFoundError(errno.ENOENT, "nothing to move", str(path))
        if lstat_entry(target, dest_name, dest) is not None:
            raise Refused("is already taken; nothing moved onto it", dest, errno.EEXIST)
        if source.fd is None or target.fd is None:
            os.rename(path, dest)
            return
        try:
            os.rename(name, dest_name, src_dir_fd=source.fd, dst_dir_fd=target.fd)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            _copy_entry(source.fd, name, target.fd, dest_name, path)
            remove_entry(source, name, path, found, recursive=True)


def _copy_entry(src_fd: int, name: str, dst_fd: int, dest_name: str, path: Path) -> None:
    found = os.stat(name, dir_fd=src_fd, follow_symlinks=False)
    what = kind_of(found)
    if what == "link":
        os.symlink(os.readlink(name, dir_fd=src_fd), dest_name, dir_fd=dst_fd)
    elif what == "file":
        fd = os.open(name, os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | CLOEXEC, dir_fd=src_fd)
        try:
            out = os.open(dest_name, TEMP_FLAGS, 0o600, dir_fd=dst_fd)
            try:
                chmod_fd(out, found.st_mode)
                while chunk := os.read(fd, 1 << 20):
                    write_all(out, chunk)
            finally:
                os.close(out)
        finally:
            os.close(fd)
    elif what == "dir":
        os.mkdir(dest_name, 0o700, dir_fd=dst_fd)
        inner = os.open(name, LIST_FLAGS, dir_fd=src_fd)
        try:
            outer = os.open(dest_name, LIST_FLAGS, dir_fd=dst_fd)
            try:
                with os.scandir(inner) as entries:
                    names = [entry.name for entry in entries]
                for child in names:
                    _copy_entry(inner, child, outer, child, path / child)
                chmod_fd(outer, found.st_mode)
            finally:
                os.close(outer)
        finally:
            os.close(inner)
    elif what == "fifo" and hasattr(os, "mkfifo"):
        os.mkfifo(dest_name, stat.S_IMODE(found.st_mode), dir_fd=dst_fd)
    # sockets and devices are not copied: they hold nothing a person would want back
