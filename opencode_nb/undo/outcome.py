"""What an undo or a redo did, typed: every surface (a magic, a card, the CLI, `ws.undo`) renders this one
value, so none of them reads or filters report text.

Each item says its status, its kind, what it names, the effect it had (a file removed, a cell taken out, a
name unbound) and why when it was not done. `sentences()` is what the person reads (a card, `%agent undo`,
`%agent redo`): one plain sentence per effect, phrased from the items (`undo/sentences.py`), never from text.
`text()` is the older log form the CLI and a live run's own undo still print: each kind's own summary
(`said`, marking the items it names `told`), then every item no summary told.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .sentences import phrase

Direction = Literal["undo", "redo"]
"""Undo takes a turn's changes back, newest first; redo puts back what an undo took, oldest first."""

Status = Literal["restored", "kept", "conflicted", "skipped", "failed", "unavailable"]
"""restored: done. kept: the person's edit left alone (a conflict declined, or nobody to ask). conflicted:
could not be done because something later depends on it. skipped: nothing left to do (already gone).
failed: tried and refused (the OS, a protected path). unavailable: the kind cannot be undone here at all."""

Effect = Literal["restored", "removed", "recreated", "took_out", "put_back", "unbound", "rebound", "history",
                 "kept", "gone", "failed", "unavailable", "conflicted"]
"""What an item did, in the direction walked. Files: `restored` (written back to a version it had), `removed`
(deleted), `recreated` (written back where it was gone). Cells: `took_out` (deleted), `put_back` (inserted
again), `restored` (its source written back). Names: `unbound`, `rebound` (to `Item.now`). `history`: a turn
went out of (or back into) the session's history, and nothing else changed. The rest are the statuses that
left the item as it was."""

_BY_STATUS: dict[Status, Effect] = {"restored": "restored", "kept": "kept", "conflicted": "conflicted",
                                    "skipped": "gone", "failed": "failed", "unavailable": "unavailable"}
"""The effect of an item whose part named none: what its status says."""

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
    effect: Effect = "restored"
    now: str = ""
    """For a name rebound: what it holds now (`repr`, short), so its sentence can say "x is back to 3"."""


@dataclass
class Outcome:
    direction: Direction
    items: list[Item] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    """Summaries a kind phrased itself, in the order the engine walked; `text()` shows them first."""
    runs: int = 1
    """How many runs the walk took back (or put back): a sentence says "this run" or "these 3 runs"."""
    nothing: str = ""
    """Why there was nothing to walk at all ("Nothing to redo: ..."), said instead of any sentence."""

    def add(self, status: Status, kind: str, name: str, why: str = "", *, told: bool = False,
            effect: Effect | None = None, now: str = "") -> None:
        """`effect`: what the item did, where its status does not say it (a file removed, a name unbound)."""
        self.items.append(Item(status, kind, name, why, told, effect or _BY_STATUS[status], now))

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
        return {"direction": self.direction, "report": self.report(), "counts": counts}

    def sentences(self) -> list[str]:
        """One plain sentence per effect: files, then cells, names, the history, then what was kept or could not
        be done ("Removed notes.md, which this run created.")."""
        if self.nothing:
            return [self.nothing]
        return phrase(self) or ["Nothing of this run was left to undo." if self.direction == "undo" else
                                "Nothing was left to redo."]

    def report(self) -> str:
        """The sentences, one a line: what a card's note and `%agent undo` show."""
        return "\n".join(self.sentences())


def _lines(items: list[Item]) -> list[str]:
    """One line per status, each naming its items by kind: "Undone: file a.py, binding df"."""
    lines = []
    for status, head in _HEADS.items():
        group = [i for i in items if i.status == status]
        if group:
            names = ", ".join(f"{i.kind} {i.name}" + (f" ({i.why})" if i.why else "") for i in group)
            lines.append(f"{head}: {names}.")
    return lines
