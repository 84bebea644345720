"""Taking turns back, and putting them back: the files, and the session's history.

Undo puts each file the turns changed back as it was before the earliest of them, and hides the turns'
messages from the model, transcripts and listings (kept aside: redo shows them again; a new prompt deletes
them). Redo puts the files as the latest of the turns left them.

Never clobber the person: a file whose content now is not what the agent left (after the turns, for an
undo; before them, for a redo) was changed by someone else since. It is a `Conflict`, and `confirm` decides;
without `confirm` (headless) the file is kept as it is, and the report says so. Everything is read from
the store before the first file is written, so a damaged store changes no file.

The session's own notebook file is left alone: its cells are the kernel's to take back, in the notebook
JupyterLab holds open, and writing the file under the editor would fight its next save.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from ..errors import NotFoundError, OpencodeNbError
from .records import Confirm, Conflict, UndoReport
from .service import Checkpoints
from .store import EMPTY_TREE, SnapshotError, unified


@dataclass
class _Plan:
    """What writing the files back would do: each path's wanted state, and what the agent left there."""

    target: dict[str, tuple[str, bytes] | None] = field(default_factory=dict)
    conflicts: list[Conflict] = field(default_factory=list)


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
        skipped = {p for r in with_trees for p in r.skipped}
        await _apply(cp, report, base, left, skipped, confirm, "undo", _notebook(cp, session_id))
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
                 confirm: Confirm | None, action: str, notebook: str = "") -> None:
    """Put the files `wanted` and `expected` differ in as `wanted` has them; a file not as `expected` has it is a
    conflict. Fills `report` (or its `unavailable`, leaving every file alone)."""
    problem = await asyncio.to_thread(cp.snapshots.healthy, [wanted, expected])
    if problem is not None:
        report.unavailable = problem + "; files were left as they are"
        return
    try:
        plan = await asyncio.to_thread(_plan, cp, wanted, expected, skipped, action, notebook)
    except SnapshotError as exc:
        report.unavailable = f"the checkpoint store {cp.git_dir} is damaged ({exc}); files were left as they are"
        return
    kept = set()
    for conflict in plan.conflicts:
        if confirm is None or not await confirm(conflict):
            kept.add(conflict.path)
            report.kept.append(conflict)
    writes = {p: s for p, s in plan.target.items() if p not in kept}
    await asyncio.to_thread(cp.snapshots.write_files, writes)
    report.restored = sorted(p for p, s in writes.items() if s is not None)
    report.removed = sorted(p for p, s in writes.items() if s is None)


def _plan(cp: Checkpoints, wanted: str, expected: str, skipped: set[str], action: str, notebook: str) -> _Plan:
    snaps = cp.snapshots
    paths = [c.path for c in snaps.changes(expected, wanted) if c.path not in skipped and not _same(c.path, notebook)]
    want = snaps.entries(wanted, paths) if wanted != EMPTY_TREE else {}
    left = snaps.entries(expected, paths) if expected != EMPTY_TREE else {}
    blobs = snaps.blobs([e.blob for e in (*want.values(), *left.values())])
    plan = _Plan()
    for path in paths:
        agent = blobs[left[path].blob] if path in left else None
        now = snaps.current(path)
        if now is not None and len(now) > snaps.max_file_bytes:
            continue  # too big to have been recorded: never written over
        if now != agent:
            plan.conflicts.append(Conflict(
                path, unified(path, agent, now),
                f"changed since the agent {'left it' if action == 'undo' else 'took it back'}; "
                f"{action} would write over that change"))
        plan.target[path] = (want[path].mode, blobs[want[path].blob]) if path in want else None
    return plan


def _notebook(cp: Checkpoints, session_id: str) -> str:
    """The notebook the session lives in: its cells are the kernel's to undo, and JupyterLab holds the file open,
    so writing it on disk would fight the editor."""
    try:
        return cp.sessions.get(session_id).notebook.replace("\\", "/")
    except (NotFoundError, OpencodeNbError):
        return ""


def _same(path: str, notebook: str) -> bool:
    """Whether project path `path` is the notebook, named relative to the Jupyter server's root (which may lie
    above or below the project root)."""
    if not notebook:
        return False
    return path == notebook or notebook.endswith("/" + path) or path.endswith("/" + notebook.lstrip("/"))


def _now() -> float:
    return time.time()
