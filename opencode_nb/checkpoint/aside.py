"""Files over the size cap, copied aside just before a file tool writes them, so an undo can put them back.

A checkpoint does not hold a file over the cap (`checkpoints.max_file_mb`): hashing gigabytes at every step
would stall every turn. But a file tool (`write`, `edit`) names the one file it is about to change, so that
file alone can be copied aside first, once per turn, at the cost of one copy. Kept only when the file is as
it was at the turn's start (its size, mtime and inode then are noted for every file the cap left out), so the
copy is the turn's "before", not something a command of the same turn already changed; and up to
`ASIDE_MAX_BYTES`, since the copy is read back into memory to be restored, and `ASIDE_TOTAL_BYTES` for all
turns together. After each later step the copy's
file is fingerprinted again (sha256, only when its size or mtime moved): an undo then knows whether the file
is still as the agent left it (restored without asking) or someone changed it since (asked, as any conflict).

What is not covered, and an undo names as not taken back: a big file a command (`bash`, a cell) changes,
since nothing says beforehand which file it will touch; a file over `ASIDE_MAX_BYTES`; redo of such a file
(what the agent left is not kept). Copies live in the store (`<store>/aside/<turn>/`) and go with their turn's
checkpoints (retention, or a new prompt after an undo).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import fs

ASIDE_MAX_BYTES = 512 * 2**20
"""The biggest file copied aside: a restore reads the copy into memory."""
ASIDE_TOTAL_BYTES = 2 * 2**30
"""All copies together, over every turn kept: a turn rewriting the same big file at each prompt would
otherwise keep one copy per turn for `checkpoints.keep_turns` turns. The oldest turns' copies go first (their
files are then named as not taken back, like any big file without a copy)."""
WRITERS = frozenset({"write", "edit"})
"""Tools whose `path` argument names the one file they change."""


@dataclass(frozen=True)
class Kept:
    """A copy of a file as it was before a turn changed it."""

    path: str
    copy: Path
    mode: int
    left: str | None
    """sha256 of the file as the agent left it at the turn's last step (None: not there)."""


