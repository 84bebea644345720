"""The snapshot store: the project's files as git trees, in a git dir of our own in the data dir.

Every call runs `git` with `GIT_DIR` set to the store, `GIT_WORK_TREE` to the project root and
`GIT_INDEX_FILE` to the store's own index, and with the person's global and system git config shut out, so
nothing here reads or writes the person's `.git`, their index, refs or hooks; and the store's own config is
checked before every call, with the settings that make git run programs pinned (`gitconfig.py`). A snapshot
is one stat-cached pass (`ls-files` of what changed, `update-index` of those: an unchanged file costs one
`lstat`) then `write-tree`; the tree id is the checkpoint.

What is left out: what the project's `.gitignore` files and the person's `.git/info/exclude` said when the
person last changed them (`ignores.py`: frozen, so a turn that writes `*` there still has its files recorded),
and our own list (`.git`, the data dir when it lies inside the project, venvs, `node_modules`, `__pycache__`,
`.ipynb_checkpoints`). A file over the size cap is not recorded, nor a git repository of its own inside the
project (its git keeps its files, and an undo must not rewrite them); a snapshot names both in `skipped`.
What is not a file, a link or a folder (a named pipe, a socket), and whatever lies beyond a link (a tracked
folder swapped for a link), counts as gone: recorded as absent, so the undo puts back what was there, and
never a reason for the snapshot to fail.

Writing files back into the project is `restore.py`'s: nothing here writes the work tree.

All methods block; the service calls them off the event loop. One lock serialises them, since git's index
lock would make two at once fail.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .. import fs
from . import gitconfig
from .ignores import IGNORE_NAME, PERSON_EXCLUDE, FrozenRules, Sources
from .records import FileChange
from .restore import current, why

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""The id of git's empty tree, which every git knows without storing it: "no files" as a checkpoint."""

OWN_EXCLUDES = (".git", "node_modules", "__pycache__", ".ipynb_checkpoints", ".venv", "venv")
"""Left out of every snapshot, besides what `.gitignore` says: never the person's work, often huge."""

POSIX_CONFIG = {"core.protectNTFS": "false"}
"""Given to every git call where file names are plain bytes (Linux): git otherwise refuses, in silence
("Ignoring path", exit 0), to record any path through `GIT~1` or `.git.` (what `.git` may be called on a
Windows file system), so a turn's files there would outlive its undo. Restores never go through git
(`fs` writes them), so nothing of git's own is reached by recording them. Not on Windows, where those names
are `.git`, nor macOS, whose file system folds names git's HFS rules guard against."""
_REFUSED = "Ignoring path "
"""How `update-index` says, exiting 0, that it did not record a path (a name git's rules refuse)."""
_REF_PREFIX = "refs/checkpoints/"
ADOPT_ROUNDS = 4
"""How many times a snapshot lists the tree again under newly found ignore files (see `_adopt_new_ignores`)."""


class SnapshotError(Exception):
    """A git command of the store failed; the message is git's own, first line first."""


@dataclass(frozen=True)
class Snapshot:
    tree: str
    skipped: list[str] = field(default_factory=list)
    """Files over the size cap, left out of `tree`."""


@dataclass(frozen=True)
class Entry:
    """One file of a tree: its git mode (`100644`, `100755`, `120000`) and blob id."""

    mode: str
    blob: str


