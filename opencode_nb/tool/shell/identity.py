"""Which installed program a command word's file is, whatever name it is run under.

A rule names a program (`rm *: deny`), but what runs is a file. `cp /usr/bin/rm del`, `ln /usr/bin/rm del`,
`install /usr/bin/rm del` or `cat /usr/bin/rm > del; chmod +x del` make a file that is rm under another name,
and `./del x` in a later call removes x. So the file a command word runs is found as the shell would find it
(a path from the working folder; a bare name through `PATH`), links followed, and compared with the programs
installed on `PATH`: the same inode (a hard or symbolic link), or the same size and then the same content (a
copy). A call whose file is an installed program, run by a name that is not one of the program's, is judged
as that program (`identify`), so every check about it applies: its rules, the command a wrapper runs (`./e rm
x`, a copy of `env`), the code an interpreter is given (`./py -c ...`, a copy of python).

A command word naming, by path, a file that is no installed program (`./s.sh`, `./a.out`, `bin/tool`) runs
code the project holds: the rules cannot see what it does (`Identity.unknown`).

Multi-call programs (one file installed under several names that picks its behaviour by the name it is run
under, as busybox, xz/unxz or vim/view do) are judged as every name they are installed under when run under
a name that is none of them: the most any of them can do. `PATH` folders inside the project are not taken as
installed programs, or a copy put there would vouch for itself; a copy put in a system folder would, which is
why the OS sandbox keeps those read-only.

Cost: the first call lists the `PATH` folders (one `stat` per program, a few milliseconds); afterwards a call
costs a `stat` per `PATH` folder (to notice an install) plus a `stat` of the command word's file, and hashes a
file only when its size matches an installed program's, once per (device, inode, mtime, size).
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

_Stamp = tuple[int, int, int, int]
"""(device, inode, mtime in ns, size): a file's content is taken as unchanged while these are."""


@dataclass
class _Installed:
    """The programs in the `PATH` folders as they were when listed."""

    folders: tuple[tuple[str, int], ...]
    """Each folder with its mtime: an install or a removal changes it, and the folders are listed again."""
    by_inode: dict[tuple[int, int], set[str]] = field(default_factory=dict)
    """(device, inode) → the paths it is installed as (hard and symbolic links included)."""
    by_size: dict[int, dict[_Stamp, str]] = field(default_factory=dict)
    """Size → a path of each program of that size, to compare a copy's content with."""
    first: dict[str, str] = field(default_factory=dict)
    """Name → the path a bare command word finds, searching the folders in order as the shell does."""


_listed: dict[tuple[str, ...], _Installed] = {}
_digests: dict[_Stamp, bytes] = {}
MAX_DIGESTS = 4096
"""Content hashes kept; far more than the programs of equal size a session compares."""


@dataclass(frozen=True)
class Identity:
    """What a command word's file is."""

    installed_as: tuple[str, ...] = ()
    """The paths of the installed program it is (`/usr/bin/rm`), when the word calls it by another name:
    the call is judged as that program."""
    unknown: str | None = None
    """Why it runs code no rule can see: the word names, by path, a file that is no installed program."""


def identify(value: str | None, cwd: Path | None, root: Path | None = None) -> Identity:
    """What the file a command word runs is.

    Args:
        value: the command word (`./del`, `/tmp/x`, `rm`), None when only the run will know it.
        cwd: the folder the line starts in; None: nothing is looked up.
        root: the project's root (`cwd` by default): a program in a folder of it is the project's, not installed.
    """
    if not value or cwd is None or value.startswith("~"):
        return Identity()
    project = root or cwd
    installed, whole = _installed(project)
    found = _file_of(value, cwd, installed if whole else None)
    if found is None:
        return Identity()  # not there: nothing runs, or the line makes it (checked where lines are read)
    paths = _installed_as(*found, installed)
    if not paths:
        if "/" not in value and not _inside(found[0], project):
            return Identity()
        return Identity(unknown=f"`{value}` is not a program installed on the system but a file of the "
                        "project's or the run's, whose code the rules cannot check")
    if value.rsplit("/", 1)[-1] in {p.rsplit("/", 1)[-1] for p in paths}:
        return Identity()
    return Identity(installed_as=tuple(sorted(paths)))


