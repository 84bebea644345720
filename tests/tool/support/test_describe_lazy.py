"""Describing and listing lazy frames starts no compute, counted by effect: every partition a Dask graph
builds and every call of a polars plan's Python function goes through a counter of the test's own."""

import threading
import uuid
import warnings

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import polars as pl
import pytest
from distributed import Client, get_task_stream

from opencode_nb.tool.support.describe import describe, list_namespace
from opencode_nb.tool.support.describe.lazy import without_dask_compute

from .test_describe import rows


class Partitions:
    """Four partitions of a frame whose `x` runs backwards, built only when Dask runs the graph."""

    def __init__(self) -> None:
        self.built: list[int] = []
        self.token = uuid.uuid4().hex

    def __dask_tokenize__(self) -> str:
        return self.token  # dask remembers the divisions it worked out by token, across frames and tests

    def __call__(self, i: int) -> pd.DataFrame:
        self.built.append(i)
        return pd.DataFrame({"x": np.arange(i * 10.0, i * 10 + 10)[::-1], "y": np.arange(10)})

    def frame(self) -> dd.DataFrame:
        meta = pd.DataFrame({"x": pd.Series(dtype="float64"), "y": pd.Series(dtype="int64")})
        return dd.from_map(self, range(4), meta=meta, enforce_metadata=False)


@pytest.fixture
def partitions():
    with dask.config.set(scheduler="synchronous"):  # partitions are built in this process, where the count is
        yield Partitions()


def test_a_dask_frame_after_set_index_is_described_without_sampling_its_partitions(partitions):
    indexed = partitions.frame().set_index("x")
    text = describe(indexed, "ddf")
    listing = list_namespace({"ddf": indexed}).text
    assert partitions.built == []
    assert text.splitlines()[:2] == [
        "ddf: Dask DataFrame, 1 column, partitions not known without a compute (lazy: nothing has been computed)",
        "Divisions: not known without a compute (set_index, sort_values and repartition by size sample the data "
        "to choose them); index dtype float64, name 'x'"]
    assert "| y | int64 |" in text and "`len(ddf)`" in text
    assert rows(listing)["ddf"] == ["dd.DataFrame", "?×1", "int64×1", "lazy", "columns: y"]


def test_a_repartitioned_dask_frame_says_the_partition_count_it_was_given(partitions):
    text = describe(partitions.frame().set_index("x").repartition(npartitions=3), "ddf")
    plain = describe(partitions.frame().repartition(npartitions=3), "plain")
    assert partitions.built == []
    assert text.startswith("ddf: Dask DataFrame, 1 column, 3 partitions (lazy: nothing has been computed)\n"
                           "Divisions: not known without a compute")
    assert plain.splitlines()[:2] == [
        "plain: Dask DataFrame, 2 columns, 3 partitions (lazy: nothing has been computed)",
        "Divisions: unknown; index dtype int64"]


@pytest.mark.parametrize("build", [
    lambda ddf: ddf.sort_values("x"),
    lambda ddf: ddf.repartition(partition_size="1kB"),
    lambda ddf: ddf.set_index("x")["y"],
    lambda ddf: ddf.set_index("x").index,
], ids=["sort_values", "repartition by size", "a column after set_index", "the index after set_index"])
def test_no_dask_frame_or_series_needs_its_partitions_built_to_be_described(partitions, build):
    lazy = build(partitions.frame())
    text = describe(lazy, "v")
    list_namespace({"v": lazy})
    assert partitions.built == []
    assert "partitions not known without a compute" in text.splitlines()[0]


def test_figures_dask_knows_without_a_compute_are_still_given():
    ddf = dd.from_pandas(pd.DataFrame({"x": range(10)}), npartitions=2)
    assert describe(ddf, "ddf").splitlines()[:2] == [
        "ddf: Dask DataFrame, 1 column, 2 partitions (lazy: nothing has been computed)",
        "Divisions: known, 0 … 9; index dtype int64"]


def test_describing_leaves_the_frame_to_compute_as_before_and_then_shows_what_dask_learnt(partitions):
    indexed = partitions.frame().set_index("x")
    describe(indexed, "ddf")
    assert indexed.npartitions >= 1 and partitions.built  # the person's own read computes, as it always did
    assert indexed.compute().index.is_monotonic_increasing
    built = len(partitions.built)
    text = describe(indexed, "ddf")
    assert len(partitions.built) == built
    assert text.splitlines()[1].startswith("Divisions: known, 0 … 39; index dtype float64")


