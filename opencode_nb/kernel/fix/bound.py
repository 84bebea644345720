"""Which cell last bound a name: read from IPython's input history, newest cell first, never by running it.

Each cell's text is transformed as IPython runs it (magics, `!` lines) and parsed once; what it binds at its
top level is kept per execution count, so a second Fix in a long notebook parses only the cells run since.
The look stops at its time budget: a name not found by then is unknown, and said so, as is a name bound in a
way the text does not show (`exec`, `globals()[…]`, the agent's own live runs).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from .reads import binds, parse

BUDGET_S = 0.02
"""Time the look may take over the history; a notebook of thousands of small cells fits."""


class Bindings:
    """What each executed cell binds, read lazily from the history (`In`)."""

    def __init__(self, shell: Any, cell_id_of: Callable[[int], str | None]) -> None:
        self.shell = shell
        self.cell_id_of = cell_id_of
        self._binds: dict[int, frozenset[str]] = {}

    def last_bound(self, names: Iterable[str], *, before: int | None = None,
                   budget_s: float = BUDGET_S) -> dict[str, str]:
        """Name → `cell [ab12] (In [4])` for each of `names` a cell's text binds, the latest such cell (up to
        count `before`, excluded, when given); names not found are left out."""
        wanted = set(names)
        found: dict[str, str] = {}
        history = self._history()
        if not wanted or not history:
            return found
        deadline = time.perf_counter() + budget_s
        top = len(history) - 1 if before is None else min(before - 1, len(history) - 1)
        for count in range(top, 0, -1):
            if not wanted or time.perf_counter() > deadline:
                break
            hits = self._bound_by(count, history[count]) & wanted
            for name in hits:
                cell_id = self.cell_id_of(count)
                found[name] = f"cell [{cell_id}] (In [{count}])" if cell_id else f"In [{count}]"
            wanted -= hits
        return found

    def _history(self) -> list[str]:
        manager = getattr(self.shell, "history_manager", None)
        history = getattr(manager, "input_hist_raw", None)
        return history if isinstance(history, list) else []

    def _bound_by(self, count: int, source: str) -> frozenset[str]:
        known = self._binds.get(count)
        if known is None:
            try:
                code = self.shell.transform_cell(source)
            except Exception:
                code = source
            tree = parse(code)
            known = frozenset(binds(tree)) if tree is not None else frozenset()
            self._binds[count] = known
        return known
