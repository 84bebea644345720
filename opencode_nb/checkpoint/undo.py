"""Taking turns back, and putting them back: the files, and the session's history.

Undo puts each file the turns changed back as it was before the earliest of them, and hides the turns'
messages from the model, transcripts and listings (kept aside: redo shows them again; a new prompt deletes
them). Redo puts the files as the latest of the turns left them.

Never clobber the person: a file whose content now is not what the agent left (after the turns, for an
undo; before them, for a redo) was changed by someone else since. So is one that changed between the agent's
steps, not during a tool call (the person saved it while the model was thinking: `Checkpoints` records those
intervals as steps of their own, `BETWEEN_STEPS`). Each is a `Conflict`, and `confirm` decides; without
`confirm` (headless) the file is kept as it is, and the report says so. Asked the same way: a file that grew
past the size cap during the turns (what the agent left was not recorded, so nobody can tell whether the
person changed it since), something unrecorded in the way (a link or a file where a folder comes back, a
folder holding unrecorded files where a file comes back), and, for a redo, a protected path (config,
instructions, hooks: redo would write the agent's version back). Everything is read from the store before
the first file is written, so a damaged store changes no file.

Where the files go: only into the project, through `fs` (see `restore.py`), never through a link, and never
into the global config folder, even when the project holds it. Restoring the person's own earlier content of
a protected file inside the project is their undo, and is done; what cannot be put back is named in the
report with why (`failed`), and files over the size cap that no checkpoint holds are named as not taken back
(`not_undone`). A repository of its own that appeared during the turns (never recorded: a turn could make one
to hide its files) is offered for deletion whole, asked like any conflict.

The session's own notebook file is left alone: its cells are the kernel's to take back, in the notebook
JupyterLab holds open, and writing the file under the editor would fight its next save.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import fs
from ..errors import NotFoundError, OpencodeNbError
from ..sandbox.protected import for_project
from . import restore
from .authors import BETWEEN_STEPS, own_notebook
from .records import Confirm, Conflict, UndoReport
from .service import Checkpoints
from .store import EMPTY_TREE, SnapshotError, unified


@dataclass
class _Plan:
    """What writing the files back would do: each path's wanted state, and what the agent left there."""

    target: dict[str, tuple[str, bytes] | None] = field(default_factory=dict)
    conflicts: list[Conflict] = field(default_factory=list)
    clear: dict[str, list[str]] = field(default_factory=dict)
    """Unrecorded entries in the way, removed only if the conflict named by the key is confirmed."""
    not_undone: list[str] = field(default_factory=list)
    unasked: list[str] = field(default_factory=list)
    """Entries of `clear` removed without asking: a named pipe or socket holds nothing a person could lose."""
    repos: list[str] = field(default_factory=list)
    """Repositories (`dir/`) made during the turns, deleted whole only if their conflict is confirmed."""


async def undo(cp: Checkpoints, session_id: str, *, to: str | int | None = None,
               confirm: Confirm | None = None) -> UndoReport:
    """Take back the latest standing turn, or turn `to` (1-based index or message id) and every later one.

    Raises:
        ValueError: `to` names no standing turn of the session.
    """
    cp.sessions.flush()
    heads = cp.store.turn_heads(session_id)
    rows = {r.message_id: r for r in cp.store.checkpoint_turns(session_id)}
    standing = [(i, h.message_id) for i, h in enumerate(heads, start=1)
                if rows.get(h.message_id) is None or rows[h.message_id].undone is None]
    report = UndoReport(action="undo")
    if not standing:
        if to is not None:
            raise ValueError("the session has no turn to take back")
        return report
    chosen = _select(cp, session_id, standing, to)
    report.turns = [m for _, m in chosen]
    report.indexes = [i for i, _ in chosen]
    recorded = [rows[m] for m in report.turns if m in rows]
    with_trees = [r for r in recorded if r.before_tree and r.after_tree]
    pruned = [i for i, m in chosen if m in rows and rows[m].pruned]
    if not cp.available:  # what the turns wrote since checkpoints went off was never recorded
        report.unavailable = cp.why_not
    elif pruned:
        report.unavailable = f"the checkpoints of turn {pruned[0]} were pruned (checkpoints.keep_turns)"
    elif with_trees:
        base, left = with_trees[0].before_tree, with_trees[-1].after_tree
        assert base is not None and left is not None  # with_trees holds only turns with both trees
        skipped = {p for r in with_trees for p in r.skipped}
        turns = [r.message_id for r in with_trees]
        outside = await asyncio.to_thread(_between_steps, cp, turns)
        await _apply(cp, report, base, left, skipped, confirm, "undo", _notebook(cp, session_id), outside, turns)
    cp.store.mark_undone(session_id, report.turns, _now())
    return report


