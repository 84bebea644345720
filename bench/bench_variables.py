"""The variables tool on an analyst's namespace: listing it (goal: ≤ 50 ms) and describing each value.

The namespace holds a 1 GB float64 pandas frame (15M rows × 8 columns, built column by column as a parquet
reader would), a million-row frame with text, categories and dates, numpy arrays, a 5M-item list, a
2M-row polars frame, a ten-billion-row lazy polars join, a lazy polars frame whose Python function decides
its schema, a Dask frame and one after `set_index` (whose divisions would take a pass over the data), plain
values and the modules and functions a notebook imports. Listing must stay cheap whatever the data weighs; a
description spends at most its time budget on scans, plus the head and formatting.

Listing must not grow with a frame's columns either: two frames of 20,000 columns are listed on their own,
one all float64 (as a wide feature matrix), one of mixed kinds with 3,000 categorical and text columns (whose
memory is sampled).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd
import polars as pl

from opencode_nb.tool.support.describe import describe, list_namespace

GOAL_LIST_S = 0.050


def namespace() -> dict[str, Any]:
    rng = np.random.default_rng(7)
    big = pd.DataFrame({f"x{i}": rng.random(15_000_000) for i in range(8)})
    n = 1_000_000
    orders = pd.DataFrame({
        "order_id": np.arange(n),
        "city": pd.Series(rng.choice(["Paris", "Rome", "Oslo", "Lima", "Kyiv"], n), dtype=object),
        "channel": pd.Categorical(rng.choice(["web", "store", "phone"], n)),
        "placed": pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 365 * 24, n), unit="h"),
        "amount": np.where(rng.random(n) < 0.02, np.nan, rng.gamma(2.0, 30.0, n)),
    })
    side = pl.LazyFrame({"a": range(100_000)})
    return {
        "big": big, "orders": orders, "amounts": orders["amount"], "matrix": rng.random((2_000, 2_000)),
        "labels": rng.integers(0, 10, 5_000_000), "ids": list(range(5_000_000)),
        "records": [{"id": i, "score": i * 0.5} for i in range(100_000)],
        "lookup": {f"k{i}": i for i in range(100_000)},
        "events": pl.DataFrame({"user": rng.integers(0, 1_000, 2_000_000),
                                "kind": rng.choice(["view", "buy"], 2_000_000)}),
        "pairs": side.join(side.rename({"a": "b"}), how="cross"),
        "parts": dd.from_pandas(orders, npartitions=8),
        "by_time": dd.from_pandas(orders, npartitions=8).set_index("placed"),
        "scored": side.with_columns(pl.col("a").map_batches(lambda s: s * 2).alias("double")),
        "notes": "lorem ipsum " * 100_000, "threshold": 0.75,
        "settings": SimpleNamespace(seed=7, folds=5), "np": np, "pd": pd, "pl": pl, "helper": lambda x: x,
    }


def wide_frames() -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(7)
    rows, names = 1_000, [f"f{i}" for i in range(20_000)]
    numeric = pd.DataFrame(rng.random((rows, len(names))), columns=names)
    mixed = {name: rng.random(rows) for name in names[:15_000]}
    mixed |= {name: pd.Series(rng.choice(["a", "b"], rows), dtype=object) for name in names[15_000:17_000]}
    mixed |= {name: pd.Categorical(rng.choice(["a", "b"], rows)) for name in names[17_000:18_500]}
    mixed |= {name: pd.Series(rng.choice(["a", "b"], rows), dtype="str") for name in names[18_500:]}
    return {"numeric": numeric, "mixed": pd.DataFrame(mixed)}


def timed(fn: Callable[[], Any], runs: int) -> tuple[float, float, Any]:
    """Median and worst wall time of `runs` calls, and the last result."""
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), max(times), result


def main() -> None:
    start = time.perf_counter()
    ns = namespace()
    print(f"namespace built in {time.perf_counter() - start:.1f} s; big frame "
          f"{ns['big'].memory_usage(deep=False).sum() / 2**30:.2f} GiB\n")
    median, worst, listing = timed(lambda: list_namespace(ns), 21)
    verdict = "ok" if median <= GOAL_LIST_S else "OVER GOAL"
    print(f"listing {listing.total} variables: median {median * 1000:.1f} ms, worst {worst * 1000:.1f} ms "
          f"({len(listing.text.encode()) / 1024:.1f} KB) — goal ≤ {GOAL_LIST_S * 1000:.0f} ms: {verdict}")
    for kind, wide in wide_frames().items():
        median, worst, listing = timed(lambda wide=wide: list_namespace({"wide": wide}), 21)
        verdict = "ok" if median <= GOAL_LIST_S else "OVER GOAL"
        print(f"listing a 1,000×20,000 {kind} frame: median {median * 1000:.1f} ms, worst {worst * 1000:.1f} ms "
              f"— goal ≤ {GOAL_LIST_S * 1000:.0f} ms: {verdict}")
    median, worst, text = timed(lambda: describe(ns["big"], "big"), 5)
    print(f"describe big (1 GB, 15M×8 float64): median {median * 1000:.0f} ms, worst {worst * 1000:.0f} ms "
          f"({len(text.encode()) / 1024:.1f} KB)\n")
    print("describe, one run each:")
    for name in ns:
        if name in ("np", "pd", "pl", "helper"):
            continue
        median, _, text = timed(lambda name=name: describe(ns[name], name), 1)
        print(f"  {name:<10} {median * 1000:7.1f} ms  {len(text.encode()) / 1024:5.1f} KB")


if __name__ == "__main__":
    main()
