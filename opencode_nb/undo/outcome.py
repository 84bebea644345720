"""What an undo or a redo did, typed: every surface (a magic, a card, the CLI, `ws.undo`) renders this one
value, so none of them reads or filters report text.

Each item says its status, its kind and what it names, and why when it was not done. A kind that phrases its
own summary (the files' "Took back turn 3: ...") adds it to `said` and marks the items it names `told`;
`text()` renders those, then every item no summary told.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Direction = Literal["undo", "redo"]
"""Undo takes a turn's changes back, newest first; redo puts back what an undo took, oldest first."""

Status = Literal["restored", "kept", "conflicted", "skipped", "failed", "unavailable"]
"""restored: done. kept: the person's edit left alone (a conflict declined, or nobody to ask). conflicted:
could not be done because something later depends on it. skipped: nothing left to do (already gone).
failed: tried and refused (the OS, a protected path). unavailable: the kind cannot be undone here at all."""

_HEADS: dict[Status, str] = {
    "restored": "Done",
    "kept": "Kept as you left them",
    "conflicted": "Not done, in conflict",
    "skipped": "Already gone",
    "failed": "Could not",
    "unavailable": "Not available",
}


@dataclass(frozen=True)
class Item:
    status: Status
    kind: str
    name: str
    why: str = ""
    told: bool = False
    """A summary in `Outcome.said` already names it, so `text()` does not list it again."""


@dataclass
class Outcome:
    direction: Direction
    items: list[Item] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    """Summaries a kind phrased itself, in the order the engine walked; `text()` shows them first."""

    def add(self, status: Status, kind: str, name: str, why: str = "", *, told: bool = False) -> None:
        self.items.append(Item(status, kind, name, why, told))

    def extend(self, other: Outcome) -> None:
        """Take in a part's outcome (one change, one kind), keeping the order walked."""
        self.items += other.items
        self.said += other.said

    def of(self, status: Status, kind: str | None = None) -> list[Item]:
        return [i for i in self.items if i.status == status and (kind is None or i.kind == kind)]

    @property
    def empty(self) -> bool:
        """Nothing was done, kept or refused: there was nothing left to take back (or put back)."""
        return not self.items and not self.said

    def text(self) -> str:
        """The person-facing report: each kind's own summary, then the rest grouped by what became of it."""
        lines = [*self.said, *_lines([i for i in self.items if not i.told])]
        if not lines:
            return "Nothing of this turn was left to undo." if self.direction == "undo" else \
                "Nothing was left to redo."
        return "\n".join(lines)

    def card(self) -> dict[str, Any]:
        """What a run's card shows after its Undo or Redo: the report and how many of each status."""
        counts: dict[str, int] = {}
        for item in self.items:
            counts[item.status] = counts.get(item.status, 0) + 1
        return {"direction": self.direction, "report": self.text(), "counts": counts}


def _lines(items: list[Item]) -> list[str]:
    """One line per status, each naming its items by kind: "Undone: file a.py, binding df"."""
    lines = []
    for status, head in _HEADS.items():
        group = [i for i in items if i.status == status]
        if group:
            names = ", ".join(f"{i.kind} {i.name}" + (f" ({i.why})" if i.why else "") for i in group)
            lines.append(f"{head}: {names}.")
    return lines
