"""Which files listings and searches skip: build and cache folders, and what .gitignore files say.

Every .gitignore from the workspace root down to each folder applies, each relative to its own folder,
as git reads them. One simplification: a `!pattern` re-includes only what its own file excluded, not
what a .gitignore higher up excluded.

Walks never follow symbolic links, as ripgrep does not: a link, to a file or a folder, is skipped, and so
are FIFOs, sockets and devices (reading a FIFO would hang a search). Where the platform allows, a walk holds
each folder open and opens the next one through it without following links (`dir_fd`, `O_NOFOLLOW`), so a
folder swapped for a link to somewhere outside while the walk runs is not entered either. A `.gitignore`
that is itself a link is not read: its content would come from wherever it points.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pathspec

from .safeopen import DIR_FLAGS, HAS_DIR_FD, READ_FLAGS, PathChanged, fd_path, read_all

ALWAYS_IGNORED = (".git/", "node_modules/", "__pycache__/", ".venv/", "venv/", ".ipynb_checkpoints/",
                  ".mypy_cache/", ".pytest_cache/", ".ruff_cache/", ".tox/", ".nox/", "dist/", "build/",
                  "*.egg-info/", ".DS_Store")
"""Skipped everywhere, whatever .gitignore says: nobody searches these on purpose."""

FD_WALK = HAS_DIR_FD and os.scandir in os.supports_fd
"""Folders can be walked through descriptors (Linux, macOS); elsewhere by path, still skipping links."""

MAX_GITIGNORE_BYTES = 1024 * 1024


def ignore_spec(root: Path, extra: list[str] | None = None) -> pathspec.GitIgnoreSpec:
    """The defaults, `extra` and `root/.gitignore` as one spec, for paths relative to `root`."""
    return pathspec.GitIgnoreSpec.from_lines([*ALWAYS_IGNORED, *(extra or []), *_gitignore_lines(root)])


class IgnoreRules:
    """The ignore rules for a walk of `top`, which may be a folder deep inside the workspace `root`."""

    def __init__(self, top: Path, root: Path | None = None, extra: list[str] | None = None) -> None:
        self.top = top
        self._specs: list[tuple[Path, pathspec.GitIgnoreSpec]] = [
            (top, pathspec.GitIgnoreSpec.from_lines([*ALWAYS_IGNORED, *(extra or [])]))
        ]
        if root is not None and root in top.parents:  # the .gitignore files above `top`, root first
            for folder in reversed(top.parents[: len(top.parents) - len(root.parents)]):
                self._load(folder, _gitignore_lines(folder))
        self._load(top, _gitignore_lines(top))

    def _load(self, folder: Path, lines: list[str]) -> None:
        if lines:
            self._specs.append((folder, pathspec.GitIgnoreSpec.from_lines(lines)))

    def ignored(self, path: Path, is_dir: bool = False) -> bool:
        for base, spec in self._specs:
            if path == base or base not in path.parents:
                continue
            rel = path.relative_to(base).as_posix() + ("/" if is_dir else "")
            if spec.match_file(rel):
                return True
        return False

    def walk(self, top_fd: int | None = None) -> Iterator[Path]:
        """Every regular file under `top` that is not ignored, in sorted order, pruning ignored folders early."""
        for path, _, _ in self.entries(top_fd):
            yield path

    def entries(self, top_fd: int | None = None) -> Iterator[tuple[Path, int | None, str]]:
        """Like `walk`, with each file's folder descriptor and name, to open it without a second lookup.

        Args:
            top_fd: `top`, already opened and checked by the caller; without it `top` is opened here, and
                `PathChanged` is raised if it is no longer where it was (swapped for a link).
        """
        if not FD_WALK:
            yield from self._walk_by_path()
            return
        if top_fd is not None:
            fd = os.dup(top_fd)
        else:
            fd = os.open(self.top, DIR_FLAGS)
            if fd_path(fd, self.top) != self.top:
                os.close(fd)
                raise PathChanged(errno.ENOENT, "the folder changed while it was being opened", str(self.top))
        try:
            yield from self._walk_fd(fd, self.top)
        finally:
            os.close(fd)

    def _walk_fd(self, fd: int, here: Path) -> Iterator[tuple[Path, int | None, str]]:
        if here != self.top:
            self._load(here, _gitignore_lines(dir_fd=fd))
        try:
            with os.scandir(fd) as listing:
                found = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            return
        dirs: list[str] = []
        for entry in found:
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if not self.ignored(here / entry.name, is_dir=True):
                        dirs.append(entry.name)
                elif entry.is_file(follow_symlinks=False) and not self.ignored(here / entry.name):
                    yield here / entry.name, fd, entry.name
            except OSError:
                continue
        for name in dirs:
            try:
                inner = os.open(name, DIR_FLAGS, dir_fd=fd)  # O_NOFOLLOW: a folder swapped for a link fails here
            except OSError:
                continue
            try:
                yield from self._walk_fd(inner, here / name)
            finally:
                os.close(inner)

    def _walk_by_path(self) -> Iterator[tuple[Path, int | None, str]]:
        for current, dirs, names in os.walk(self.top):
            here = Path(current)
            if here != self.top:
                self._load(here, _gitignore_lines(here))
            dirs[:] = sorted(d for d in dirs
                             if not os.path.islink(here / d) and not self.ignored(here / d, is_dir=True))
            for name in sorted(names):
                path = here / name
                try:
                    regular = stat.S_ISREG(os.lstat(path).st_mode)
                except OSError:
                    continue
                if regular and not self.ignored(path):
                    yield path, None, name


def _gitignore_lines(folder: Path | None = None, dir_fd: int | None = None) -> list[str]:
    """`folder`'s .gitignore, or that of the folder open as `dir_fd`: a walk by descriptor reads the one in the
    folder it listed, wherever a swapped path would lead now."""
    try:
        fd = os.open(".gitignore" if folder is None else folder / ".gitignore", READ_FLAGS, dir_fd=dir_fd)
    except OSError:
        return []
    try:
        return _lines(fd)
    finally:
        os.close(fd)


def _lines(fd: int) -> list[str]:
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        return read_all(fd, MAX_GITIGNORE_BYTES).decode("utf-8", errors="replace").splitlines()
    except OSError:
        return []
