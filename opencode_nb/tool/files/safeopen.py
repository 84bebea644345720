"""Open a path once and act on what was opened, so the file that was checked is the file that is used.

Checking a path and then opening it looks the name up twice, and between the two lookups a symbolic link
can be flipped, or a folder swapped for a link: the check sees a file in the project, the read gets one
outside it. Here the path is opened first, the descriptor says where its file really is, and the
permission check, the read and the write all go through that descriptor:

- Linux: `readlink("/proc/self/fd/N")` names the file the descriptor holds, wherever links pointed;
- macOS: `fcntl(F_GETPATH)` does the same;
- elsewhere, or with /proc not mounted: the path is resolved again after opening and must be the very
  file the descriptor holds (same device and inode), else the path counts as having changed.

Opening never follows a link in the last component (`O_NOFOLLOW`; the caller passes a resolved path, so a
link there means it was flipped meanwhile) and never blocks (`O_NONBLOCK`: a FIFO does not hang the tool).
Files are opened read-only; a write reopens the same inode for writing only when it is about to happen,
so a refused write never even opens the file for writing (file watchers react to that).

Writing goes through the product's one writer (`opencode_nb.fs`) wherever a name is made or replaced: new
files and folders are made by a walk from `/` along the checked path, every folder opened with no-follow,
the file a fresh one renamed in only if the name is still free, so a name or folder that appears meanwhile,
perhaps as a link, is refused and never followed. A person may take minutes to approve a write, so just
before writing the checked folder's location is read again: a folder renamed out of the project in the
meantime is caught.

A file with more than one name (a hard link, perhaps made to a file outside the project before the session)
is replaced at the checked name the same way, and only if that name still holds the inode checked: its other
names keep their content. A file with one name is written in place through the checked inode, so its
inode, owner and extended attributes stay.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ... import fs

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["Opened", "PathChanged", "fd_path", "open_entry", "open_path", "read_all"]

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
READ_FLAGS = os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
DIR_FLAGS = READ_FLAGS | getattr(os, "O_DIRECTORY", 0)
WRITE_FLAGS = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
CREATE_FLAGS = WRITE_FLAGS | os.O_CREAT | os.O_EXCL | NOFOLLOW
HAS_DIR_FD = os.open in os.supports_dir_fd and os.mkdir in os.supports_dir_fd
PROC_FD = Path("/proc/self/fd")
HAS_PROC_FD = PROC_FD.is_dir()
LINK_ERRNOS = {errno.ELOOP, getattr(errno, "EMLINK", errno.ELOOP), getattr(errno, "EFTYPE", errno.ELOOP)}
"""What opening a link with O_NOFOLLOW fails with: ELOOP on Linux and macOS, EMLINK on FreeBSD."""
RETRIES = 3
"""Re-resolutions of a path whose last component keeps turning into a link before giving up."""

Kind = Literal["file", "dir", "other", "missing", "error"]


class PathChanged(OSError):
    """The path led somewhere else when it was used than when it was checked; nothing was done."""


@dataclass
class Opened:
    """What opening a path found. Errors are kept, not raised, so that the caller can ask permission for the
    place first and only then say what is (or is not) there."""

    path: Path
    """Where the open file really is; for a missing file, where it would be made."""
    fd: int | None = None
    """The open file or folder (read-only), None when there is none."""
    stat: os.stat_result | None = None
    error: OSError | None = None
    """Why nothing could be opened (not found, not allowed by the OS, a link loop)."""
    parent_fd: int | None = None
    """For a missing file: the deepest folder of its path that exists, which new folders and the file are
    made in; None where the platform has no `dir_fd`."""
    to_make: tuple[str, ...] = ()
    """For a missing file: the folders to make under `parent_fd`, then the file's name."""

    @property
    def kind(self) -> Kind:
        if self.stat is not None:
            if stat.S_ISREG(self.stat.st_mode):
                return "file"
            return "dir" if stat.S_ISDIR(self.stat.st_mode) else "other"
        if isinstance(self.error, FileNotFoundError):
            return "missing"
        return "error"

    def read_bytes(self, limit: int | None = None) -> bytes:
        """The file's bytes (at most `limit`), read through the descriptor that was checked."""
        assert self.fd is not None and self.kind == "file"
        return read_all(self.fd, limit)

    def write_bytes(self, data: bytes) -> None:
        """Replace the file's content, or make it (and its missing folders): the one that was checked.

        Raises:
            PathChanged: the file moved, or a missing name appeared meanwhile; nothing was written.
            OSError: the operating system refused.
        """
        if self.fd is not None:
            _overwrite(self, data)
        else:
            _create(self, data)

    def close(self) -> None:
        for fd in (self.fd, self.parent_fd):
            if fd is not None:
                os.close(fd)
        self.fd = self.parent_fd = None

    def __enter__(self) -> Opened:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_path(path: Path, *, for_write: bool = False) -> Opened:
    """Open `path` (absolute, best already resolved) without following a link in its last component.

    Args:
        path: the file or folder to open.
        for_write: a missing file is about to be made: keep its deepest existing folder open instead.
    """
    for _ in range(RETRIES):
        try:
            fd = os.open(path, READ_FLAGS)
        except OSError as exc:
            if exc.errno in LINK_ERRNOS and os.path.islink(path):
                with contextlib.suppress(OSError):  # realpath itself can trip over a link that vanishes
                    path = Path(os.path.realpath(path))  # flipped into a link since it was resolved: look again
                continue
            if for_write and isinstance(exc, FileNotFoundError):
                return _missing(path, exc)
            return Opened(path, error=exc)
        return _checked(fd, path)
    loop = OSError(errno.ELOOP, "the path is a symbolic link that loops or keeps changing", str(path))
    return Opened(path, error=loop)


