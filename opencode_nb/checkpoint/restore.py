"""Writing a checkpoint's files back into the project, and reading what is there now, never through a link.

Apart from the store because it is the other half of the job: `store.py` only asks git (it records the tree,
and reads trees and blobs back), while this module only touches the work tree, and only through `fs`, the
one writer that never follows a link out of the project. Keeping the two apart keeps every write of an undo
or redo in one small place to audit, with no git call in it.

Removals go first, deepest first, so a link or a file that took a folder's place is gone before the
folder's files come back; then each file is written to a fresh name and renamed over the entry, whatever
kind it had become (a hard link is replaced, its other name untouched). A path that cannot be written is
named with why, and the rest go on: an undo never stops half-way. These calls block; the undo runs them off
the event loop.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

from .. import fs


def write_files(root: Path, files: dict[str, tuple[str, bytes] | None], *,
                protected: Callable[[Path], bool] | None = None) -> list[tuple[str, str]]:
    """Put each path under `root` in the state given: `(mode, content)` written, None removed (emptied folders
    go too). `protected` is asked with each absolute path written or removed; True refuses it.

    Returns the paths that could not be put so, each with why (a link or a file where a folder should
    be that nobody let go, a protected path, the OS refusing); every other path is done.
    """
    failed: list[tuple[str, str]] = []
    removals = sorted((p for p, s in files.items() if s is None), key=lambda p: (-p.count("/"), p))
    for rel in removals:
        try:
            fs.remove(root, rel, protected=protected)
        except OSError as exc:
            failed.append((rel, why(exc)))
            continue
        _prune_empty(root, rel, protected)
    for rel in sorted((p for p, s in files.items() if s is not None), key=lambda p: (p.count("/"), p)):
        mode, content = files[rel] or ("", b"")
        try:
            if mode == "120000":
                fs.make_symlink(root, rel, content.decode(errors="surrogateescape"), protected=protected,
                                replace_kind=True)
            else:
                fs.write_file(root, rel, content, mode=_mode(root, rel, mode == "100755"),
                              protected=protected, replace_kind=True)
        except OSError as exc:
            failed.append((rel, why(exc)))
    return failed


def _mode(root: Path, rel: str, executable: bool) -> int:
    """The permission bits to write `rel` with: the file's own with the execute bits as the tree says."""
    bits = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
    current = 0o644
    if fs.kind(root, rel) == "file":
        with contextlib.suppress(OSError):  # only the bits are read here; the write never follows a link
            current = stat.S_IMODE(os.lstat(root / rel).st_mode)
    elif executable:
        current = 0o755
    return current | (bits & ((current & 0o444) >> 2)) if executable else current & ~bits


def _prune_empty(root: Path, rel: str, protected: Callable[[Path], bool] | None) -> None:
    parts = rel.split("/")[:-1]
    while parts:
        try:
            fs.remove(root, "/".join(parts), protected=protected)
        except OSError:
            return
        parts.pop()


def current(root: Path, rel: str, *, links: bool = True) -> bytes | None:
    """A work-tree file's content now (a link's target, unless `links` is False), None when no file or link
    is there. Never read through a link: a path beyond one, or a file whose descriptor turns out to lie
    elsewhere (a folder swapped meanwhile), counts as not there; a named pipe is never opened."""
    found = fs.kind(root, rel)
    path = Path(os.path.realpath(root)) / rel
    try:
        if found == "link":
            return os.readlink(path).encode(errors="surrogateescape") if links else None
        if found != "file":
            return None
        return fs.read_file(root, rel)
    except OSError:
        return None


def why(exc: OSError) -> str:
    """One line for the person: the writer's own reason, or the OS's."""
    if isinstance(exc, fs.Refused):
        return exc.why
    return exc.strerror or str(exc)
