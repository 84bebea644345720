"""Write, remove and make entries under a root folder without ever following a link out of it.

Every writer of the product's own (undo and redo, the tool-output folder and its redaction pass, plan
files, notebook saves, moving away what a command made at a protected path) writes into a tree that an
agent's commands can change at any moment. Writing by path there looks every component up again, and a
folder swapped for a link to `$HOME` between the check and the write sends the write to `~/.profile`. So:

- `root` is resolved once (the person may have chosen a link as their project); below it every component
  is opened relative to the previous folder's descriptor with `O_NOFOLLOW | O_DIRECTORY`, so a link or a
  file where a folder should be is refused (`Refused`), never followed, whenever it was swapped in. Missing
  folders are made with `mkdirat` in the folder already held, then opened the same way.
- A file is written to a fresh name made with `O_CREAT | O_EXCL | O_NOFOLLOW` in the folder held, then
  renamed over the name (`renameat`). A hard-linked file is therefore replaced, never written through (its
  other name, perhaps outside the project, keeps its content), and a link at the name is replaced as an
  entry, its target untouched. Readers never see half a file.
- `replace_kind=True` removes whatever is at the name first (a folder recursively, through descriptors and
  without following any link inside it; a named pipe, a link, a socket) so what was there can be put back.
  Without it a folder or a named pipe in the way is refused.
- `protected(path)` is asked first, with the absolute path under the resolved root; True refuses before
  anything is touched.

Only the last path component can be raced after the walk, and there every call names an entry of a folder
held open (`*at` calls), so a swap meanwhile changes which entry is replaced, never which folder. Where the
platform has no `dir_fd` (Windows) each component is checked with `lstat` before use: a best effort.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from .walk import (
    READ_FLAGS,
    TEMP_FLAGS,
    WORDS,
    Kind,
    Precondition,
    Protected,
    Refused,
    checked,
    chmod_fd,
    kind_of,
    lstat_entry,
    mkdir_at,
    open_at,
    remove_entry,
    rename_at,
    require,
    split,
    symlink_at,
    temp_name,
    unlink_at,
    walk,
    write_all,
)

__all__ = ["Kind", "Refused", "create_file", "kind", "lstat", "make_dir", "make_symlink", "open_file", "read_file",
           "remove", "write_file"]


def kind(root: Path, relative: str | Path) -> Kind:
    """What is at `relative` under `root`, by `lstat` through folder descriptors: a link is "link", never
    what it points at. "missing" also when a component above it is not a real folder (a link, a file):
    nothing is there without following a link; `kind` of that component tells what is."""
    base, parts = split(root, relative)
    if not parts:
        return "dir"
    try:
        return kind_of(_lstat_at(base, parts))
    except Refused:
        return "missing"


def lstat(root: Path, relative: str | Path) -> os.stat_result | None:
    """`lstat` of `relative` under `root` through folder descriptors; None when it is missing.

    Raises:
        Refused: a component above it is a link or not a folder.
    """
    base, parts = split(root, relative)
    return _lstat_at(base, parts) if parts else os.stat(base)


def _lstat_at(base: Path, parts: tuple[str, ...]) -> os.stat_result | None:
    try:
        with walk(base, parts[:-1], make_parents=False) as parent:
            return lstat_entry(parent, parts[-1], base.joinpath(*parts))
    except FileNotFoundError:
        return None


def open_file(root: Path, relative: str | Path) -> int:
    """A read-only descriptor of the regular file at `relative`, opened without following a link anywhere
    under `root` and checked by `fstat` after opening: what the product reads back from a tree a command
    may change (to compare, hash or copy it) is the file in the tree, never what a link points at, and a
    named pipe at the name never blocks (non-blocking open). The caller closes it.

    Raises:
        Refused: a component is a link or not a folder, or the entry is not a regular file.
        FileNotFoundError: nothing is there.
    """
    base, parts = split(root, relative)
    path = checked(base, parts, None, "read")
    with walk(base, parts[:-1], make_parents=False) as parent:
        try:
            fd = open_at(parts[-1], READ_FLAGS, 0, parent, path)
        except FileNotFoundError:
            raise
        except OSError as exc:
            found = kind_of(lstat_entry(parent, parts[-1], path))
            if found in ("file", "missing"):
                raise
            raise Refused(f"is {WORDS[found]}, not a file; not read", path, exc.errno or errno.EPERM) from None
    found = kind_of(os.fstat(fd))
    if found != "file":
        os.close(fd)
        raise Refused(f"is {WORDS[found]}, not a file; not read", path)
    return fd


def read_file(root: Path, relative: str | Path, *, limit: int | None = None) -> bytes:
    """The bytes of the regular file at `relative` (at most `limit`), read through `open_file`.

    Raises:
        Refused: a component is a link or not a folder, or the entry is not a regular file.
        FileNotFoundError: nothing is there.
    """
    fd = open_file(root, relative)
    try:
        chunks: list[bytes] = []
        size = 0
        while limit is None or size < limit:
            chunk = os.read(fd, 1 << 20 if limit is None else min(1 << 20, limit - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_file(root: Path, relative: str | Path, data: bytes, *, mode: int | None = None,
               protected: Protected | None = None, replace_kind: bool = False,
               make_parents: bool = True, only_if: Precondition | None = None, durable: bool = False) -> None:
    """Make `relative` hold exactly `data`, by a fresh file renamed over the name.

    Args:
        mode: permission bits; None keeps those of the file replaced, or the umask's default for a new one.
        protected: asked with the absolute path first; True refuses.
        replace_kind: remove a folder, named pipe or other entry in the way first, instead of refusing.
        make_parents: make missing folders (each in the folder held, never through a link).
        only_if: told the `lstat` of what is at the name (None: nothing), in the folder held, before anything
            is removed and again just before the rename; False refuses (the caller's "is it still the file
            I checked?" asked where the write happens, not by a second lookup of the path).
        durable: `fsync` the new file before the rename, for a document a crash must not leave empty.

    Raises:
        Refused: nothing was written (see the class).
        FileNotFoundError: a folder is missing and `make_parents` is False.
    """
    base, parts = split(root, relative)
    path = checked(base, parts, protected, "write")
    with walk(base, parts[:-1], make_parents=make_parents) as parent:
        name = parts[-1]
        found = lstat_entry(parent, name, path)
        require(only_if, found, path)
        found_kind = kind_of(found)
        if found_kind in ("dir", "fifo", "other"):
            if not replace_kind:
                raise Refused(f"is {WORDS[found_kind]}, not a file; not replaced", path)
            remove_entry(parent, name, path, found_kind, recursive=True)
            found = None
        if mode is None and found is not None and found_kind == "file":
            mode = stat.S_IMODE(found.st_mode)
        temp = temp_name()
        fd = open_at(temp, TEMP_FLAGS, 0o666, parent, base / temp)
        try:
            try:
                if mode is not None:
                    chmod_fd(fd, mode)
                write_all(fd, data)
                if durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
            if only_if is not None:
                require(only_if, lstat_entry(parent, name, path), path)
            rename_at(temp, name, parent, path)
        except BaseException:
            with contextlib.suppress(OSError):
                unlink_at(temp, parent, path.parent / temp)
            raise


def create_file(root: Path, relative: str | Path, *, mode: int = 0o600, protected: Protected | None = None,
                make_parents: bool = True) -> int:
    """A new, empty file at `relative`, open for reading and writing: for output written as it comes.
    Made with `O_EXCL | O_NOFOLLOW` in the folder held, so a name planted beforehand (a link) is refused,
    never written through; the caller owns (and closes) the descriptor.

    Raises:
        Refused: something is already at the name, or the walk was refused.
    """
    base, parts = split(root, relative)
    path = checked(base, parts, protected, "create")
    with walk(base, parts[:-1], make_parents=make_parents) as parent:
        try:
            return open_at(parts[-1], (TEMP_FLAGS & ~os.O_WRONLY) | os.O_RDWR, mode, parent, path)
        except FileExistsError:
            found = kind_of(lstat_entry(parent, parts[-1], path))
            raise Refused(f"is already there ({WORDS[found]}); not opened", path, errno.EEXIST) from None


def remove(root: Path, relative: str | Path, *, protected: Protected | None = None,
           recursive: bool = False) -> None:
    """Remove the entry itself (a link, not its target); a missing one, or one under a missing folder, is
    fine. A folder needs `recursive` unless empty; its contents go through descriptors, links unfollowed.

    Raises:
        Refused: a component above is a link or not a folder, the path is protected, or a folder is not
            empty and `recursive` is False.
    """
    base, parts = split(root, relative)
    path = checked(base, parts, protected, "remove")
    try:
        with walk(base, parts[:-1], make_parents=False) as parent:
            found_kind = kind_of(lstat_entry(parent, parts[-1], path))
            if found_kind != "missing":
                remove_entry(parent, parts[-1], path, found_kind, recursive=recursive)
    except FileNotFoundError:
        return


def make_symlink(root: Path, relative: str | Path, target: str, *, protected: Protected | None = None,
                 replace_kind: bool = False) -> None:
    """Make `relative` a link to `target` (stored as given, never resolved here). A link or file at the
    name is replaced as an entry (a fresh link renamed over it); a folder or pipe needs `replace_kind`."""
    base, parts = split(root, relative)
    path = checked(base, parts, protected, "make a link at")
    with walk(base, parts[:-1], make_parents=True) as parent:
        name = parts[-1]
        found_kind = kind_of(lstat_entry(parent, name, path))
        if found_kind in ("dir", "fifo", "other"):
            if not replace_kind:
                raise Refused(f"is {WORDS[found_kind]}; not replaced by a link", path)
            remove_entry(parent, name, path, found_kind, recursive=True)
        temp = temp_name()
        symlink_at(target, temp, parent, base / temp)
        try:
            rename_at(temp, name, parent, path)
        except BaseException:
            with contextlib.suppress(OSError):
                unlink_at(temp, parent, path.parent / temp)
            raise


def make_dir(root: Path, relative: str | Path, *, protected: Protected | None = None,
             replace_kind: bool = False) -> None:
    """Make `relative` a real folder (and its missing parents); one already there is fine. Anything else
    at the name (a link, a file, a pipe) needs `replace_kind`, and then only the entry goes."""
    base, parts = split(root, relative)
    if not parts:
        return
    path = checked(base, parts, protected, "make a folder at")
    with walk(base, parts[:-1], make_parents=True) as parent:
        name = parts[-1]
        found_kind = kind_of(lstat_entry(parent, name, path))
        if found_kind == "dir":
            return
        if found_kind != "missing":
            if not replace_kind:
                raise Refused(f"is {WORDS[found_kind]}, not a folder; not replaced", path)
            remove_entry(parent, name, path, found_kind, recursive=False)
        mkdir_at(name, parent, path)