def open_entry(dir_fd: int | None, name: str, path: Path) -> Opened:
    """Open `name` in the folder `dir_fd` (a walk's folder) without following a link; `path` is its full
    path, used where the platform has no `dir_fd`."""
    if dir_fd is None or not HAS_DIR_FD:
        return open_path(path)
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        return Opened(path, error=exc)
    return Opened(path, fd=fd, stat=os.fstat(fd))  # beneath dir_fd by construction: no name lookup to check


def read_all(fd: int, limit: int | None = None) -> bytes:
    chunks: list[bytes] = []
    size = 0
    offset = 0
    while limit is None or size < limit:
        want = 1 << 20 if limit is None else min(1 << 20, limit - size)
        chunk = os.pread(fd, want, offset) if hasattr(os, "pread") else _read_at(fd, want, offset)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def fd_path(fd: int, expected: Path | None = None) -> Path | None:
    """Where the file open as `fd` really is, or None if that cannot be told (it was deleted, or the
    fallback found `expected` no longer names it)."""
    if HAS_PROC_FD:
        try:
            target = os.readlink(PROC_FD / str(fd))
        except OSError:
            target = None
        if target is not None:
            if not target.startswith("/"):  # not a file in the tree (a pipe, a socket)
                return None
            if target.endswith(" (deleted)") and os.fstat(fd).st_nlink == 0:
                return None
            return Path(target)
    if sys.platform == "darwin" and fcntl is not None and hasattr(fcntl, "F_GETPATH"):
        try:
            raw = fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024))
        except OSError:
            raw = b""
        if raw[:1] == b"/":
            named = Path(os.fsdecode(raw.split(b"\0", 1)[0]))
            # Spelled as `realpath` spells it when both name this file (letter case on a case-insensitive
            # volume), so that it compares with the workspace root, which `realpath` gave.
            return _same_file(fd, expected) or named
    return _same_file(fd, expected)


def _same_file(fd: int, expected: Path | None) -> Path | None:
    """`expected`'s real path, if that names the very file open as `fd` now."""
    if expected is None:
        return None
    real = Path(os.path.realpath(expected))
    try:
        same = os.path.samestat(os.stat(real, follow_symlinks=False), os.fstat(fd))
    except OSError:
        return None
    return real if same else None


def _checked(fd: int, path: Path) -> Opened:
    real = fd_path(fd, path)
    if real is None:
        os.close(fd)
        return Opened(path, error=PathChanged(errno.ENOENT, "the file changed while it was being opened",
                                              str(path)))
    return Opened(real, fd=fd, stat=os.fstat(fd))


