"""What each turn did to the notebook and the namespace, so `%agent undo` can take the whole turn back.

A turn is one prompt's run. The runner opens it in the run's own task and sets `TURN`; the loop's tool
calls and the tasks of subagents are created inside that task, so they inherit the variable and record
into the same turn without being told. A change made outside any turn (a tool called from a script)
becomes a turn of its own.

Changes are kept in the order they happened; undo walks them newest first, so a cell the agent inserted
and then edited is first restored to what was inserted, then deleted. Each change keeps what the agent
left behind, which is how undo sees that the person changed a cell since and leaves it alone.

A turn that changed files records `Files` once it ends, and names its session's turn in the checkpoint store
(`message_id`, the prompt's user message), so one undo takes back its files, its cells and its bindings.
What an undo took is kept (`Undone`, newest last) so `%agent redo` can put it back, until the next prompt
of that session starts a new turn.

Every turn has an id, which a finished run's card names (`kernel/card_undo.py`): a page asks the kernel
about that turn, even after a reload, and the journal answers whether it can still be undone, was undone
(and what that did), or is too old. Ids are random, so a card saved by another kernel names nothing here
unless that kernel kept its turns for this notebook.

Turns are kept in the project's store as they change (`records.py`, given by `keep_in`): a new kernel for the
same notebook reads them back on first use, so an undo after a restart still takes back the cells by id.
Live bindings cannot outlive their kernel: a run read back is a `GoneRun`, which an undo names as gone.
"""

from __future__ import annotations

import itertools
import time
import uuid
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

KEEP_TURNS = 20
"""How many turns can be undone; older ones are forgotten."""
KEEP_IDS = 1000
"""How many ids of undone or forgotten turns are remembered, so their cards can say what became of them."""


@dataclass(frozen=True)
class LiveRun:
    """A live python run (tool or kernel-side cell run) whose bindings `LiveRunner.undo` can take back."""

    run_id: str


@dataclass(frozen=True)
class GoneRun(LiveRun):
    """A live run of a kernel before a restart: its bindings went with that kernel, so nothing can take them
    back; an undo says so, naming them."""

    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Inserted:
    cell_id: str
    source: str
    """What the agent put in it: if the cell reads otherwise at undo time, the person changed it."""


@dataclass(frozen=True)
class Replaced:
    cell_id: str
    before_source: str
    before_type: str
    after_source: str
    after_type: str


@dataclass(frozen=True)
class Deleted:
    cell: dict[str, Any]
    """The cell as it was (`Cell.model_dump()`), outputs included."""
    index: int
    """Its position before the deletion."""


@dataclass(frozen=True)
class Files:
    """The turn changed files (the checkpoint store holds them under the turn's `message_id`)."""

    count: int


@dataclass(frozen=True)
class Reinsert:
    """An inserted cell that undo deleted, as it was then (outputs included): redo puts it back at `index`."""

    cell: dict[str, Any]
    index: int


@dataclass(frozen=True)
class Restored:
    """A deleted cell that undo put back as `cell_id`: redo deletes it again if it still reads `source`."""

    cell_id: str
    source: str


Change = LiveRun | Inserted | Replaced | Deleted | Files
Undid = LiveRun | Reinsert | Replaced | Restored
"""What undo did, for redo: a run's bindings, a cell deleted, a source restored, a cell put back."""

_order = itertools.count()