def _file_of(value: str, cwd: Path, installed: _Installed | None) -> tuple[Path, os.stat_result] | None:
    """The file the shell would run for a command word, with its stat (links followed); `installed` when it
    lists every PATH folder, so that a bare name is looked up there."""
    if "/" in value:
        candidates = [cwd / value]
    elif installed is not None:
        first = installed.first.get(value)
        candidates = [Path(first)] if first is not None else []
    else:
        candidates = [Path(folder or ".") / value for folder in _path_folders()]
        candidates = [c if c.is_absolute() else cwd / c for c in candidates]
    for candidate in candidates:
        try:
            info = candidate.stat()
        except (OSError, ValueError):
            continue
        if stat.S_ISREG(info.st_mode) and info.st_mode & 0o111:
            return candidate, info
    return None


def _installed_as(path: Path, info: os.stat_result, installed: _Installed) -> set[str]:
    """The paths of the installed programs that are this file: the same inode, or the same content."""
    same = installed.by_inode.get((info.st_dev, info.st_ino))
    if same:
        return same
    same_size = installed.by_size.get(info.st_size)
    if not same_size:
        return set()
    digest = _digest(path, _stamp(info))
    if digest is None:
        return set()
    out: set[str] = set()
    for stamp, installed_path in same_size.items():
        if _digest(Path(installed_path), stamp) == digest:
            out |= installed.by_inode[stamp[:2]]
    return out


def _installed(project: Path | None) -> tuple[_Installed, bool]:
    """The programs on PATH, leaving out PATH folders inside the project (a copy put there is not installed),
    and whether that is every PATH folder."""
    folders, whole = _folders(os.environ.get("PATH", os.defpath), str(project) if project is not None else None)
    stamps = []
    for folder in folders:
        try:
            stamps.append((folder, os.stat(folder).st_mtime_ns))
        except OSError:
            stamps.append((folder, -1))
    listed = _listed.get(folders)
    if listed is None or listed.folders != tuple(stamps):
        listed = _listed[folders] = _list(tuple(stamps))
    return listed, whole


@lru_cache(maxsize=64)
def _folders(path: str, cwd: str | None) -> tuple[tuple[str, ...], bool]:
    """The installed PATH folders, real paths in search order, and whether they are all of PATH's folders."""
    folders: list[str] = []
    whole = True
    for folder in path.split(os.pathsep):
        if not folder or not os.path.isabs(folder) or (cwd is not None and _inside(Path(folder), Path(cwd))):
            whole = False
            continue
        real = os.path.realpath(folder)
        if real not in folders:
            folders.append(real)
    return tuple(folders), whole


def _list(folders: tuple[tuple[str, int], ...]) -> _Installed:
    installed = _Installed(folders)
    for folder, _ in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat()  # follows links: `python3 -> python3.11` is one program
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode) or not info.st_mode & 0o111 or info.st_size == 0:
                continue
            installed.by_inode.setdefault((info.st_dev, info.st_ino), set()).add(entry.path)
            installed.first.setdefault(entry.name, entry.path)
            installed.by_size.setdefault(info.st_size, {}).setdefault(_stamp(info), entry.path)
    return installed


def _digest(path: Path, stamp: _Stamp) -> bytes | None:
    digest = _digests.get(stamp)
    if digest is None:
        try:
            with path.open("rb") as f:
                digest = hashlib.file_digest(f, "sha256").digest()
        except OSError:
            return None
        if len(_digests) >= MAX_DIGESTS:
            _digests.clear()
        _digests[stamp] = digest
    return digest


def _stamp(info: os.stat_result) -> _Stamp:
    return info.st_dev, info.st_ino, info.st_mtime_ns, info.st_size


def _path_folders() -> list[str]:
    return os.environ.get("PATH", os.defpath).split(os.pathsep)


def _inside(path: Path, root: Path) -> bool:
    try:
        return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root))
    except (OSError, ValueError):
        return False