def _missing(path: Path, error: OSError) -> Opened:
    """A file to be made: keep its deepest existing folder open, and say where the file would really be."""
    if not HAS_DIR_FD:
        return Opened(path, error=error)
    names = [path.name]
    folder = path.parent
    while True:
        try:
            fd = os.open(folder, DIR_FLAGS)
        except FileNotFoundError:
            if folder.parent == folder:
                return Opened(path, error=error)
            names.insert(0, folder.name)
            folder = folder.parent
            continue
        except OSError as exc:  # a file where a folder should be, a link flipped in, no access
            if exc.errno in (*LINK_ERRNOS, errno.ENOTDIR) and os.path.islink(folder):
                exc = PathChanged(errno.ENOENT, "a folder on the path became a link", str(folder))
            return Opened(path, error=exc)
        real = fd_path(fd, folder)
        if real is None:
            os.close(fd)
            return Opened(path, error=PathChanged(errno.ENOENT, "the folder changed while it was being opened",
                                                  str(folder)))
        return Opened(real.joinpath(*names), error=error, parent_fd=fd, to_make=tuple(names))


def _overwrite(opened: Opened, data: bytes) -> None:
    assert opened.fd is not None
    held = os.fstat(opened.fd)
    if held.st_nlink > 1 and HAS_DIR_FD:
        _replace(opened, held, data)
        return
    if HAS_PROC_FD:
        # The magic link reopens the very inode held, whatever its names are now.
        wfd = os.open(PROC_FD / str(opened.fd), WRITE_FLAGS)
    else:
        wfd = os.open(opened.path, WRITE_FLAGS | NOFOLLOW)
    try:
        if not os.path.samestat(os.fstat(wfd), os.fstat(opened.fd)) or fd_path(wfd, opened.path) != opened.path:
            raise PathChanged(errno.ENOENT, "the file was moved or replaced after it was checked",
                              str(opened.path))
        os.ftruncate(wfd, 0)
        _write_all(wfd, data)
    finally:
        os.close(wfd)


def _replace(opened: Opened, held: os.stat_result, data: bytes) -> None:
    """A multiply-linked file: a fresh file renamed over the checked name, if it still holds `held`."""
    try:
        fs.write_file(Path(opened.path.anchor), opened.path, data, make_parents=False,
                      only_if=lambda now: now is not None and os.path.samestat(now, held))
    except fs.Refused as exc:
        raise PathChanged(errno.ENOENT, f"the file was moved or replaced after it was checked ({exc.why})",
                          str(opened.path)) from None


def _create(opened: Opened, data: bytes) -> None:
    if not HAS_DIR_FD:
        _create_by_path(opened, data)
        return
    if opened.parent_fd is None or not opened.to_make:
        if opened.error is not None:
            raise opened.error
        raise PathChanged(errno.ENOENT, "nothing to write to", str(opened.path))
    base = opened.path.parents[len(opened.to_make) - 1]
    if fd_path(opened.parent_fd, base) != base:
        raise PathChanged(errno.ENOENT, "the folder was moved after it was checked", str(base))
    try:
        fs.write_file(Path(opened.path.anchor), opened.path, data, only_if=lambda now: now is None)
    except fs.Refused as exc:
        what = ("the file appeared after it was checked" if exc.errno == errno.EEXIST
                else f"a folder on the path became a link or a file ({exc.why})")
        raise PathChanged(errno.EEXIST, what, str(opened.path)) from None


def _create_by_path(opened: Opened, data: bytes) -> None:
    """Where folders cannot be held open (Windows): make the file by name, then check it is where it was
    meant to be before writing anything into it."""
    opened.path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(opened.path, CREATE_FLAGS, 0o666)
    except FileExistsError:
        raise PathChanged(errno.EEXIST, "the file appeared after it was checked", str(opened.path)) from None
    try:
        if fd_path(fd, opened.path) != opened.path:
            raise PathChanged(errno.ENOENT, "the path led elsewhere when the file was made", str(opened.path))
        _write_all(fd, data)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_at(fd: int, size: int, offset: int) -> bytes:
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, size)