def test_the_default_distributed_client_runs_no_task_either():
    partitions = Partitions()
    with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client, \
            get_task_stream(client) as stream:
        text = describe(partitions.frame().set_index("x"), "ddf")
    assert stream.data == [] and partitions.built == []
    assert "partitions not known without a compute" in text


def test_a_compute_another_thread_starts_meanwhile_runs_as_usual(partitions):
    results = []

    def meanwhile() -> None:
        thread = threading.Thread(target=lambda: results.append(int(partitions.frame()["y"].sum().compute())))
        thread.start()
        thread.join()

    without_dask_compute(meanwhile)()
    assert results == [4 * 45]


class Calls:
    """A Python function for a polars plan, counting its calls."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, values):
        self.count += 1
        return values


@pytest.fixture
def udf():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # polars warns that map_elements is slow, as the person's code would
        yield Calls()


def test_a_lazyframe_whose_python_function_decides_its_schema_is_described_without_calling_it(udf):
    base = pl.LazyFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    batches = base.with_columns(pl.col("a").map_batches(udf).alias("c"))
    text = describe(batches, "lf")
    listing = rows(list_namespace({"lf": batches}).text)
    assert udf.count == 0
    assert text.splitlines()[:2] == [
        "lf: polars LazyFrame (lazy: nothing has been computed)",
        "Its columns are not known: polars would have to call Python functions of the plan to learn them (a "
        "`map_batches` or `map_elements` without `return_dtype`, say), which this tool never does. Giving each one "
        "a `return_dtype` makes the schema known without running anything."]
    assert "need a compute, which this tool never starts: `lf.collect_schema()`, " in text
    assert listing["lf"] == ["pl.LazyFrame", "?×?", "", "lazy", "schema unknown until its Python functions run"]


@pytest.mark.parametrize("build", [
    lambda base, f: base.with_columns(pl.col("a").map_elements(f).alias("c")),
    lambda base, f: base.with_columns(pl.col("a").map_elements(f).alias("c"), pl.col("a").map_batches(f).alias("d")),
    lambda base, f: base.filter(pl.col("a").map_batches(f) > 1),
    lambda base, f: base.group_by("b").agg(pl.col("a").map_batches(f)),
    lambda base, f: base.join(base.with_columns(pl.col("a").map_batches(f).alias("c")), on="a"),
    lambda base, f: pl.concat([base.with_columns(c=pl.col("a").map_batches(f)), base.with_columns(c=pl.lit(1))]),
    lambda base, f: base.pipe_with_schema(lambda lazy, schema: f(lazy)),
], ids=["map_elements", "two functions", "in a filter", "in an aggregation", "in a join", "in a concat",
        "pipe_with_schema"])
def test_no_python_function_of_a_lazy_plan_runs_to_describe_or_list_it(udf, build):
    lazy = build(pl.LazyFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]}), udf)
    text = describe(lazy, "lf")
    list_namespace({"lf": lazy, "inside": [lazy]})
    assert udf.count == 0
    assert "Its columns are not known" in text


def test_once_polars_knows_the_schema_it_is_shown_and_the_function_still_not_called_again(udf):
    lazy = pl.LazyFrame({"a": [1, 2, 3]}).with_columns(pl.col("a").map_batches(udf).alias("c"))
    describe(lazy, "lf")
    assert lazy.collect()["c"].to_list() == [1, 2, 3]  # the refusal left nothing behind in the plan
    assert lazy.collect_schema().names() == ["a", "c"]
    called = udf.count
    text = describe(lazy, "lf")
    assert udf.count == called
    assert text.startswith("lf: polars LazyFrame, 2 columns (lazy: nothing has been computed)")
    assert "| c | Int64 |" in text and 'col("a").python_udf()' in text


def test_a_function_with_a_return_dtype_leaves_the_schema_known(udf):
    lazy = pl.LazyFrame({"a": [1, 2]}).with_columns(pl.col("a").map_batches(udf, return_dtype=pl.Float64).alias("c"))
    text = describe(lazy, "lf")
    assert udf.count == 0
    assert "| c | Float64 |" in text and "Plan (unoptimised):" in text


def test_a_lazy_plan_that_does_not_resolve_says_why():
    text = describe(pl.LazyFrame({"a": [1]}).select(pl.col("nope")), "lf")
    assert text.startswith("lf: polars LazyFrame whose plan does not resolve (ColumnNotFoundError: ")