class SnapshotStore:
    """The git dir at `git_dir`, whose work tree is `work_tree`."""

    def __init__(self, git_dir: Path, work_tree: Path, *, max_file_bytes: int = 20 * 2**20,
                 excludes: Sequence[Path] = (), git: str | None = None,
                 protected: Callable[[Path], bool] | None = None) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.protected = protected
        """Asked with each absolute path a restore would write or remove; True refuses it (the global config
        folder, when the project holds it)."""
        self.frozen = FrozenRules(git_dir / "ignore-rules.json")
        self.max_file_bytes = max_file_bytes
        self.git = git or shutil.which("git") or "git"
        self._extra_excludes = [p for p in excludes]
        self._written: tuple[tuple[int, int, int, int], str] | None = None
        """The index as the last snapshot left it, and its tree: a snapshot that finds nothing to record and the
        index unchanged returns that tree without running `write-tree` (a step's second snapshot usually)."""
        self._ignores_at: tuple[tuple[int, int, int, int], frozenset[str]] | None = None
        """The ignore files of one version of the index (`_recorded_ignores`)."""
        self._lock = threading.RLock()
        self._env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        self._env.update({
            "GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(work_tree), "GIT_INDEX_FILE": str(git_dir / "index"),
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0",
            "GIT_LITERAL_PATHSPECS": "1", "LC_ALL": "C",
        })
        config = {**dict(gitconfig.COMMAND_LINE),
                  **(POSIX_CONFIG if os.name == "posix" and sys.platform != "darwin" else {})}
        self._env["GIT_CONFIG_COUNT"] = str(len(config))
        for i, (key, value) in enumerate(config.items()):
            self._env[f"GIT_CONFIG_KEY_{i}"], self._env[f"GIT_CONFIG_VALUE_{i}"] = key, value

    # ------------------------------------------------------------------------------------------ setup

    def exists(self) -> bool:
        return (self.git_dir / "HEAD").is_file() and (self.git_dir / "objects").is_dir()

    def ensure(self) -> None:
        """Create the store if it is not there yet (a bare git dir whose work tree we pass every time)."""
        with self._lock:
            if self.exists():
                return
            self.git_dir.parent.mkdir(parents=True, exist_ok=True)
            plain = {k: v for k, v in self._env.items() if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")}
            proc = subprocess.run([self.git, "init", "-q", "--bare", str(self.git_dir)], capture_output=True,
                                  text=True, env=plain, cwd=self.git_dir.parent)
            if proc.returncode != 0:
                raise SnapshotError(_first(proc.stderr) or "git init failed")
            try:  # git's findings about the file system, then nothing but our own settings (`gitconfig.py`)
                made = (self.git_dir / "config").read_text(encoding="utf-8", errors="replace")
                probed = {key: found[1].lower() for key in gitconfig.PROBED
                          if (found := re.search(rf"^\t{key.split('.')[1]} = (true|false)$", made, re.M | re.I))}
                gitconfig.write(self.git_dir, probed)
            except OSError as exc:
                raise SnapshotError(f"could not write the checkpoint store's config: {why(exc)}") from exc

    def healthy(self, trees: Iterable[str] = ()) -> str | None:
        """None when the store answers and holds every tree in `trees`; else what is wrong, for the person."""
        if not self.exists():
            return f"the checkpoint store {self.git_dir} is missing"
        with self._lock:
            try:
                self._run("rev-parse", "--git-dir")
                wanted = [t for t in dict.fromkeys(trees) if t and t != EMPTY_TREE]
                if wanted:
                    out = self._run("cat-file", "--batch-check", stdin="".join(f"{t}\n" for t in wanted))
                    bad = [line.split()[0] for line in out.splitlines() if not line.endswith(" tree") and
                           " tree " not in line]
                    if bad:
                        return (f"the checkpoint store {self.git_dir} is damaged (checkpoint {bad[0][:12]} is missing "
                                "or unreadable)")
                    # reading every file back finds damaged objects, not only missing ones
                    for tree in wanted:
                        self._run("ls-tree", "-r", tree)
            except SnapshotError as exc:
                return f"the checkpoint store {self.git_dir} is damaged ({exc})"
        return None

    # ------------------------------------------------------------------------------------------ snapshots

    def snapshot(self, *, fresh: bool = False) -> Snapshot:
        """Record the project's files now; cheap when little changed.

        One stat pass over the tree: `ls-files` names what is new, changed or gone since the store's index last
        saw it (its stat cache makes an unchanged file cost one `lstat`), and only those paths are hashed and
        written into the index (`update-index`), the ones over the size cap left out. `add -A` would walk the
        tree a second time to find the same paths. Each path's kind is read without following a link (its folder
        walked once by descriptors, `_entries`): a path under a link, or one that is no file or link, is dropped
        from the index (`--force-remove`), since git refuses to add either and would fail the whole snapshot.

        Args:
            fresh: the first snapshot of a turn, where the person's edits of ignore files are adopted.
        """
        with self._lock:
            self.ensure()
            adopting = fresh or not self.frozen.known()
            rules = self._frozen_rules(fresh)
            exclude = self._write_excludes(rules)
            how = ("--exclude-standard",) if rules is None else (f"--exclude-from={exclude}",)
            out = self._run("ls-files", "-z", "--others", "--modified", *how)
            if rules is not None and adopting:
                out = self._adopt_new_ignores(out)
            recorded, gone, skipped = [], [], []
            listed = [rel for rel in dict.fromkeys(out.split("\0")) if rel]
            if not listed and not adopting and self._written is not None and self._written[0] == self._index_key():
                # Nothing to record and the index as we left it: its tree, without `write-tree`. What the ignore
                # files hold is noted all the same (`.git/info/exclude` changes without being listed).
                if rules is not None:
                    self.frozen.saw(self._ignore_sources())
                return Snapshot(self._written[1], [])
            entries = _entries(self.work_tree, [rel for rel in listed if not rel.endswith("/")])
            for rel in listed:
                if rel.endswith("/"):
                    skipped.append(rel)  # `dir/`: a repository of its own, which an undo must not rewrite
                    continue
                found = entries[rel]
                if found is not None and stat.S_ISREG(found.st_mode) and found.st_size > self.max_file_bytes:
                    skipped.append(rel)
                elif found is not None and (stat.S_ISREG(found.st_mode) or stat.S_ISLNK(found.st_mode)):
                    recorded.append(rel)
                else:
                    gone.append(rel)  # missing, beyond a link, a folder now, a pipe: not a file any more
            if skipped:
                gone += sorted(set(self._run("ls-files", "-z", "--", *skipped).split("\0")) - {""})
            if gone:
                self._run("update-index", "-z", "--force-remove", "--stdin", stdin="".join(f"{p}\0" for p in gone))
            if recorded:
                said: list[str] = []
                self._run("update-index", "-z", "--add", "--remove", "--replace", "--stdin",
                          stdin="".join(f"{p}\0" for p in recorded), said=said)
                skipped += [line[len(_REFUSED):] for line in said if line.startswith(_REFUSED)]  # named, not silent
            tree = self._run("write-tree").strip()
            if rules is not None:
                self.frozen.saw(self._ignore_sources())
            written = self._index_key()
            self._written = (written, tree) if not skipped and written is not None else None
            return Snapshot(tree, skipped)

    def _index_key(self) -> tuple[int, int, int, int] | None:
        """What tells one version of the store's index from another: git never rewrites it in place but
        renames a new file over it, so its inode, size and times move with every write (ours or another
        process's on the same store)."""
        try:
            st = os.stat(self.git_dir / "index")
        except OSError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns

    def _recorded_ignores(self) -> set[str]:
        """The ignore files the store's index holds. Listing it is a git call and a pass over every path, and
        each snapshot asks twice (before and after recording); the answer is kept while the index is the same
        one, so an unchanged tree costs what it did before ignore files were frozen (10k files: ~45 ms → ~25)."""
        key = self._index_key()
        if key is not None and self._ignores_at is not None and self._ignores_at[0] == key:
            return set(self._ignores_at[1])
        listed = self._run("ls-files", "-z").split("\0")
        paths = {p for p in listed if p == IGNORE_NAME or p.endswith("/" + IGNORE_NAME)}
        self._ignores_at = (key, frozenset(paths)) if key is not None else None
        return paths

    def _frozen_rules(self, fresh: bool) -> list[str] | None:
        """The person's ignore rules in force (`ignores.py`); None would let git read them live."""
        return self.frozen.rules(self._ignore_sources(), fresh=fresh)

    def _adopt_new_ignores(self, listed: str) -> str:
        """The listing again under the ignore files it found that no snapshot had seen (`FrozenRules.adopt`),
        as often as adopting some reveals more (a `!` in one can show another folder's), at most
        `ADOPT_ROUNDS` times."""
        for _ in range(ADOPT_ROUNDS):
            found: Sources = {}
            for rel in listed.split("\0"):
                if rel == IGNORE_NAME or rel.endswith("/" + IGNORE_NAME):
                    data = current(self.work_tree, rel, links=False)
                    found[rel] = None if data is None else data.decode("utf-8", errors="replace")
            rules = self.frozen.adopt(found) if found else None
            if rules is None:
                break
            exclude = self._write_excludes(rules)
            listed = self._run("ls-files", "-z", "--others", "--modified", f"--exclude-from={exclude}")
        return listed

    def _ignore_sources(self) -> Sources:
        """Every ignore file the store knows of (recorded ones, and ones it froze or saw), with its content now,
        read without following a link."""
        paths = self._recorded_ignores() | self.frozen.paths() | {PERSON_EXCLUDE, IGNORE_NAME}
        out: Sources = {}
        for path in sorted(paths):
            data = current(self.work_tree, path, links=False)
            out[path] = None if data is None else data.decode("utf-8", errors="replace")
        return out

    def _write_excludes(self, rules: list[str] | None) -> Path:
        lines = [f"{name}/" if name in ("venv", ".venv") else name for name in OWN_EXCLUDES]
        lines += [f"/{rel}/" for rel in self._venvs()]
        for path in self._extra_excludes:
            try:
                rel = path.resolve().relative_to(self.work_tree.resolve())
            except ValueError:
                continue
            if str(rel) not in ("", "."):
                lines.append(f"/{rel.as_posix()}/")
        if rules is None:
            person = self.work_tree / ".git" / "info" / "exclude"
            if person.is_file():
                with contextlib.suppress(OSError):
                    lines += person.read_text(errors="replace").splitlines()
        else:  # ours last: later lines win, so no `!node_modules` of the project's brings them back
            lines = rules + lines
        text = "\n".join(lines) + "\n"
        target = self.git_dir / "info" / "exclude"
        try:
            if target.read_text() == text:
                return target
        except OSError:
            pass
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        return target

    def _venvs(self) -> list[str]:
        """Folders holding `pyvenv.cfg` (a virtualenv, whatever its name), at the top or one level down."""
        found = []
        try:
            with os.scandir(self.work_tree) as top:
                dirs = [e for e in top if e.is_dir(follow_symlinks=False) and e.name != ".git"]
        except OSError:
            return []
        for entry in dirs:
            if os.path.isfile(os.path.join(entry.path, "pyvenv.cfg")):
                found.append(entry.name)
                continue
            try:
                with os.scandir(entry.path) as inner:
                    found += [f"{entry.name}/{e.name}" for e in inner if e.is_dir(follow_symlinks=False)
                              and os.path.isfile(os.path.join(e.path, "pyvenv.cfg"))]
            except OSError:
                continue
        return found

    # ------------------------------------------------------------------------------------------ reading

    def changes(self, before: str, after: str) -> list[FileChange]:
        """What changed from tree `before` to tree `after`, file by file."""
        if before == after:
            return []
        with self._lock:
            status = self._run("diff-tree", "-r", "-z", "--no-renames", "--name-status", before, after).split("\0")
            numstat = self._run("diff-tree", "-r", "-z", "--no-renames", "--numstat", before, after).split("\0")
        kinds: dict[str, Literal["added", "modified", "deleted"]] = {}
        for code, path in zip(status[0::2], status[1::2], strict=False):
            kinds[path] = "added" if code[:1] == "A" else "deleted" if code[:1] == "D" else "modified"
        out = []
        for record in numstat:
            if not record:
                continue
            added, removed, path = record.split("\t", 2)
            binary = added == "-"
            out.append(FileChange(path, kinds.get(path, "modified"), 0 if binary else int(added),
                                  0 if binary else int(removed), binary))
        return out

    def patch(self, before: str, after: str) -> str:
        """The unified diff from tree `before` to tree `after`."""
        if before == after:
            return ""
        with self._lock:
            return self._run("diff-tree", "-r", "-p", "--no-renames", "--no-color", before, after)

    def entries(self, tree: str, paths: Sequence[str]) -> dict[str, Entry]:
        """The files among `paths` that `tree` holds."""
        if tree == EMPTY_TREE or not paths:
            return {}
        wanted = set(paths)
        with self._lock:  # many paths: list the whole tree rather than pass an argument list too long for exec
            out = self._run("ls-tree", "-r", "-z", "--full-tree", tree, *(("--", *paths) if len(paths) <= 500 else ()))
        found = {}
        for record in out.split("\0"):
            if not record:
                continue
            meta, path = record.split("\t", 1)
            mode, kind, blob = meta.split()
            if kind == "blob" and path in wanted:
                found[path] = Entry(mode, blob)
        return found

    def blobs(self, ids: Iterable[str]) -> dict[str, bytes]:
        """The content of each blob, read in one `cat-file --batch`.

        Raises:
            SnapshotError: a blob is missing or unreadable (a damaged store).
        """
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        with self._lock:
            self._verified()
            proc = subprocess.run([self.git, "cat-file", "--batch"], input="".join(f"{b}\n" for b in wanted).encode(),
                                  capture_output=True, env=self._env, cwd=self.work_tree)
        if proc.returncode != 0:
            raise SnapshotError(_first(proc.stderr))
        out, data, pos = {}, proc.stdout, 0
        for blob in wanted:
            end = data.index(b"\n", pos)
            header = data[pos:end].decode()
            if header.endswith("missing") or len(header.split()) != 3:
                raise SnapshotError(f"object {blob[:12]} is missing")
            size = int(header.split()[2])
            out[blob] = data[end + 1:end + 1 + size]
            pos = end + 1 + size + 1
        return out

    # ------------------------------------------------------------------------------------------ retention

    def keep(self, trees: Iterable[str]) -> None:
        """Hold a ref on each tree, so pruning keeps it."""
        lines = "".join(f"update {_REF_PREFIX}{t} {t}\n" for t in dict.fromkeys(trees) if t and t != EMPTY_TREE)
        if lines:
            with self._lock:
                self._run("update-ref", "--stdin", stdin=lines)

    def prune(self, live: Iterable[str]) -> int:
        """Drop the refs of trees not in `live` and delete what nothing reaches any more; returns refs dropped."""
        alive = set(live)
        with self._lock:
            refs = self._run("for-each-ref", "--format=%(refname)", _REF_PREFIX).split()
            dead = [r for r in refs if r[len(_REF_PREFIX):] not in alive]
            if dead:
                self._run("update-ref", "--stdin", stdin="".join(f"delete {r}\n" for r in dead))
            self._run("gc", "--prune=now", "--quiet")
            self._written = None  # its tree may be gone with the rest
        return len(dead)

    # ------------------------------------------------------------------------------------------ git

    def _run(self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None,
             said: list[str] | None = None) -> str:
        """git's output; `said` gets what it wrote to stderr when it succeeded (a path it would not record)."""
        self._verified()
        try:
            proc = subprocess.run([self.git, *args], input=stdin, capture_output=True, text=True,
                                  errors="surrogateescape", env={**self._env, **(env or {})}, cwd=self.work_tree)
        except OSError as exc:
            raise SnapshotError(f"could not run git: {exc}") from exc
        if proc.returncode != 0:
            raise SnapshotError(_first(proc.stderr) or f"git {args[0]} failed ({proc.returncode})")
        if said is not None:
            said += proc.stderr.splitlines()
        return proc.stdout


    def _verified(self) -> None:
        """The store's config back to what `ensure` wrote before git reads it (`gitconfig.verify`)."""
        if not self.git_dir.is_dir():
            return  # git says the store is missing
        try:
            with self._lock:
                gitconfig.verify(self.git_dir)
        except OSError as exc:
            raise SnapshotError(f"could not check the checkpoint store's config: {why(exc)}") from exc


def unified(path: str, old: bytes | None, new: bytes | None) -> str:
    """A unified diff of one file between two contents, as a person reads it (binary said in one line)."""
    a, b = old or b"", new or b""
    if b"\0" in a[:8000] or b"\0" in b[:8000]:
        return f"Binary file {path} differs\n"
    return "".join(difflib.unified_diff(
        a.decode(errors="replace").splitlines(keepends=True), b.decode(errors="replace").splitlines(keepends=True),
        fromfile=f"a/{path}" if old is not None else "/dev/null",
        tofile=f"b/{path}" if new is not None else "/dev/null"))


def _entries(root: Path, rels: Sequence[str]) -> dict[str, os.stat_result | None]:
    """`lstat` of each path, None where nothing is there without following a link: what `fs.kind` answers,
    but each folder is walked (by descriptors, no link followed) once, not once per file under it, and the
    entries are then read by one `lstat`. A first snapshot lists every file: at 10k files in 100 folders the
    walk per file made it ~1.5x slower."""
    base = os.path.realpath(root)
    folders: dict[str, bool] = {"": True}
    out: dict[str, os.stat_result | None] = {}
    for rel in rels:
        parent = rel.rpartition("/")[0]
        real = folders.get(parent)
        if real is None:
            real = folders[parent] = fs.kind(root, parent) == "dir"
        try:
            out[rel] = os.lstat(os.path.join(base, rel)) if real else None
        except OSError:
            out[rel] = None
    return out


def _first(stderr: bytes | str) -> str:
    text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.lower().startswith(("fatal", "error"))]
    return (errors or lines or [""])[0]