async def redo(cp: Checkpoints, session_id: str, *, confirm: Confirm | None = None) -> UndoReport:
    """Put back what the session's last undo took: files as its turns left them, history shown again."""
    cp.sessions.flush()
    group = cp.store.last_undo(session_id)
    report = UndoReport(action="redo", turns=list(group))
    if not group:
        return report
    heads = {h.message_id: i for i, h in enumerate(cp.store.turn_heads(session_id), start=1)}
    report.indexes = [heads[m] for m in group if m in heads]
    rows = {r.message_id: r for r in cp.store.checkpoint_turns(session_id)}
    with_trees = [rows[m] for m in group if rows[m].before_tree and rows[m].after_tree]
    if not cp.available:
        report.unavailable = cp.why_not
    elif with_trees:
        base, left = with_trees[0].before_tree, with_trees[-1].after_tree
        assert base is not None and left is not None  # with_trees holds only turns with both trees
        skipped = {p for r in with_trees for p in r.skipped}
        await _apply(cp, report, left, base, skipped, confirm, "redo", _notebook(cp, session_id))
    cp.store.mark_redone(group)
    return report


def _select(cp: Checkpoints, session_id: str, standing: list[tuple[int, str]],
            to: str | int | None) -> list[tuple[int, str]]:
    """The standing turns from `to` on: None the latest, an int its 1-based index, a str the turn's prompt or
    any message inside it."""
    if to is None:
        return standing[-1:]
    if isinstance(to, int) and not isinstance(to, bool):
        at = [k for k, (i, _) in enumerate(standing) if i == to]
        if not at:
            raise ValueError(f"there is no turn {to} to take back: the turns standing are "
                             f"{_span([i for i, _ in standing])}")
        return standing[at[0]:]
    if not isinstance(to, str):
        raise ValueError(f"{to!r} names no turn: give a turn's number or a message id")
    ids = [m for _, m in standing]
    if to in ids:
        return standing[ids.index(to):]
    try:
        inside = cp.store.get_message(to).session_id == session_id
    except (NotFoundError, OpencodeNbError):
        inside = False
    earlier = [k for k, m in enumerate(ids) if m <= to]
    if not inside or not earlier:
        raise ValueError(f"no standing turn of the session has message {to!r}")
    return standing[earlier[-1]:]


def _span(indexes: list[int]) -> str:
    return str(indexes[0]) if len(indexes) == 1 else f"{indexes[0]}-{indexes[-1]}"


async def _apply(cp: Checkpoints, report: UndoReport, wanted: str, expected: str, skipped: set[str],
                 confirm: Confirm | None, action: str, notebook: str = "", outside: set[str] | None = None,
                 turns: list[str] | None = None) -> None:
    """Put the files `wanted` and `expected` differ in as `wanted` has them; a file not as `expected` has it is a
    conflict. Fills `report` (or its `unavailable`, leaving every file alone)."""
    problem = await asyncio.to_thread(cp.snapshots.healthy, [wanted, expected])
    if problem is not None:
        report.unavailable = problem + "; files were left as they are"
        return
    try:
        plan = await asyncio.to_thread(_plan, cp, wanted, expected, skipped, action, notebook, outside or set(),
                                       turns or [])
    except SnapshotError as exc:
        report.unavailable = f"the checkpoint store {cp.git_dir} is damaged ({exc}); files were left as they are"
        return
    kept = set()
    writes: dict[str, tuple[str, bytes] | None] = {p: None for u in plan.unasked for p in plan.clear[u]}
    for conflict in plan.conflicts:
        if confirm is None or not await confirm(conflict):
            kept.add(conflict.path)
            report.kept.append(conflict)
        else:
            writes.update(dict.fromkeys(plan.clear.get(conflict.path, ())))
    blocked = {p for p in kept if p in plan.clear}  # an entry in the way was kept: what lies under it waits
    writes.update({p: s for p, s in plan.target.items() if p not in kept
                   and not any(p.startswith(b + "/") for b in blocked)})
    repos = [p for p in plan.repos if p not in kept]
    failed = await asyncio.to_thread(restore.write_files, cp.snapshots.work_tree, writes,
                                     protected=cp.snapshots.protected)
    failed += await asyncio.to_thread(_remove_repos, cp, repos)
    undone = {p for p, _ in failed}
    clearing = {q for p in plan.clear for q in plan.clear[p]}
    report.failed = failed
    report.restored = sorted(p for p, s in writes.items() if s is not None and p not in undone)
    report.removed = sorted([*(p for p, s in writes.items() if s is None and p not in undone and p not in clearing),
                             *(p for p in repos if p not in undone)])
    report.not_undone = [p for p in plan.not_undone if p not in report.removed]


