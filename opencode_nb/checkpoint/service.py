"""`ws.checkpoints`: recording the project's files around each turn, and reading back what turns changed.

The loop calls `before_tool` and `after_tool` around every tool call that may change files (any tool but
the few that only read or talk): the first of a turn records the tree "before", each one records the
tree after it (one step, kept for per-step diffs) and moves the turn's "after" forward. Every later
`before_tool` of the turn records the tree again when no call of the session is running: what changed since
the last step was changed between the agent's steps, by someone else (the person saving a file while the
model thinks), and is kept as a step of its own (`BETWEEN_STEPS`) that undo never takes back unasked. What a
turn changed, as listings, diffs and undo summaries name it, is what its tools wrote (`authors.py`): not
those saves, nor the session's own notebook saved by JupyterLab meanwhile. Snapshots run in a worker
thread, so a kernel's event loop never waits on git; a failure never fails the tool — checkpoints turn off
with a notice in `why_not` and the log.

Retention: `checkpoints.keep_turns` turns of the project keep their trees; past that (plus a tenth, so the
pruning runs once in a while rather than after every turn) the oldest turns' trees are dropped and git
deletes what no live checkpoint reaches. A snapshot that fails for lack of space prunes to half first and
tries once more.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import secrets
from ..config.paths import global_config_dir
from ..config.schema import CheckpointsConfig
from ..errors import NotFoundError, OpencodeNbError
from ..session.service import SessionService
from ..session.store.checkpoints import TurnRow
from ..session.store.database import SessionStore
from .aside import WRITERS, Aside
from .authors import BETWEEN_STEPS, agents_paths, own_notebook
from .nbdiff import is_notebook, notebook_diff
from .records import FileChange, TurnRecord
from .store import EMPTY_TREE, Snapshot, SnapshotError, SnapshotStore
from .text import patch_sections, redact_patch

log = logging.getLogger(__name__)

READ_ONLY_TOOLS = frozenset({
    "read", "glob", "grep", "list", "notebook_read", "notebook_edit", "question", "skill", "todowrite",
    "todoread", "variables", "webfetch", "websearch", "plan_enter",
})
"""Tools that change no file of the project: no checkpoint around them. Every other tool (a person's own,
an MCP server's) may write files, so it gets one."""

CHANGES_KEPT = 512
"""How many answers of `_changed` are kept (a few hundred turns' worth)."""
_NO_SPACE = ("no space left", "disk quota", "quota exceeded", "file too large")


def project_key(root: Path) -> str:
    """One store per project root, named so two checkouts never share one."""
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    return f"{root.name or 'root'}-{digest}"


class Checkpoints:
    """The checkpoints of one project, recorded per session turn in the session store."""

    def __init__(self, sessions: SessionService, root: Path, data_dir: Path,
                 settings: CheckpointsConfig | None = None, *, git: str | None = None) -> None:
        self.sessions = sessions
        self.root = root
        self.settings = settings or CheckpointsConfig()
        git = git if git is not None else shutil.which("git")
        self.git_dir = data_dir / "checkpoints" / f"{project_key(root)}.git"
        self.snapshots = SnapshotStore(self.git_dir, root, max_file_bytes=int(self.settings.max_file_mb * 2**20),
                                       excludes=[data_dir], git=git or "git", protected=_outside_the_project(root))
        self.aside = Aside(self.git_dir / "aside", root, self.snapshots.max_file_bytes)
        """Big files copied aside before a file tool writes them (`aside.py`)."""
        self._off: str | None = _why_off(self.settings, git, root)
        self._begun: set[str] = set()
        self._running: dict[str, int] = {}
        """Tool calls of each session between `before_tool` and `after_tool`: a snapshot between steps is taken
        only when none runs, so one call's writes are never mistaken for the person's."""
        self._last: dict[str, str] = {}
        """The latest tree recorded for each turn."""
        self._locks: dict[str, asyncio.Lock] = {}
        self._warming: asyncio.Task[Snapshot | None] | None = None
        self._changes: dict[tuple[str, str], list[FileChange]] = {}
        """What changed between two trees: trees are named by their content, so an answer never goes stale, and
        listing a session's turns after each run costs one git call for the new turn only."""
        self._authored: dict[tuple[str, str, str], set[str]] = {}
        """The paths each turn's tools wrote, by turn, last tree and notebook: a step never changes once kept."""
        if self._off is not None and self.settings.enabled:
            log.warning("%s", self._off)

    @property
    def store(self) -> SessionStore:
        return self.sessions.store

    @property
    def available(self) -> bool:
        """Whether file changes are being recorded (and so can be undone)."""
        return self._off is None

    @property
    def why_not(self) -> str | None:
        """Why checkpoints are off, for the person; None while they work."""
        return self._off

    # ------------------------------------------------------------------------------------------ recording

    def warm(self) -> None:
        """Hash the project once in the background if the store is new, while the model thinks: the first
        snapshot reads every file (about a second for 10,000), every later one only `lstat`s them."""
        if self._off is not None or self._warming is not None or (self.git_dir / "index").exists():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._warming = loop.create_task(self._snapshot())

    async def before_tool(self, session_id: str, tool: str, args: Any = None) -> None:
        """Record the tree before the turn's first possible change (once per turn), what changed since the last
        step, and a copy of the big file a file tool is about to write (`args`: the tool's input)."""
        if self._off is not None or tool in READ_ONLY_TOOLS:
            return
        idle = self._running.get(session_id, 0) == 0
        self._running[session_id] = self._running.get(session_id, 0) + 1
        try:
            if idle:
                await self._between(session_id)
            await self._before(session_id)
            turn = self._turn_of(session_id) if tool in WRITERS else None
            if turn is not None and turn in self._begun:
                await asyncio.to_thread(self.aside.keep, turn, tool, args)
        except Exception as exc:  # never the tool's failure: recording stops, and says why
            log.exception("recording a checkpoint failed")
            self.turn_off(f"checkpoints are off after an error ({type(exc).__name__}: {exc})")

    async def after_tool(self, session_id: str, tool: str) -> None:
        """Record the tree after a step that may have changed files."""
        if tool in READ_ONLY_TOOLS:
            return
        self._running[session_id] = max(0, self._running.get(session_id, 0) - 1)
        if self._off is not None:
            return
        try:
            await self._after(session_id, tool)
        except Exception as exc:
            log.exception("recording a checkpoint failed")
            self.turn_off(f"checkpoints are off after an error ({type(exc).__name__}: {exc})")

    async def _before(self, session_id: str) -> None:
        turn = self._turn_of(session_id)
        if turn is None or turn in self._begun:
            return
        async with self._locks.setdefault(session_id, asyncio.Lock()):
            if turn in self._begun or self._off is not None:
                return
            snap = await self._snapshot(fresh=True)
            if snap is None:
                return
            self.store.record_before(session_id, turn, snap.tree, snap.skipped, time.time())
            self._begun.add(turn)
            self._last[turn] = snap.tree
            await asyncio.to_thread(self.aside.mark_start, turn, snap.skipped)
            try:
                await asyncio.to_thread(self._retain, snap.tree)
            except (SnapshotError, OSError) as exc:  # pruning failed: recording goes on, the store is only bigger
                log.warning("pruning old checkpoints failed: %s", exc)

    async def _after(self, session_id: str, tool: str) -> None:
        turn = self._turn_of(session_id)
        if turn is None or turn not in self._begun:
            return
        async with self._locks.setdefault(session_id, asyncio.Lock()):  # calls that ran at once: latest last
            snap = await self._snapshot()
            if snap is None:
                return
            self.store.record_after(session_id, turn, tool, snap.tree, snap.skipped, time.time())
            self._last[turn] = snap.tree
            await asyncio.to_thread(self._kept_after, snap.tree, turn)

    def _kept_after(self, tree: str, turn: str) -> None:
        """A step's tree held and its big files fingerprinted, in one trip to a worker thread (each trip costs
        a wake-up of the loop, and a step already makes three)."""
        self.snapshots.keep([tree])
        self.aside.left(turn)

    async def _between(self, session_id: str) -> None:
        """Record what changed since the turn's last step, before its next tool call, as a step of its own."""
        turn = self._turn_of(session_id)
        if turn is None or turn not in self._begun:
            return
        async with self._locks.setdefault(session_id, asyncio.Lock()):
            snap = await self._snapshot()
            if snap is None or snap.tree == self._last.get(turn):
                return
            self.store.record_after(session_id, turn, BETWEEN_STEPS, snap.tree, snap.skipped, time.time())
            self._last[turn] = snap.tree
            await asyncio.to_thread(self.snapshots.keep, [snap.tree])

    def _turn_of(self, session_id: str) -> str | None:
        self.sessions.writes.commit()
        return self.store.latest_turn(session_id)

    async def _snapshot(self, *, fresh: bool = False) -> Snapshot | None:
        try:
            return await asyncio.to_thread(self._snapshot_or_make_room, fresh)
        except (SnapshotError, OSError) as exc:
            self.turn_off(f"checkpoints are off: the snapshot store {self.git_dir} could not be written ({exc}); "
                          "files changed from now on cannot be undone")
            return None

    def _snapshot_or_make_room(self, fresh: bool = False) -> Snapshot:
        try:
            return self.snapshots.snapshot(fresh=fresh)
        except (SnapshotError, OSError) as exc:
            if not any(word in str(exc).lower() for word in _NO_SPACE):
                raise
            rows = [r for r in self.store.checkpoint_turns() if r.before_tree]
            log.warning("checkpoint store is out of space (%s): pruning the oldest %d turns", exc, len(rows) // 2 or 1)
            self._prune(rows[: len(rows) // 2 or 1])
            return self.snapshots.snapshot(fresh=fresh)

    def _retain(self, tree: str) -> None:
        self.snapshots.keep([tree])
        keep = self.settings.keep_turns
        rows = [r for r in self.store.checkpoint_turns() if r.before_tree]
        if len(rows) > keep + max(1, keep // 10):
            self._prune(rows[: len(rows) - keep])
        self.aside.drop({r.message_id for r in self.store.checkpoint_turns() if r.before_tree})

    def _prune(self, rows: list[TurnRow]) -> None:
        """Forget these turns' trees (oldest first) and let git delete what nothing else reaches."""
        self.store.drop_checkpoints([r.message_id for r in rows])
        self.snapshots.prune(self.store.live_trees())
        self.aside.drop({r.message_id for r in self.store.checkpoint_turns() if r.before_tree})

    def turn_off(self, reason: str) -> None:
        """Stop recording, and say why once."""
        if self._off is None:
            self._off = reason
            log.warning("%s", reason)

    # ------------------------------------------------------------------------------------------ reading

    def turns(self, session_id: str) -> list[TurnRecord]:
        """The session's turns, oldest first, each with the files its tools changed (taken-back turns too) and
        those the person saved while it ran (`theirs`)."""
        self.sessions.flush()
        rows = {r.message_id: r for r in self.store.checkpoint_turns(session_id)}
        notebook = self._notebook_of(session_id)
        out = []
        for index, head in enumerate(self.store.turn_heads(session_id), start=1):
            row = rows.get(head.message_id)
            files, theirs, skipped = [], [], []
            if row is not None and row.before_tree and row.after_tree:
                skipped = list(row.skipped)
                try:
                    every = [f for f in self._changed(row.before_tree, row.after_tree) if f.path not in skipped]
                    agents = self._agents(row, [f.path for f in every], notebook)
                    files = [f for f in every if f.path in agents]
                    theirs = [f.path for f in every if f.path not in agents]
                except SnapshotError as exc:
                    log.warning("cannot read the checkpoints of turn %d: %s", index, exc)
            out.append(TurnRecord(session_id, head.message_id, index, secrets.redact(head.text), files, skipped,
                                  row is not None and row.undone is not None, head.created_at, theirs))
        return out

    def _changed(self, before: str, after: str) -> list[FileChange]:
        key = (before, after)
        if key not in self._changes:
            if len(self._changes) >= CHANGES_KEPT:
                self._changes.pop(next(iter(self._changes)))
            self._changes[key] = self.snapshots.changes(before, after)
        return self._changes[key]

    def _agents(self, row: TurnRow, changed: list[str], notebook: str) -> set[str]:
        """The paths of `changed` the turn's tools wrote (`authors.py`), read once per turn and last tree."""
        key = (row.message_id, row.after_tree or "", notebook)
        if key not in self._authored:
            if len(self._authored) >= CHANGES_KEPT:
                self._authored.pop(next(iter(self._authored)))
            own = own_notebook(self.root, notebook, changed)
            self._authored[key] = agents_paths(changed, self.store.step_trees(row.message_id), row.before_tree or "",
                                               lambda a, b: [f.path for f in self._changed(a, b)], own)
        return self._authored[key]

    def _notebook_of(self, session_id: str) -> str:
        try:
            return self.sessions.get(session_id).notebook or ""
        except (NotFoundError, OpencodeNbError):
            return ""

    def diff(self, session_id: str, n: int | None = None) -> str:
        """What turn `n` (1-based; the latest turn still standing when None) changed in files, redacted
        (`text.redact_patch`: known secrets, and every value of a secret file such as `.env`): a unified diff
        per file, a notebook's cell by cell (`nbdiff.py`), only the files its tools wrote.

        Raises:
            ValueError: the session has no such turn.
        """
        turns = self.turns(session_id)
        if n is None:
            standing = [t for t in turns if not t.undone]
            if not standing:
                raise ValueError("the session has no turn yet")
            turn = standing[-1]
        elif 1 <= n <= len(turns):
            turn = turns[n - 1]
        else:
            raise ValueError(f"there is no turn {n}: the session has {len(turns)} turn(s)")
        row = next((r for r in self.store.checkpoint_turns(session_id) if r.message_id == turn.message_id), None)
        if row is None or not row.before_tree or not row.after_tree:
            return ""
        return self._rendered(row.before_tree, row.after_tree, {f.path for f in turn.files})

    def steps(self, session_id: str, n: int) -> list[tuple[str, str]]:
        """Turn `n`'s steps that may have changed files: (tool, redacted diff of that step, notebooks by cell),
        in order; what changed between two tool calls is a step named `BETWEEN_STEPS`."""
        turns = self.turns(session_id)
        if not 1 <= n <= len(turns):
            raise ValueError(f"there is no turn {n}: the session has {len(turns)} turn(s)")
        message_id = turns[n - 1].message_id
        row = next((r for r in self.store.checkpoint_turns(session_id) if r.message_id == message_id), None)
        previous = row.before_tree if row is not None and row.before_tree else EMPTY_TREE
        out = []
        for tool, tree in self.store.step_trees(message_id):
            out.append((tool, self._rendered(previous, tree, None)))
            previous = tree
        return out

    def _rendered(self, before: str, after: str, paths: set[str] | None) -> str:
        """The diff from `before` to `after` of `paths` (None: every file), each notebook as its cells."""
        notebooks = [f.path for f in self._changed(before, after) if is_notebook(f.path)
                     and (paths is None or f.path in paths)]
        kept = [text for path, text in patch_sections(self.snapshots.patch(before, after))
                if (paths is None or path in paths) and path not in notebooks]
        out = redact_patch("".join(kept))
        if notebooks:
            old = self.snapshots.entries(before, notebooks) if before != EMPTY_TREE else {}
            new = self.snapshots.entries(after, notebooks)
            blobs = self.snapshots.blobs([e.blob for e in (*old.values(), *new.values())])
            for path in notebooks:
                out += notebook_diff(path, blobs[old[path].blob] if path in old else None,
                                     blobs[new[path].blob] if path in new else None)
        return out


def _outside_the_project(root: Path) -> Callable[[Path], bool]:
    """What a restore may never write: the global config folder (it lies inside a project that is HOME or
    holds it), and anything not under the project (the writer never leaves it; this says so twice)."""
    real_root = Path(os.path.realpath(root))
    config = Path(os.path.realpath(global_config_dir()))

    def refused(path: Path) -> bool:
        inside = path == real_root or real_root in path.parents
        return not inside or path == config or config in path.parents

    return refused


def _why_off(settings: CheckpointsConfig, git: str | None, root: Path) -> str | None:
    if not settings.enabled:
        return "checkpoints are off (`checkpoints: {enabled: false}` in the configuration)"
    if git is None:
        return ("checkpoints are off: `git` was not found on PATH, and file checkpoints are kept with it; install git "
                "to undo file changes (undo still takes back the history, cells and bindings)")
    if not os.access(root, os.W_OK):
        return f"checkpoints are off: the project {root} is read-only, so no turn can change its files"
    return None
