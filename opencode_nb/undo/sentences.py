"""How an `Outcome` reads to the person: one plain sentence per effect, phrased from its items alone.

Undo and redo are mirrors: an undo "Removed notes.md, which this run created.", its redo "Put back notes.md,
which this run created.". Cells are counted, not named (a cell id means nothing on the page); files and
names are named. Each group is one sentence, so a card's note lists them one a line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol


class Item(Protocol):
    """What a sentence reads of an `outcome.Item` (named here so this module does not import the outcome's)."""

    @property
    def kind(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def why(self) -> str: ...
    @property
    def effect(self) -> str: ...
    @property
    def now(self) -> str: ...


class Outcome(Protocol):
    @property
    def direction(self) -> str: ...
    @property
    def runs(self) -> int: ...
    @property
    def items(self) -> Sequence[Item]: ...


class Words:
    """What a sentence needs besides its items: the direction, and "this run" or "these 3 runs"."""

    def __init__(self, outcome: Outcome) -> None:
        self.undo = outcome.direction == "undo"
        self.run = "this run" if outcome.runs == 1 else f"these {outcome.runs} runs"
        self.since = f"after {self.run}" if self.undo else "after the undo"


Say = Callable[[list[Item], Words], list[str]]


def phrase(outcome: Outcome) -> list[str]:
    """The sentences of the effects present, in `ORDER`'s order; an item no sentence of `ORDER` takes (a kind
    of change phrased nowhere yet) still gets one of its own, so nothing done goes unsaid."""
    words = Words(outcome)
    said: list[str] = []
    left = list(outcome.items)
    for kind, effects, say in ORDER:
        group = [i for i in left if (kind is None or i.kind == kind) and i.effect in effects]
        if group:
            said += say(group, words)
            left = [i for i in left if i not in group]
    verb = "Took back" if words.undo else "Put back"
    return said + [f"{verb} {_what(i)}." for i in left]


def names(items: list[Item]) -> str:
    """`a.py`, `a.py and b.py`, `a.py, b.py and c.py`: each name once, sorted, so the same effects always read
    the same whatever order the walk met them in."""
    named = sorted(dict.fromkeys(i.name for i in items))
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]


def cells(items: list[Item]) -> str:
    """"the cell" or "the 2 cells"."""
    n = len(dict.fromkeys(i.name for i in items))
    return "the cell" if n == 1 else f"the {n} cells"


def _value(item: Item) -> str:
    text = item.now or "its earlier value"
    return text if len(text) <= 60 else text[:59] + "…"


# ---------------------------------------------------------------------------------------------- files

def files_restored(items: list[Item], w: Words) -> list[str]:
    if w.undo:
        return [f"Restored {names(items)} to how {'it was' if len(items) == 1 else 'they were'} before {w.run}."]
    return [f"Put back {w.run}'s changes to {names(items)}."]


def files_removed(items: list[Item], w: Words) -> list[str]:
    if w.undo:
        return [f"Removed {names(items)}, which {w.run} created."]
    return [f"Removed {names(items)} again, as {w.run} did."]


def files_recreated(items: list[Item], w: Words) -> list[str]:
    if w.undo:
        return [f"Recreated {names(items)}, which {w.run} deleted."]
    return [f"Put back {names(items)}, which {w.run} created."]


# ---------------------------------------------------------------------------------------------- cells

def cells_taken_out(items: list[Item], w: Words) -> list[str]:
    if w.undo:
        return [f"Took out {cells(items)} {w.run} inserted."]
    return [f"Took out {cells(items)} {w.run} deleted, again."]


def cells_put_back(items: list[Item], w: Words) -> list[str]:
    return [f"Put back {cells(items)} {w.run} {'deleted' if w.undo else 'inserted'}."]


def cells_restored(items: list[Item], w: Words) -> list[str]:
    if w.undo:
        return [f"Restored {cells(items)} {w.run} edited."]
    return [f"Put back {w.run}'s edit{'s' * (len(items) != 1)} to {cells(items)}."]


# ---------------------------------------------------------------------------------------------- names

def bindings(items: list[Item], w: Words) -> list[str]:
    """The namespace in one sentence: "Unbound df; x is back to 3." (undo), "Put back df as this run left it;
    unbound y again." (redo)."""
    unbound = [i for i in items if i.effect == "unbound"]
    rebound = [i for i in items if i.effect == "rebound"]
    if w.undo:
        back = ", ".join(f"{i.name} is back to {_value(i)}" for i in rebound)
        if not unbound:
            return [f"Set {', '.join(f'{i.name} back to {_value(i)}' for i in rebound)}."]
        return [f"Unbound {names(unbound)}" + (f"; {back}." if back else ".")]
    parts = [f"Put back {names(rebound)} as {w.run} left {'it' if len(rebound) == 1 else 'them'}"] if rebound else []
    parts += [f"{'u' if parts else 'U'}nbound {names(unbound)} again"] if unbound else []
    return ["; ".join(parts) + "."]


# ---------------------------------------------------------------------------------------------- the rest

def history(items: list[Item], w: Words) -> list[str]:
    if w.undo:
        return [f"Took {names(items)} out of the session's history; it changed no files."]
    return [f"Put {names(items)} back in the session's history; it changed no files."]


def kept(items: list[Item], w: Words) -> list[str]:
    """The person's version, kept: cells counted, names and files named, each group with why."""
    said = []
    of_cells = [i for i in items if i.kind == "cell"]
    if of_cells:
        said.append(f"Kept your version of {cells(of_cells)} you edited {w.since}.")
    of_names = [i for i in items if i.kind == "binding"]
    if of_names:
        said.append(f"Kept your value of {names(of_names)} (you rebound "
                    f"{'it' if len(of_names) == 1 else 'them'} {w.since}).")
    others = [i for i in items if i.kind not in ("cell", "binding")]
    for why in dict.fromkeys(i.why for i in others):
        group = [i for i in others if i.why == why]
        said.append(f"Kept your version of {names(group)}" + (f" ({why})." if why else "."))
    return said


def gone(items: list[Item], w: Words) -> list[str]:
    said = []
    of_cells = [i for i in items if i.kind == "cell"]
    if of_cells:
        one = len(of_cells) == 1
        said.append(f"{'The cell' if one else f'{len(of_cells)} cells'} {w.run} changed "
                    f"{'was' if one else 'were'} already gone.")
    said += [f"Nothing to do for {i.kind} {i.name}: it {i.why or 'was already gone'}." for i in items
             if i.kind != "cell"]
    return said


def failed(items: list[Item], w: Words) -> list[str]:
    """One sentence a failure: "Could not restore c.py: <why>."."""
    verb = {"file": "restore" if w.undo else "put back", "cell": "change", "binding": "rebind"}
    return [f"Could not {verb.get(i.kind, 'undo' if w.undo else 'redo')} {_what(i)}: {i.why or 'refused'}."
            for i in items]


def unavailable(items: list[Item], w: Words) -> list[str]:
    """What cannot be taken back (or put back) here at all, each with why."""
    back = "take back" if w.undo else "put back"
    said = []
    for i in items:
        if i.kind == "file" and i.name == "files":
            said.append(f"Files were left as they are: {i.why}.")
        elif i.kind == "binding" and i.why == "changed in place":
            said.append(f"Could not {back} the in-place changes {w.run} made to {i.name}.")
        else:
            said.append(f"Could not {back} {_what(i)}" + (f": {i.why}." if i.why else "."))
    return said


def conflicted(items: list[Item], w: Words) -> list[str]:
    return [f"Left {_what(i)} as it is" + (f": {i.why}." if i.why else ".") for i in items]


def _what(item: Item) -> str:
    """A file by its path, a count of cell changes as "2 changes to cells", anything else by kind and name."""
    if item.kind == "file":
        return item.name
    if item.kind == "cell" and item.name[:1].isdigit():
        return f"{item.name} to cells"
    return f"{item.kind} {item.name}"


ORDER: list[tuple[str | None, tuple[str, ...], Say]] = [
    ("file", ("restored",), files_restored),
    ("file", ("recreated",), files_recreated),
    ("file", ("removed",), files_removed),
    ("cell", ("took_out",), cells_taken_out),
    ("cell", ("put_back",), cells_put_back),
    ("cell", ("restored",), cells_restored),
    ("binding", ("unbound", "rebound"), bindings),
    (None, ("history",), history),
    (None, ("kept",), kept),
    (None, ("gone",), gone),
    (None, ("failed",), failed),
    (None, ("unavailable",), unavailable),
    (None, ("conflicted",), conflicted),
]
"""Which items make which sentence, in the order they are said (`None`: any kind)."""
