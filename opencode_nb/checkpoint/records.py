"""The records checkpoints are reported in: what a turn changed, what an undo did, what it would overwrite.

Plain dataclasses, so the kernel's magics and cards, the CLI and scripts read them without importing the
store or git.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..undo.change import Confirm, Conflict
from ..undo.outcome import Outcome

__all__ = ["Confirm", "Conflict", "FileChange", "TurnRecord", "UndoReport", "not_recorded"]
"""`Conflict` and `Confirm` are the undo model's own, named here too since every file undo asks them."""


@dataclass(frozen=True)
class FileChange:
    """One file a turn changed, with its line counts (0 and 0 for a binary file)."""

    path: str
    """Relative to the project root, with `/` separators."""
    status: Literal["added", "modified", "deleted"]
    added: int
    removed: int
    binary: bool = False

    def label(self) -> str:
        """`a.py (+3 -1)`, `new.csv (new)`, `old.txt (deleted)`, `img.png (binary)`."""
        if self.status == "added":
            detail = "new"
        elif self.status == "deleted":
            detail = "deleted"
        elif self.binary:
            detail = "binary"
        else:
            detail = f"+{self.added} -{self.removed}"
        return f"{self.path} ({detail})"


@dataclass
class TurnRecord:
    """One turn of a session: a person's prompt and everything the agents did until the next one."""

    session_id: str
    message_id: str
    """The turn's user message (not a synthetic one)."""
    index: int
    """1-based position of the turn in the session."""
    prompt: str
    files: list[FileChange]
    """What the turn's tools changed in files (`authors.py`): the tree before its first change against the tree
    after its last, less what the person saved meanwhile."""
    skipped: list[str]
    """Files not recorded because they are over the size cap, relative paths."""
    undone: bool
    created: float
    theirs: list[str] = field(default_factory=list)
    """Files that changed while the turn ran but not by its tools: the person's saves (the open notebook
    autosaved, a file saved while the model thought), relative paths. Never the turn's to list or take back."""


@dataclass
class UndoReport:
    """What an undo or a redo did to files (cells and bindings are the kernel's to report)."""

    turns: list[str] = field(default_factory=list)
    """Message ids of the turns taken back (undo) or put back (redo)."""
    restored: list[str] = field(default_factory=list)
    """Files written back."""
    removed: list[str] = field(default_factory=list)
    """Files deleted: the turns had created them."""
    kept: list[Conflict] = field(default_factory=list)
    """Files left as the person had them: a conflict refused, or nobody there to ask."""
    unavailable: str | None = None
    """Why files could not be undone (store missing or corrupt, checkpoints off); the history still was."""
    action: Literal["undo", "redo"] = "undo"
    indexes: list[int] = field(default_factory=list)
    """1-based indexes of the turns in `turns`, for the summary."""
    failed: list[tuple[str, str]] = field(default_factory=list)
    """Files that could not be put back, each with why (the OS refused, a protected path); the rest were."""
    not_undone: list[str] = field(default_factory=list)
    """Files over the size cap (or repositories of their own, `dir/`) that no checkpoint holds: what the turns
    did to them cannot be taken back."""

    def outcome(self) -> Outcome:
        """The same report as the undo model's typed outcome: the summary is `text()`, each file an item."""
        done = Outcome(self.action)
        done.said.append(self.text())
        for path in (*self.restored, *self.removed):
            done.add("restored", "file", path, told=True)
        for conflict in self.kept:
            done.add("kept", "file", conflict.path, conflict.reason, told=True)
        for path, why in self.failed:
            done.add("failed", "file", path, why, told=True)
        for path in self.not_undone:
            done.add("unavailable", "file", path, "never recorded", told=True)
        if self.unavailable is not None:
            done.add("unavailable", "file", "files", self.unavailable, told=True)
        return done

    def text(self) -> str:
        """The person-facing summary, e.g. "Took back turn 3: restored a.py, b.csv; removed out.txt"."""
        if not self.turns:
            return "Nothing to take back." if self.action == "undo" else "Nothing to put back."
        verb = "Took back" if self.action == "undo" else "Put back"
        head = f"{verb} {_turns(self.indexes) if self.indexes else f'{len(self.turns)} turn(s)'}"
        done = []
        if self.restored:
            done.append("restored " + ", ".join(self.restored))
        if self.removed:
            done.append("removed " + ", ".join(self.removed))
        if not done and self.unavailable is None:
            done.append("no files to change")
        lines = [head + (": " + "; ".join(done) if done else "")]
        for conflict in self.kept:
            lines.append(f"Kept {conflict.path}: {conflict.reason}")
        for path, why in self.failed:
            lines.append(f"Could not {'restore' if self.action == 'undo' else 'put back'} {path}: {why}")
        if self.not_undone:
            lines.append(f"Not {'taken' if self.action == 'undo' else 'put'} back (never recorded, so what the "
                         f"turns did to them stays): {not_recorded(self.not_undone)}")
        if self.unavailable is not None:
            lines.append(f"Files were not {'undone' if self.action == 'undo' else 'redone'}: {self.unavailable}")
        return "\n".join(lines)


def _turns(indexes: list[int]) -> str:
    ordered = sorted(indexes)
    if len(ordered) == 1:
        return f"turn {ordered[0]}"
    if ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"turns {ordered[0]}-{ordered[-1]}"
    return "turns " + ", ".join(map(str, ordered))


def not_recorded(paths: list[str]) -> str:
    """Files a checkpoint left out, each with why: a size over the cap, or (listed as `dir/`) a git repository
    of its own inside the project, whose files its own git keeps."""
    return ", ".join(f"{p} (a repository of its own)" if p.endswith("/") else f"{p} (over the size cap)"
                     for p in paths)
