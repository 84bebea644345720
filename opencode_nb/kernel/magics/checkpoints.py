"""`%agent checkpoints` and `%agent diff [N]`: what each turn of the session changed, and one turn's file diff.

A turn's files come from the checkpoint store; its cells and names from the kernel's journal (the turns this
kernel ran and still keeps), matched by the turn's prompt message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...checkpoint.records import not_recorded
from ...views.markdown import escape
from ...views.render import diff_html
from ..notebook.journal import Deleted, Inserted, Journal, LiveRun, Replaced, Turn
from ..rewind import files_of
from . import listing

if TYPE_CHECKING:
    from ...checkpoint.service import Checkpoints
    from ...workspace import Workspace
    from ..python.live import LiveRunner


def checkpoints(ws: Workspace, journal: Journal, runner: LiveRunner | None, session_id: str | None) -> dict[str, str]:
    """The session's turns, oldest first: prompt, files (+/− lines), cells, names, and whether it was undone."""
    if session_id is None:
        return listing.text("No session yet in this notebook: run a prompt first; %agent sessions lists the "
                            "project's.")
    service = files_of(ws)
    if service is None:
        return listing.text("This workspace keeps no checkpoints of files.")
    records = service.turns(session_id)
    if not records:
        return listing.text("No turns yet in this session.")
    kept = {t.message_id: t for t in [*journal.turns, *journal.undone.values()] if t.message_id}
    rows = []
    for record in records:
        turn = kept.get(record.message_id)
        files = ", ".join(change.label() for change in record.files) or "—"
        if record.skipped:
            files += f" (not recorded: {not_recorded(record.skipped)})"
        rows.append([record.index, _short(record.prompt), files, _cells(turn) if turn else "—",
                     _names(turn, runner) if turn else "—", "undone" if record.undone else ""])
    caption = f"Turns of session {session_id}: %agent diff N shows a turn's files, %agent undo --to N takes " \
              "back turn N and every later one"
    if not getattr(service, "available", True):
        caption += f". Files cannot be undone: {getattr(service, 'why_not', None) or 'checkpoints are off'}"
    return listing.table(["#", "prompt", "files", "cells", "names", ""], rows, caption=caption)


def diff(ws: Workspace, session_id: str | None, n: str | None) -> dict[str, str]:
    """What turn `n` (default: the latest turn) changed in files, highlighted as an edit's card shows it: a
    unified diff per file, a notebook's cells (`checkpoint/nbdiff.py`); the person's own saves meanwhile are
    named as theirs, not shown as the turn's."""
    if session_id is None:
        return listing.text("No session yet in this notebook: run a prompt first.")
    service = files_of(ws)
    if service is None:
        return listing.text("This workspace keeps no checkpoints of files.")
    if n is not None and (not n.isdigit() or int(n) < 1):
        return listing.text(f"%agent diff takes a turn number (1, 2, …; %agent checkpoints lists them), not {n!r}.")
    try:
        text = service.diff(session_id, int(n) if n else None)
        theirs = _theirs(service, session_id, int(n) if n else None)
    except (LookupError, ValueError) as exc:
        return listing.text(f"%agent diff: {exc}; %agent checkpoints lists the turns.")
    which = f"turn {n}" if n else "the latest turn"
    note = (f"Not the agent's, so not shown (saved while the turn ran): {', '.join(theirs)}" if theirs else "")
    if not text.strip():
        return listing.text(f"No file changes in {which}." + (f"\n{note}" if note else ""))
    note_html = f"<div>{escape(note)}</div>" if note else ""
    return {"text/html": f"<div><b>Files changed by {escape(which)}</b>{diff_html(text)}{note_html}</div>",
            "text/plain": text + (f"{note}\n" if note else "")}


def _theirs(service: Checkpoints, session_id: str, n: int | None) -> list[str]:
    """The files the person saved while turn `n` (None: the latest standing) ran."""
    turns = service.turns(session_id)
    if n is None:
        standing = [t for t in turns if not t.undone]
        return standing[-1].theirs if standing else []
    return turns[n - 1].theirs if 1 <= n <= len(turns) else []


def _short(prompt: str) -> str:
    line = " ".join(prompt.split())
    return line if len(line) <= 60 else line[:59] + "…"


def _cells(turn: Turn) -> str:
    changes = [c for _, c in turn.changes]
    counts = [(sum(isinstance(c, kind) for c in changes), word)
              for kind, word in ((Inserted, "inserted"), (Replaced, "edited"), (Deleted, "deleted"))]
    said = [f"{n} {word}" for n, word in counts if n]
    return ", ".join(said) or "—"


def _names(turn: Turn, runner: LiveRunner | None) -> str:
    if runner is None:
        return "—"
    names: list[str] = []
    for _, change in turn.changes:
        if isinstance(change, LiveRun):
            record = runner.records.get(change.run_id) or runner.undone.get(change.run_id)
            if record is not None:
                names += [n for n in (*record.created, *record.previous) if n not in names]
    return ", ".join(names) or "—"
