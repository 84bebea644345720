"""The walk under a root that every writer of `opencode_nb.fs` goes through, and the `*at` calls on the
folder it ends in.

`walk` opens `root` (resolved once, by the caller's `split`) and then every component below it relative to
the previous folder's descriptor with `O_NOFOLLOW | O_DIRECTORY` (`O_PATH` on Linux, so a folder needs no
read permission to be passed through). A link or a file where a folder should be raises `Refused`, whenever
it was swapped in: a folder that is a folder again by the time it is looked at still counts, because it was
not one when it was opened. Missing folders are made with `mkdirat` in the folder held and opened the same
way. The walk ends holding the last folder; every call after it names an entry of that folder (`*at`), so a
swap meanwhile changes which entry is touched, never which folder.

Where the platform has no `dir_fd` (Windows) each component is checked with `lstat` before use instead:
a best effort, named as such.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path, PurePath
from typing import Literal

Kind = Literal["file", "dir", "link", "fifo", "other", "missing"]
Protected = Callable[[Path], bool]
Precondition = Callable[[os.stat_result | None], bool]

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
PATH_ONLY = getattr(os, "O_PATH", 0) or os.O_RDONLY
"""Linux's O_PATH holds a folder to name entries in without needing read permission on it (a `--x` home);
elsewhere the walk opens folders for reading."""
DIR_FLAGS = PATH_ONLY | NOFOLLOW | getattr(os, "O_DIRECTORY", 0) | CLOEXEC
LIST_FLAGS = os.O_RDONLY | NOFOLLOW | getattr(os, "O_DIRECTORY", 0) | CLOEXEC
ROOT_FLAGS = PATH_ONLY | getattr(os, "O_DIRECTORY", 0) | CLOEXEC
READ_FLAGS = os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | CLOEXEC | getattr(os, "O_BINARY", 0)
"""Non-blocking, so a named pipe at the name does not hang the caller; `fstat` then tells it is no file."""
TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC | getattr(os, "O_BINARY", 0)
HAS_DIR_FD = all(f in os.supports_dir_fd for f in (os.open, os.mkdir, os.unlink, os.rename, os.stat))
LINK_ERRNOS = {errno.ELOOP, errno.ENOTDIR, getattr(errno, "EMLINK", errno.ELOOP), getattr(errno, "EFTYPE", errno.ELOOP)}
"""What opening a link or a non-folder with O_NOFOLLOW | O_DIRECTORY fails with (EMLINK: FreeBSD)."""
TEMP_PREFIX = ".ocnb-"
"""Temporary names begin so; a crash can leave one behind, and a listing can tell it for ours."""


class Refused(OSError):
    """Nothing was written: the path left `root` through a link, a component is not a folder, the target is
    protected or of a kind the call may not replace. `filename` is the path in the way."""

    def __init__(self, why: str, path: Path | str | None = None, code: int = errno.EPERM) -> None:
        super().__init__(code, why, None if path is None else str(path))
        self.why = why

    def __str__(self) -> str:
        return f"{self.filename}: {self.why}" if self.filename else self.why


def require(only_if: Precondition | None, found: os.stat_result | None, path: Path) -> None:
    if only_if is not None and not only_if(found):
        raise Refused("changed since it was checked; not written", path, errno.EEXIST)


WORDS = {"file": "a file", "dir": "a folder", "link": "a symbolic link", "fifo": "a named pipe",
          "other": "a special file (socket or device)", "missing": "missing"}


def split(root: Path, relative: str | Path) -> tuple[Path, tuple[str, ...]]:
    """The resolved root and the names under it. An absolute `relative` must lie under `root` as given or
    as resolved; `..` is refused, not collapsed (it could climb out through a link)."""
    given = Path(os.path.abspath(root))
    base = Path(os.path.realpath(root))
    rel = PurePath(relative)
    if rel.is_absolute():
        for prefix in (given, base):
            with contextlib.suppress(ValueError):
                rel = rel.relative_to(prefix)
                break
        else:
            raise Refused(f"is not under {base}", relative)
    parts = tuple(p for p in rel.parts if p not in ("", "."))
    if ".." in parts:
        raise Refused("names '..'; paths under the root are named without it", base / rel)
    return base, parts


def checked(base: Path, parts: tuple[str, ...], protected: Protected | None, doing: str) -> Path:
    if not parts:
        raise Refused(f"will not {doing} the root folder itself", base)
    path = base.joinpath(*parts)
    if protected is not None and protected(path):
        raise Refused(f"is protected; will not {doing} it", path)
    return path


class Held:
    """The folder a walk ended in: its descriptor, or (without `dir_fd`) its checked path."""

    def __init__(self, fd: int | None, path: Path) -> None:
        self.fd = fd
        self.path = path


@contextlib.contextmanager
def walk(base: Path, parents: tuple[str, ...], *, make_parents: bool) -> Iterator[Held]:
    if not HAS_DIR_FD:
        yield walk_by_path(base, parents, make_parents=make_parents)
        return
    if make_parents:
        os.makedirs(base, exist_ok=True)  # the root is trusted as the caller named it
    fd = os.open(base, ROOT_FLAGS)
    here = base
    try:
        for name in parents:
            here = here / name
            try:
                inner = os.open(name, DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not make_parents:
                    raise
                with contextlib.suppress(FileExistsError):  # made meanwhile: fine if it is a real folder,
                    os.mkdir(name, 0o777, dir_fd=fd)        # which O_NOFOLLOW below insists on
                inner = open_dir(fd, name, here)
            except OSError as exc:
                raise not_a_folder(fd, name, here, exc) from None
            os.close(fd)
            fd = inner
        yield Held(fd, here)
    finally:
        os.close(fd)


def open_dir(fd: int, name: str, here: Path) -> int:
    try:
        return os.open(name, DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        raise Refused("vanished right after it was made", here, errno.ENOENT) from None
    except OSError as exc:
        raise not_a_folder(fd, name, here, exc) from None


def not_a_folder(fd: int, name: str, here: Path, exc: OSError) -> OSError:
    try:
        found = kind_of(os.stat(name, dir_fd=fd, follow_symlinks=False))
    except OSError:
        found = "missing"
    if found == "missing":
        if exc.errno in LINK_ERRNOS:
            return Refused("changed kind while it was being opened; not followed", here, errno.ENOTDIR)
        return exc
    if found == "dir":
        if exc.errno in LINK_ERRNOS:  # a folder again by now: it was not one when it was opened
            return Refused("changed kind while it was being opened; not followed", here, errno.ENOTDIR)
        return exc  # a real folder we may not open (permissions): the OS's own error says so
    return Refused(f"is {WORDS[found]} where a folder was expected; not followed", here, errno.ENOTDIR)


def walk_by_path(base: Path, parents: tuple[str, ...], *, make_parents: bool) -> Held:
    here = base
    for name in parents:
        here = here / name
        try:
            found = kind_of(os.lstat(here))
        except FileNotFoundError:
            if not make_parents:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(here)
            found = kind_of(os.lstat(here))
        if found != "dir":
            raise Refused(f"is {WORDS[found]} where a folder was expected; not followed", here, errno.ENOTDIR)
    return Held(None, here)


# --- entries in a held folder -----------------------------------------------------------------------------

def lstat_entry(parent: Held, name: str, path: Path) -> os.stat_result | None:
    try:
        if parent.fd is None:
            return os.lstat(path)
        return os.stat(name, dir_fd=parent.fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def kind_of(st: os.stat_result | None) -> Kind:
    if st is None:
        return "missing"
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return "fifo" if stat.S_ISFIFO(mode) else "other"


def remove_entry(parent: Held, name: str, path: Path, found: Kind, *, recursive: bool) -> None:
    if found != "dir":
        unlink_at(name, parent, path)
        return
    if recursive:
        if parent.fd is None:
            import shutil
            shutil.rmtree(path)
            return
        empty_tree(parent.fd, name, path)
    try:
        if parent.fd is None:
            os.rmdir(path)
        else:
            os.rmdir(name, dir_fd=parent.fd)
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
            raise Refused("is a folder that is not empty; not removed", path, exc.errno) from None
        raise


def empty_tree(parent_fd: int, name: str, path: Path) -> None:
    """Remove everything inside the folder `name`, holding each folder by descriptor: a folder swapped for
    a link meanwhile is refused by `O_NOFOLLOW`, so nothing outside is ever listed or removed."""
    try:
        fd = os.open(name, LIST_FLAGS, dir_fd=parent_fd)
    except OSError as exc:
        raise not_a_folder(parent_fd, name, path, exc) from None
    try:
        with os.scandir(fd) as entries:
            names = [entry.name for entry in entries]
        for child in names:
            found = kind_of(lstat_entry(Held(fd, path), child, path / child))
            if found == "dir":
                empty_tree(fd, child, path / child)
                os.rmdir(child, dir_fd=fd)
            elif found != "missing":
                os.unlink(child, dir_fd=fd)
    finally:
        os.close(fd)


def temp_name() -> str:
    return f"{TEMP_PREFIX}{secrets.token_hex(6)}.tmp"


def open_at(name: str, flags: int, mode: int, parent: Held, path: Path) -> int:
    if parent.fd is None:
        return os.open(path, flags, mode)
    return os.open(name, flags, mode, dir_fd=parent.fd)


def rename_at(src: str, dst: str, parent: Held, path: Path) -> None:
    if parent.fd is None:
        os.replace(path.parent / src, path)
        return
    try:
        os.rename(src, dst, src_dir_fd=parent.fd, dst_dir_fd=parent.fd)
    except IsADirectoryError:
        raise Refused("became a folder while it was being written; not replaced", path, errno.EISDIR) from None


def unlink_at(name: str, parent: Held, path: Path) -> None:
    try:
        if parent.fd is None:
            os.unlink(path)
        else:
            os.unlink(name, dir_fd=parent.fd)
    except FileNotFoundError:
        pass


def mkdir_at(name: str, parent: Held, path: Path) -> None:
    if parent.fd is None:
        os.mkdir(path)
    else:
        os.mkdir(name, dir_fd=parent.fd)


def symlink_at(target: str, name: str, parent: Held, path: Path) -> None:
    if parent.fd is None or os.symlink not in os.supports_dir_fd:
        os.symlink(target, path)
    else:
        os.symlink(target, name, dir_fd=parent.fd)


def chmod_fd(fd: int, mode: int) -> None:
    if hasattr(os, "fchmod"):
        os.fchmod(fd, stat.S_IMODE(mode))


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