@dataclass(eq=False)
class Turn:
    session_id: str | None
    """The session whose prompt started the turn (its subagents' changes land here too)."""
    cell_id: str | None = None
    """The calling cell, when known."""
    cell_source: str | None = None
    """The calling cell's text as the kernel received it."""
    started: float = field(default_factory=time.time)
    changes: list[tuple[int, Change]] = field(default_factory=list)
    below_calling: str | None = None
    """The last cell this turn inserted below the calling cell: the next such insert goes below it, so the
    cells read in the order they were made."""
    id: str = field(default_factory=lambda: f"turn_{uuid.uuid4().hex}")
    report: str | None = None
    """What undoing the turn did, once it was undone."""
    message_id: str | None = None
    """The user message of the run's prompt: the turn's name in the session's checkpoints and history."""
    undid: list[Undid] = field(default_factory=list)
    """What the latest undo of the turn did, in the order it did it; redo walks it backwards."""
    proposed: bool = False
    """The turn proposed cell changes for the person to accept (`pending.py`): one accepted later is recorded
    here, so the run's card names the turn even while nothing of it has landed yet."""

    def record(self, change: Change) -> None:
        self.changes.append((next(_order), change))

    @property
    def files(self) -> int:
        """How many files the turn changed (0: none, or not known)."""
        return sum(c.count for _, c in self.changes if isinstance(c, Files))

    @property
    def latest(self) -> int:
        return self.changes[-1][0] if self.changes else -1


@dataclass(eq=False)
class Undone:
    """One undo (`%agent undo`, `--to`, or a card's Undo): what `%agent redo` puts back."""

    session_id: str | None
    turns: list[Turn]
    """Newest first, as they were taken back."""
    files: bool
    """The session's files and history were taken back with them (the checkpoint store's undo)."""
    report: str = ""
    seq: int = 0
    """Its number among the notebook's undos, kept with the turns it took, so a new kernel can redo it."""


class TurnRecords(Protocol):
    """Where turns are kept beyond the kernel (`records.py` keeps them in the project's store)."""

    def key(self) -> str | None: ...
    def save(self, turn: Turn, undo: Undone | None, *, undone: bool = False) -> None: ...
    def forget(self, turn_id: str) -> None: ...
    def load(self) -> tuple[list[Turn], list[Undone]]: ...


TURN: ContextVar[Turn | None] = ContextVar("opencode_nb_turn", default=None)