def _plan(cp: Checkpoints, wanted: str, expected: str, skipped: set[str], action: str, notebook: str,
          outside: set[str], turns: list[str]) -> _Plan:
    snaps = cp.snapshots
    changed = [c.path for c in snaps.changes(expected, wanted)]
    own = own_notebook(cp.root, notebook, changed)
    changed = [p for p in changed if p != own]
    want = snaps.entries(wanted, changed) if wanted != EMPTY_TREE else {}
    left = snaps.entries(expected, changed) if expected != EMPTY_TREE else {}
    blobs = snaps.blobs([e.blob for e in (*want.values(), *left.values())])
    protected = for_project(cp.root) if action == "redo" else None
    plan = _Plan()
    for path in changed:
        if path in skipped:
            if action == "undo" and path in want and fs.kind(cp.root, path) == "file":
                plan.conflicts.append(Conflict(
                    path, f"{path}: {_size(cp.root, path)} bytes now; the earlier version has "
                    f"{len(blobs[want[path].blob])} bytes\n",
                    "grew past the size cap (checkpoints.max_file_mb), so what the agent left was not recorded; "
                    "undo would put back the earlier version"))
                plan.target[path] = (want[path].mode, blobs[want[path].blob])
            else:
                plan.not_undone.append(path)
            continue
        agent = blobs[left[path].blob] if path in left else None
        if fs.kind(cp.root, path) == "file" and _size(cp.root, path) > snaps.max_file_bytes:
            plan.not_undone.append(path)  # too big to have been recorded: never written over
            continue
        now = restore.current(snaps.work_tree, path)
        state = (want[path].mode, blobs[want[path].blob]) if path in want else None
        if now != agent:
            plan.conflicts.append(Conflict(
                path, _redacted(path, agent, now),
                f"changed since the agent {'left it' if action == 'undo' else 'took it back'}; "
                f"{action} would write over that change"))
        elif path in outside:
            plan.conflicts.append(Conflict(
                path, _redacted(path, blobs[want[path].blob] if path in want else None, now),
                "was saved while the turn ran, between the agent's steps (not by a tool); "
                f"undo would {'remove it' if state is None else 'write over it'}"))
        elif protected is not None and protected.covers(Path(os.path.realpath(cp.root)) / path):
            plan.conflicts.append(Conflict(
                path, _redacted(path, now, state[1] if state else None),
                "steers the agents or runs code later (configuration, instructions, hooks); "
                "redo would write the agent's version back"))
        plan.target[path] = state
    _from_aside(cp, plan, turns if action == "undo" else [], skipped, own)
    plan.not_undone = sorted({*plan.not_undone, *(p for p in skipped if p not in plan.target)} - set(plan.target))
    if action == "undo" and turns:
        _new_repos(cp, plan, turns[0], skipped)
    _in_the_way(cp, plan)
    return plan


def _new_repos(cp: Checkpoints, plan: _Plan, first: str, skipped: set[str]) -> None:
    """Repositories of their own that were not there when the first of the turns began: never recorded (their
    own git keeps their files), so a turn could `git init` a folder to hide what it writes there from its
    undo. Each is the turns'; deleting it whole is asked (the person may have saved a file in it meanwhile).
    Unknown what was there at the start (the turn's note is gone): left, and named, as before."""
    start = cp.aside.repos_at_start(first)
    if start is None:
        return
    for rel in sorted(p for p in skipped if p.endswith("/") and p not in start):
        if fs.kind(cp.root, rel.rstrip("/")) != "dir":
            continue
        plan.conflicts.append(Conflict(rel, f"{rel}: {len(_files_under(cp.root, rel.rstrip('/')))} file(s)\n",
                                       "is a git repository made while the turn ran, whose files no checkpoint "
                                       "records; undo would delete the folder and everything in it"))
        plan.repos.append(rel)


