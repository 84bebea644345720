"""The snapshot store: the project's files as git trees, in a git dir of our own in the data dir.

Every call runs `git` with `GIT_DIR` set to the store, `GIT_WORK_TREE` to the project root and
`GIT_INDEX_FILE` to the store's own index, and with the person's global and system git config shut out, so
nothing here reads or writes the person's `.git`, their index, refs or hooks. A snapshot is one stat-cached pass
(`ls-files` of what changed, `update-index` of those: an unchanged file costs one `lstat`) then `write-tree`; the
tree id is the checkpoint.

What is left out: what the project's `.gitignore` files say, the person's `.git/info/exclude`, and our own
list (`.git`, the data dir when it lies inside the project, venvs, `node_modules`, `__pycache__`,
`.ipynb_checkpoints`). A file over the size cap is not recorded, nor a git repository of its own inside the
project (its git keeps its files, and an undo must not rewrite them); a snapshot names both in `skipped`.

All methods block; the service calls them off the event loop. One lock serialises them, since git's index
lock would make two at once fail.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import shutil
import stat
import subprocess
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .records import FileChange

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""The id of git's empty tree, which every git knows without storing it: "no files" as a checkpoint."""

OWN_EXCLUDES = (".git", "node_modules", "__pycache__", ".ipynb_checkpoints", ".venv", "venv")
"""Left out of every snapshot, besides what `.gitignore` says: never the person's work, often huge."""

_REF_PREFIX = "refs/checkpoints/"


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
                 excludes: Sequence[Path] = (), git: str | None = None) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.max_file_bytes = max_file_bytes
        self.git = git or shutil.which("git") or "git"
        self._extra_excludes = [p for p in excludes]
        self._lock = threading.RLock()
        self._env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        self._env.update({
            "GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(work_tree), "GIT_INDEX_FILE": str(git_dir / "index"),
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0",
            "GIT_LITERAL_PATHSPECS": "1", "LC_ALL": "C",
        })

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
            for key, value in (("core.bare", "false"), ("core.autocrlf", "false"), ("core.untrackedCache", "true"),
                               ("core.quotePath", "false"), ("core.logAllRefUpdates", "false"),
                               ("gc.auto", "0"), ("core.fsmonitor", "false"), ("core.hooksPath", os.devnull)):
                self._run("config", key, value)

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

    def snapshot(self) -> Snapshot:
        """Record the project's files now; cheap when little changed.

        One stat pass over the tree: `ls-files` names what is new, changed or gone since the store's index last
        saw it (its stat cache makes an unchanged file cost one `lstat`), and only those paths are hashed and
        written into the index (`update-index`), the ones over the size cap left out. `add -A` would walk the
        tree a second time to find the same paths.
        """
        with self._lock:
            self.ensure()
            self._write_excludes()
            out = self._run("ls-files", "-z", "--others", "--modified", "--exclude-standard")
            recorded, skipped = [], []
            for rel in dict.fromkeys(out.split("\0")):
                if not rel:
                    continue
                try:
                    st = os.lstat(self.work_tree / rel)
                except OSError:
                    recorded.append(rel)  # gone: `--remove` drops it from the index
                    continue
                if rel.endswith("/") or (stat.S_ISREG(st.st_mode) and st.st_size > self.max_file_bytes):
                    skipped.append(rel)  # `dir/`: a repository of its own, which an undo must not rewrite
                else:
                    recorded.append(rel)
            if skipped:
                tracked = set(self._run("ls-files", "-z", "--", *skipped).split("\0")) - {""}
                if tracked:
                    self._run("update-index", "-z", "--force-remove", "--stdin",
                              stdin="".join(f"{p}\0" for p in sorted(tracked)))
            if recorded:
                self._run("update-index", "-z", "--add", "--remove", "--replace", "--stdin",
                          stdin="".join(f"{p}\0" for p in recorded))
            tree = self._run("write-tree").strip()
            return Snapshot(tree, skipped)

    def _write_excludes(self) -> None:
        lines = [f"{name}/" if name in ("venv", ".venv") else name for name in OWN_EXCLUDES]
        lines += [f"/{rel}/" for rel in self._venvs()]
        for path in self._extra_excludes:
            try:
                rel = path.resolve().relative_to(self.work_tree.resolve())
            except ValueError:
                continue
            if str(rel) not in ("", "."):
                lines.append(f"/{rel.as_posix()}/")
        person = self.work_tree / ".git" / "info" / "exclude"
        if person.is_file():
            with contextlib.suppress(OSError):
                lines += person.read_text(errors="replace").splitlines()
        text = "\n".join(lines) + "\n"
        target = self.git_dir / "info" / "exclude"
        try:
            if target.read_text() == text:
                return
        except OSError:
            pass
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

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
        kinds = {}
        for code, path in zip(status[0::2], status[1::2], strict=False):
            kinds[path] = {"A": "added", "D": "deleted"}.get(code[:1], "modified")
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

    # ------------------------------------------------------------------------------------------ writing

    def write_files(self, files: dict[str, tuple[str, bytes] | None]) -> None:
        """Put each path in the state given: `(mode, content)` written, None deleted (empty folders go too)."""
        root = self.work_tree
        for rel, state in files.items():
            target = root / rel
            if state is None:
                if target.is_symlink() or target.is_file():
                    target.unlink()
                    _prune_empty(target.parent, root)
                continue
            mode, content = state
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink() or (mode == "120000" and target.exists()):
                target.unlink()
            if mode == "120000":
                os.symlink(content.decode(errors="surrogateescape"), target)
                continue
            target.write_bytes(content)
            want_exec = mode == "100755"
            current = target.stat().st_mode
            is_exec = bool(current & stat.S_IXUSR)
            if want_exec != is_exec:
                bits = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
                target.chmod(current | bits if want_exec else current & ~bits)

    def current(self, rel: str) -> bytes | None:
        """A work-tree file's content now (a symlink's target), None when it is not there."""
        path = self.work_tree / rel
        try:
            if path.is_symlink():
                return os.readlink(path).encode(errors="surrogateescape")
            return path.read_bytes() if path.is_file() else None
        except OSError:
            return None

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
        return len(dead)

    # ------------------------------------------------------------------------------------------ git

    def _run(self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> str:
        try:
            proc = subprocess.run([self.git, *args], input=stdin, capture_output=True, text=True,
                                  errors="surrogateescape", env={**self._env, **(env or {})}, cwd=self.work_tree)
        except OSError as exc:
            raise SnapshotError(f"could not run git: {exc}") from exc
        if proc.returncode != 0:
            raise SnapshotError(_first(proc.stderr) or f"git {args[0]} failed ({proc.returncode})")
        return proc.stdout


def unified(path: str, old: bytes | None, new: bytes | None) -> str:
    """A unified diff of one file between two contents, as a person reads it (binary said in one line)."""
    a, b = old or b"", new or b""
    if b"\0" in a[:8000] or b"\0" in b[:8000]:
        return f"Binary file {path} differs\n"
    return "".join(difflib.unified_diff(
        a.decode(errors="replace").splitlines(keepends=True), b.decode(errors="replace").splitlines(keepends=True),
        fromfile=f"a/{path}" if old is not None else "/dev/null",
        tofile=f"b/{path}" if new is not None else "/dev/null"))


def _prune_empty(folder: Path, root: Path) -> None:
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _first(stderr: bytes | str) -> str:
    text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.lower().startswith(("fatal", "error"))]
    return (errors or lines or [""])[0]
