"""polars' thread pool, which a look at the person's values must not start.

Once the pool's threads (`polars-0`, `polars-1`, …) have run, the kernel can no longer be copied by a fork
(`opencode_nb.kernel.python.gates`): every later run of the python tool goes to a spawned worker, a second slower. So
a description reads polars values only through calls measured to leave the pool alone; measured with polars 2.1
in a fresh interpreter, from /proc/self/task/*/comm before and after each call:

- Off the pool, on 12.8 million rows in 64 chunks of every dtype (integers to Int128, floats with NaN and
  nulls, Decimal, Boolean, String, Categorical, Enum, Date, Datetime, Duration, List, Array, Struct, Object):
  `shape`, `schema`, `estimated_size`, `null_count`, `min`, `max`, `mean`, `sum`, `head`, `to_list`,
  `to_numpy`, a Series' `to_arrow`, printing a frame; also `n_unique` of a String column. Resolving a
  LazyFrame's schema and printing its plan, for in-memory frames, joins, group_by, parquet and IPC scans.
- On the pool: `value_counts` (from about 100,000 rows; 1,000 did not), `drop_nulls` and `is_nan` of a long
  column, `unique`, `sort`, `median`, `quantile`, `describe`, a frame's `to_arrow`, `n_unique` and
  `to_physical` of a Categorical, a `select` (even of a `min`); and the schema of a `scan_csv` without
  `schema=`, which is inferred from the file. Reading any file eagerly starts it too, so for many people the
  pool runs before the agent looks, and then nothing is saved by avoiding it.

Counting text values is the one figure that changes: while the pool is off it is done in Python over the first
rows (`Counting`), and the description says so.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections import Counter
from typing import Any

from .common import FULL_COUNT_ROWS, POLARS_COUNT_S, POLARS_HASH_S, PREFIX_ROWS, TOP_VALUES, Budget, top_values

POLARS_POOL_THREAD = re.compile(r"polars-\d+")
"""The OS name of a thread of polars' compute pool, as the fork gate reads it."""


def polars_pool_running() -> bool:
    """Whether polars' compute pool has started in this process: its OS threads are named `polars-0`,
    `polars-1`, … (the name the fork gate looks for). False where threads cannot be listed (not Linux): the
    description then takes the path that leaves the pool alone."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return False
    for task in tasks:
        with contextlib.suppress(OSError), open(f"/proc/self/task/{task}/comm", encoding="utf-8") as comm:
            if POLARS_POOL_THREAD.fullmatch(comm.read().strip()):
                return True
    return False


class Counting:
    """How one description counts the values of polars text columns: with polars up to `FULL_COUNT_ROWS` when
    its pool runs anyway (`pooled`), else in Python over the first `PREFIX_ROWS`; and whether a column was cut
    shorter than polars would have counted it, which `note` then explains."""

    def __init__(self, pooled: bool) -> None:
        self.pooled = pooled
        self.cut = False
        """Whether a column was counted over its first rows only, to keep the pool from starting."""

    def values(self, s: Any, name: str, budget: Budget) -> str:
        n = len(s)
        if self.pooled:
            counted = n if n <= FULL_COUNT_ROWS else PREFIX_ROWS
            if not budget.affords(counted * POLARS_HASH_S, name):
                return ""
            counts = s.head(counted).alias("value").drop_nulls().value_counts(sort=True)
            top, distinct = dict(counts.head(TOP_VALUES).rows()), counts.height
        else:
            counted = min(n, PREFIX_ROWS)
            if not budget.affords(counted * POLARS_COUNT_S, name):
                return ""
            tallied = Counter(s.head(counted).to_list())
            tallied.pop(None, None)
            top, distinct = dict(tallied.most_common(TOP_VALUES)), len(tallied)
            self.cut = self.cut or (counted < n <= FULL_COUNT_ROWS)
        where = "" if counted == n else f" in the first {counted:,} rows"
        return top_values(top, f"{distinct:,} distinct", where)

    def note(self, counter: str) -> list[str]:
        """The closing line saying why text values were counted over fewer rows than usual; `counter` is the
        call that counts them all."""
        if not self.cut:
            return []
        return ["", f"Text values were counted in the first {PREFIX_ROWS:,} rows only: counting them all would "
                "start polars' thread pool in the kernel, after which the python tool could no longer run code in "
                f"a quick copy of it. The python tool counts them all: `{counter}`."]