def _remove_repos(cp: Checkpoints, repos: list[str]) -> list[tuple[str, str]]:
    failed = []
    for rel in repos:
        try:
            fs.remove(cp.root, rel.rstrip("/"), protected=cp.snapshots.protected, recursive=True)
        except OSError as exc:
            failed.append((rel, exc.why if isinstance(exc, fs.Refused) else exc.strerror or str(exc)))
    return failed


def _from_aside(cp: Checkpoints, plan: _Plan, turns: list[str], skipped: set[str], own: str | None) -> None:
    """Big files a file tool wrote, put back from the copy kept before the write (`aside.py`): without asking
    when the file is still as the agent left it, else asked like any file changed since."""
    for path, kept in cp.aside.kept(turns).items():
        if path in plan.target or path not in skipped or path == own:
            continue
        try:
            data = kept.copy.read_bytes()
        except OSError:
            continue
        if cp.aside.now(path) != kept.left:
            plan.conflicts.append(Conflict(path, f"{path}: over the size cap; no diff shown\n",
                                           "changed since the agent left it; undo would put back the copy kept "
                                           "before the agent wrote it"))
        plan.target[path] = ("100755" if kept.mode & 0o111 else "100644", data)


def _in_the_way(cp: Checkpoints, plan: _Plan) -> None:
    """Unrecorded entries a restore would have to replace: a link or file where a folder comes back, a folder
    holding unrecorded files where a file comes back (each a conflict of its own), a pipe or socket where a
    folder comes back (removed unasked: it holds no data)."""
    root = cp.root
    removed = {p for p, s in plan.target.items() if s is None}
    asked: set[str] = set()
    for path, state in sorted(plan.target.items()):
        if state is None:
            continue
        parts = path.split("/")
        for depth in range(1, len(parts)):
            above = "/".join(parts[:depth])
            found = fs.kind(root, above)
            if found == "dir":
                continue
            if found in ("fifo", "other") and above not in removed and above not in asked:
                asked.add(above)
                plan.clear[above] = [above]
                plan.unasked.append(above)
            elif found != "missing" and above not in removed and above not in asked:
                asked.add(above)
                what = f"a link to {_target(root, above)}" if found == "link" else _WORDS.get(found, found)
                plan.conflicts.append(Conflict(above, f"{above}: {what}\n",
                                               f"is {what} now, where the folder {above}/ was (not recorded); "
                                               "undo would replace it with the folder and its files"))
                plan.clear[above] = [above]
            break
        if fs.kind(root, path) == "dir":
            extra = [p for p in _files_under(root, path) if p not in removed]
            if extra:
                plan.conflicts.append(Conflict(path, "".join(f"{p}\n" for p in extra[:20]),
                                               f"is a folder now, holding {len(extra)} file(s) no checkpoint "
                                               "recorded; putting the file back would delete them"))


_WORDS = {"file": "a file", "fifo": "a named pipe", "other": "a special file"}


def _target(root: Path, rel: str) -> str:
    try:
        return os.readlink(Path(root) / rel)
    except OSError:
        return "?"


def _files_under(root: Path, rel: str) -> list[str]:
    out = []
    for folder, dirs, files in os.walk(Path(root) / rel, followlinks=False):
        base = Path(folder).relative_to(root).as_posix()
        out += [f"{base}/{name}" for name in sorted(files)]
        out += [f"{base}/{name}" for name in sorted(dirs) if os.path.islink(os.path.join(folder, name))]
    return out


def _size(root: Path, rel: str) -> int:
    try:
        return os.lstat(Path(root) / rel).st_size
    except OSError:
        return 0


def _redacted(path: str, old: bytes | None, new: bytes | None) -> str:
    """What a conflict shows the person, with secrets hidden (a `.env` line in particular)."""
    from .text import redact_patch

    return redact_patch(unified(path, old, new))


def _between_steps(cp: Checkpoints, turns: list[str]) -> set[str]:
    """Paths that changed between the agent's steps in these turns, not during a tool call."""
    paths: set[str] = set()
    for message_id in turns:
        previous = None
        for tool, tree in cp.store.step_trees(message_id):
            if tool == BETWEEN_STEPS and previous is not None:
                paths |= {c.path for c in cp.snapshots.changes(previous, tree)}
            previous = tree
    return paths


def _notebook(cp: Checkpoints, session_id: str) -> str:
    """The notebook the session lives in: its cells are the kernel's to undo, and JupyterLab holds the file open,
    so writing it on disk would fight the editor."""
    try:
        return cp.sessions.get(session_id).notebook.replace("\\", "/")
    except (NotFoundError, OpencodeNbError):
        return ""


def _now() -> float:
    return time.time()
