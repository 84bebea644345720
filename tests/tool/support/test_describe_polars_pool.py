"""Looking at polars values leaves polars' thread pool unstarted: once its `polars-N` threads have run, the kernel
can no longer be forked, and every later run of the python tool pays for a spawned worker.

Each test runs in a fresh interpreter, since any earlier polars call of this test process may have started the
pool already, and reads the process's OS thread names from /proc, as the fork gate does.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="OS thread names are read from /proc")

SETUP = """
import json, os, re
import numpy as np
import polars as pl
from opencode_nb.tool.support.describe import describe, list_namespace

def pool_threads():
    names = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as comm:
                names.append(comm.read().strip())
        except OSError:
            pass
    return sorted(n for n in names if re.fullmatch(r"polars-\\d+", n))

n = 150_000
i = np.arange(n)
half = pl.DataFrame([
    pl.Series("id", i),
    pl.Series("score", np.where(i % 10 == 0, None, i * 0.5).tolist(), dtype=pl.Float64),
    pl.Series("city", [None if k % 7 == 0 else ("Paris", "Rome", "Oslo")[k % 3] for k in range(n)]),
    pl.Series("grade", np.array(["a", "b"])[i % 2].tolist(), dtype=pl.Categorical),
    pl.Series("ok", i % 4 == 0),
    pl.Series("when", np.datetime64("2024-01-01") + (i % 365).astype("timedelta64[D]")),
])
df = half.vstack(half)  # two chunks, 300,000 rows: long enough for polars to count on its pool
lazy = pl.LazyFrame({"a": [1, 2, 3], "b": ["x", "y", "x"]}).group_by("b").agg(pl.col("a").sum()).join(
    pl.LazyFrame({"b": ["x"], "c": [1.5]}), on="b")
assert pool_threads() == [], "building the values started the pool: the test proves nothing"
"""


def run_fresh(script: str) -> dict:
    """What `script` (run after SETUP, in a new interpreter) prints as JSON."""
    code = SETUP + textwrap.dedent(script)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_describing_and_listing_polars_values_starts_no_polars_thread():
    out = run_fresh("""
        texts = {"df": describe(df, "df"), "city": describe(df["city"], "city"), "score": describe(df["score"], "s"),
                 "lazy": describe(lazy, "lazy")}
        texts["listing"] = list_namespace({"df": df, "city": df["city"], "lazy": lazy}).text
        after_look = pool_threads()
        df["city"].value_counts()  # the call the description used to make
        print(json.dumps({"after_look": after_look, "after_value_counts": pool_threads(), **texts}))
    """)
    assert out["after_look"] == []
    assert out["after_value_counts"] != [], "the probe must see the pool when polars does start it"


def test_the_pool_free_description_still_has_shape_dtypes_nulls_and_figures():
    out = run_fresh("""
        print(json.dumps({"df": describe(df, "df"), "city": describe(df["city"], "city"),
                          "listing": list_namespace({"df": df, "lazy": lazy}).text, "threads": pool_threads()}))
    """)
    frame, series, listing = out["df"], out["city"], out["listing"]
    assert out["threads"] == []
    assert frame.startswith("df: polars DataFrame, 300,000 rows × 6 columns, ")
    assert "| id | Int64 | 0 | min 0 · max 149,999 · mean 74999.5 |" in frame
    assert "| score | Float64 | 30,000 | min 0.5 · max 74999.5 · mean 37500 |" in frame
    assert "| city | String | 42,858 | 3 distinct in the first 100,000 rows; top: " in frame
    assert "| grade | Categorical | 0 | 2 distinct in the first 100,000 rows; top: 'a' 50,000 · 'b' 50,000 |" in frame
    assert "| ok | Boolean | 0 | True 75,000 · False 225,000 |" in frame
    assert "| when | Date | 0 | min 2024-01-01 · max 2024-12-30 |" in frame
    assert "First 5 rows:" in frame
    assert series.startswith("city: polars Series 'city', 300,000 values, dtype String, ")
    assert "Nulls: 42,858" in series
    assert "| df | pl.DataFrame | 300,000×6 | " in listing
    assert "| lazy | pl.LazyFrame | ?×3 | " in listing


def test_text_counted_over_the_first_rows_says_why_and_how_to_count_them_all():
    out = run_fresh("""
        print(json.dumps({"df": describe(df, "df"), "city": describe(df["city"], "city"),
                          "small": describe(df.head(1000), "small")}))
    """)
    assert ("Text values were counted in the first 100,000 rows only: counting them all would start polars' "
            "thread pool in the kernel") in out["df"]
    assert 'The python tool counts them all: `df["name"].value_counts()`.' in out["df"]
    assert "The python tool counts them all: `city.value_counts()`." in out["city"]
    assert "| city | String | 143 | 3 distinct; top: " in out["small"]  # a short column is counted in full
    assert "Text values were counted" not in out["small"]


def test_once_the_pool_runs_anyway_polars_counts_the_text_in_full():
    out = run_fresh("""
        df.group_by("city").len()  # the person's own compute starts the pool
        print(json.dumps({"df": describe(df, "df"), "threads": pool_threads()}))
    """)
    assert out["threads"] != []
    assert "| city | String | 42,858 | 3 distinct; top: " in out["df"]
    assert "Text values were counted" not in out["df"]