class Aside:
    """The copies kept for each turn, under `folder`, of files under `root`."""

    def __init__(self, folder: Path, root: Path, max_file_bytes: int) -> None:
        self.folder = folder
        self.root = root
        self.max_file_bytes = max_file_bytes

    def mark_start(self, turn: str, skipped: list[str]) -> None:
        """Note how each file the cap left out was at the turn's start, and which repositories of their own
        (`dir/`) were there: one that appears later is the turn's, and its undo may offer to delete it."""
        files = [p for p in skipped if not p.endswith("/")]
        manifest = self._load(turn)
        manifest["start"] = {p: _stat(self.root, p) for p in files}
        manifest["repos"] = sorted(p for p in skipped if p.endswith("/"))
        self._save(turn, manifest)

    def repos_at_start(self, turn: str) -> list[str] | None:
        """The repositories inside the project when `turn` began; None when not known (its note is gone)."""
        repos = self._load(turn).get("repos")
        return list(repos) if isinstance(repos, list) else None

    def keep(self, turn: str, tool: str, args: Any) -> None:
        """Before `tool` runs with `args`: copy the big file it will write aside, if it is still the turn's start."""
        if tool not in WRITERS or not isinstance(args, dict) or not isinstance(args.get("path"), str):
            return
        rel = self._relative(args["path"])
        if rel is None:
            return
        manifest = self._load(turn)
        start = manifest.get("start", {})
        if rel not in start or rel in manifest.get("kept", {}) or start[rel] is None:
            return
        size = start[rel][0]
        if size <= self.max_file_bytes or size > ASIDE_MAX_BYTES or _stat(self.root, rel) != start[rel]:
            return
        if not self._make_room(turn, size):
            return
        target = self.folder / turn / f"{len(manifest.get('kept', {})):04d}"
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            source = os.fdopen(fs.open_file(self.root, rel), "rb")
        except OSError:
            return
        with source:
            opened = os.fstat(source.fileno())
            if _fingerprint(opened) != start[rel]:  # swapped or changed since it was looked at: not the start
                return
            mode = opened.st_mode & 0o7777
            with open(target, "wb") as out:
                shutil.copyfileobj(source, out, 1 << 20)
        manifest.setdefault("kept", {})[rel] = {"copy": target.name, "mode": mode, "left": None, "seen": None}
        self._save(turn, manifest)

    def left(self, turn: str) -> None:
        """After a step: fingerprint each kept file as it is now (only when its stat moved)."""
        manifest = self._load(turn)
        kept = manifest.get("kept", {})
        changed = False
        for rel, entry in kept.items():
            now = _stat(self.root, rel)
            if now != entry.get("seen"):
                entry["seen"], entry["left"] = now, _digest(self.root, rel)
                changed = True
        if changed:
            self._save(turn, manifest)

    def kept(self, turns: list[str]) -> dict[str, Kept]:
        """The earliest copy of each file among `turns` (oldest first): the state before all of them."""
        out: dict[str, Kept] = {}
        for turn in turns:
            for rel, entry in self._load(turn).get("kept", {}).items():
                if rel not in out:
                    out[rel] = Kept(rel, self.folder / turn / entry["copy"], int(entry["mode"]), entry.get("left"))
        return out

    def now(self, rel: str) -> str | None:
        """sha256 of the file as it is now, None when no file is there."""
        return _digest(self.root, rel)

    def drop(self, live: set[str]) -> None:
        """Delete the copies of turns no longer in `live` (pruned, or discarded after an undo)."""
        with contextlib.suppress(OSError), os.scandir(self.folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False) and entry.name not in live:
                    shutil.rmtree(entry.path, ignore_errors=True)

    def _make_room(self, turn: str, size: int) -> bool:
        """Delete the oldest other turns' copies until `size` more fits in `ASIDE_TOTAL_BYTES`; False when even
        this turn's own copies leave no room (the file is then not kept)."""
        usage: list[tuple[float, str, int]] = []
        with contextlib.suppress(OSError), os.scandir(self.folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    usage.append((entry.stat(follow_symlinks=False).st_mtime, entry.name, _folder_bytes(entry.path)))
        total = sum(used for _, _, used in usage)
        for _, name, used in sorted(usage):
            if total + size <= ASIDE_TOTAL_BYTES:
                break
            if name != turn:
                shutil.rmtree(self.folder / name, ignore_errors=True)
                total -= used
        return total + size <= ASIDE_TOTAL_BYTES

    def _relative(self, given: str) -> str | None:
        root = Path(os.path.realpath(self.root))
        path = Path(given) if os.path.isabs(given) else Path(self.root) / given
        try:
            rel = Path(os.path.normpath(path)).relative_to(Path(os.path.normpath(self.root)))
        except ValueError:
            try:
                rel = Path(os.path.normpath(path)).relative_to(root)
            except ValueError:
                return None
        text = rel.as_posix()
        return None if text in ("", ".") or text.startswith("..") else text

    def _load(self, turn: str) -> dict[str, Any]:
        try:
            return json.loads((self.folder / turn / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    def _save(self, turn: str, manifest: dict[str, Any]) -> None:
        folder = self.folder / turn
        folder.mkdir(parents=True, exist_ok=True)
        temp = folder / "manifest.json.tmp"
        temp.write_text(json.dumps(manifest, sort_keys=True), encoding="utf-8")
        os.replace(temp, folder / "manifest.json")


def _folder_bytes(folder: str) -> int:
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        return sum(e.stat(follow_symlinks=False).st_size for e in entries if e.is_file(follow_symlinks=False))
    return 0


def _stat(root: Path, rel: str) -> list[int] | None:
    """Size, mtime and inode of a file (never through a link), None when no file is there."""
    try:
        st = fs.lstat(root, rel)
    except OSError:
        return None
    return _fingerprint(st) if st is not None and stat.S_ISREG(st.st_mode) else None


def _fingerprint(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def _digest(root: Path, rel: str) -> str | None:
    digest = hashlib.sha256()
    try:
        with os.fdopen(fs.open_file(root, rel), "rb") as source:
            for chunk in iter(lambda: source.read(1 << 20), b""):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()