class Journal:
    def __init__(self) -> None:
        self._turns: list[Turn] = []
        self._undone: dict[str, Turn] = {}
        self._forgotten: dict[str, None] = {}
        self._origins: dict[str, Turn] = {}
        self._redoable: list[Undone] = []
        self.records: TurnRecords | None = None
        """Where turns are kept beyond this kernel (`keep_in`); None: in memory only."""
        self._loaded = False

    # -------------------------------------------------------------------------------- kept beyond the kernel

    def keep_in(self, records: TurnRecords) -> None:
        """Keep every turn in `records` from now on; what an earlier kernel kept there is read on first use."""
        self.records, self._loaded = records, False

    def _ensure(self) -> None:
        """Read the kept turns once the notebook is known (a page may name it only after the first cells)."""
        if self._loaded or self.records is None or self.records.key() is None:
            return
        self._loaded = True
        kept, undone = self.records.load()
        adopt([t for t in kept] + [t for u in undone for t in u.turns], self._turns)
        self._turns[:0] = [t for t in kept if t.id not in {m.id for m in self._turns}]
        for u in undone:
            for t in u.turns:
                self._undone.setdefault(t.id, t)
        self._redoable[:0] = [u for u in undone if u.turns and u.seq]
        for turn in self._turns:
            self.save(turn)

    def save(self, turn: Turn) -> None:
        """Write `turn` as it is now (kept, or taken back by which undo) to the records, if any."""
        if self.records is None:
            return
        if any(t is turn for t in self._turns):
            self.records.save(turn, None)
            return
        undo = next((u for u in self._redoable if any(t is turn for t in u.turns)), None)
        self.records.save(turn, undo, undone=True)

    @property
    def turns(self) -> list[Turn]:
        """Turns that changed something, oldest first."""
        self._ensure()
        return self._turns

    @turns.setter
    def turns(self, turns: list[Turn]) -> None:
        self._turns = turns

    @property
    def undone(self) -> dict[str, Turn]:
        """Turns taken back, by id (the latest `KEEP_IDS`)."""
        self._ensure()
        return self._undone

    @property
    def forgotten(self) -> dict[str, None]:
        """Ids of turns pushed out by newer ones (`KEEP_TURNS`): too old to undo."""
        self._ensure()
        return self._forgotten

    @property
    def redoable(self) -> list[Undone]:
        """The undos `%agent redo` can still put back, latest last."""
        self._ensure()
        return self._redoable

    def push_undo(self, undone: Undone) -> None:
        """Remember an undo for `%agent redo`, and keep what it took as taken by it."""
        undone.seq = max((u.seq for u in self.redoable), default=0) + 1
        self.redoable.append(undone)
        for turn in undone.turns:
            self.save(turn)

    def pop_undo(self) -> Undone:
        """The latest undo, no longer to be redone (the caller puts its turns back)."""
        return self.redoable.pop()

    def begin(self, session_id: str, *, cell_id: str | None = None, cell_source: str | None = None) -> Turn:
        """A new turn, kept once it changes something; the caller sets `TURN` to it in the run's task."""
        turn = Turn(session_id, cell_id, cell_source)
        self._origins[session_id] = turn
        # A new prompt builds on the state as it is now: what an undo of this session took stays taken.
        dropped = [u for u in self.redoable if u.session_id == session_id]
        self._redoable = [u for u in self.redoable if u.session_id != session_id]
        for undo in dropped:
            for taken in undo.turns:
                self.save(taken)
        return turn

    def origin(self, session_id: str) -> Turn | None:
        """The latest turn a prompt to `session_id` started: where that prompt came from."""
        return self._origins.get(session_id)

    def record(self, change: Change) -> None:
        """Add `change` to the current turn, or to a turn of its own outside any."""
        turn = TURN.get() or Turn(None)
        if not any(t is turn for t in self.turns):
            self.turns.append(turn)
            while len(self.turns) > KEEP_TURNS:
                old = self.turns.pop(0)
                _remember(self.forgotten, old.id, None)
                if self.records is not None:
                    self.records.forget(old.id)
        turn.record(change)
        self.save(turn)

    def put_back(self, turn: Turn) -> None:
        """Keep a redone turn again, as the newest: it can be undone again."""
        self.undone.pop(turn.id, None)
        if not any(t is turn for t in self.turns):
            self.turns.append(turn)
        self.save(turn)

    def session_turns(self, session_id: str, message_ids: set[str]) -> list[Turn]:
        """The kept turns of `session_id` whose prompt is one of `message_ids`, newest first."""
        found = [t for t in self.turns if t.session_id == session_id and t.message_id in message_ids]
        return sorted(found, key=lambda t: t.latest, reverse=True)

    def latest(self) -> Turn | None:
        """The turn with the newest change, if any turn changed anything."""
        done = [t for t in self.turns if t.changes]
        return max(done, key=lambda t: t.latest) if done else None

    def find(self, turn_id: str) -> Turn | None:
        """The turn with this id that can still be undone."""
        return next((t for t in self.turns if t.id == turn_id), None)

    def remove(self, turn: Turn) -> None:
        """Take `turn` out before undoing it: a second undo of it finds it undone, never does it twice."""
        self.turns = [t for t in self.turns if t is not turn]
        _remember(self.undone, turn.id, turn)
        self.save(turn)

    def later(self, turn: Turn) -> list[Turn]:
        """The other turns still kept that changed something after `turn` first did."""
        if not turn.changes:
            return []
        first = turn.changes[0][0]
        return [t for t in self.turns if t is not turn and t.latest > first]


def adopt(loaded: list[Turn], live: list[Turn]) -> None:
    """Number the changes read back (each kept with its old kernel's number) before those of this kernel, in
    their old order: which turn changed something last stays true across the restart."""
    steps = sorted(((n, t, i) for t in loaded for i, (n, _) in enumerate(t.changes)), key=lambda s: s[0])
    for _, turn, i in steps:
        turn.changes[i] = (next(_order), turn.changes[i][1])
    for turn in live:
        turn.changes = [(next(_order), c) for _, c in turn.changes]


def _remember(kept: dict[str, Any], key: str, value: Any) -> None:
    kept[key] = value
    while len(kept) > KEEP_IDS:
        del kept[next(iter(kept))]
