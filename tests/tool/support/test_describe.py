import subprocess
import sys
import time
from collections import defaultdict, namedtuple

import dask.dataframe as dd
import numpy as np
import pandas as pd
import polars as pl
import pytest
from distributed import Client, get_task_stream

from opencode_nb.tool.support.describe import describe, list_namespace, short_repr, visible


def rows(listing_text: str) -> dict[str, list[str]]:
    """The listing's table as name -> [type, shape, dtypes, memory, value]."""
    found = {}
    for line in listing_text.splitlines():
        if line.startswith("| ") and not line.startswith("| name"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            found[cells[0]] = cells[1:]
    return found


def frame_with_nulls_and_categories() -> pd.DataFrame:
    return pd.DataFrame({
        "price": [1.5, np.nan, 3.0, 4.5, np.nan],
        "city": ["Paris", "Rome", "Paris", None, "Paris"],
        "grade": pd.Categorical(["a", "b", "a", "a", None]),
        "n": [1, 2, 3, 4, 5],
        "when": pd.to_datetime(["2024-01-01", None, "2024-03-01", "2024-04-01", "2024-05-01"]),
    })


class Thing:
    """An object of the person's own making, with a property that must not run when it is described."""

    def __init__(self) -> None:
        self.rate = 0.25
        self.label = "north"
        self.reads = 0

    @property
    def expensive(self) -> int:
        self.reads += 1
        raise AssertionError("a property ran")

    def fit(self) -> None: ...


def test_importing_the_tool_imports_no_data_library():
    code = ("import sys, opencode_nb.tool.variables; "
            "print(sorted(m for m in ('pandas', 'polars', 'dask', 'numpy', 'pyspark') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_listing_leaves_out_modules_functions_classes_private_and_ipython_names():
    import functools
    import os

    namespace = {"os": os, "np": np, "mean": lambda xs: sum(xs), "partial_sum": functools.partial(sum),
                 "Thing": Thing, "sqrt": np.sqrt, "length": len, "ListOfInt": list[int], "_scratch": 1,
                 "In": [""], "Out": {}, "_": 3, "__": 2, "___": 1, "_i1": "x = 1", "_oh": {}, "_ih": [], "_dh": [],
                 "exit": object(), "quit": object(), "get_ipython": lambda: None, "x": 1}
    assert list(rows(list_namespace(namespace).text)) == ["x"]


def test_a_callable_instance_is_state_the_person_built_and_is_listed():
    class Model:
        def __call__(self, x: float) -> float:
            return 2 * x

    assert visible("model", Model())
    assert not visible("Model", Model)


def test_the_listing_shows_type_shape_dtypes_shallow_memory_and_a_short_value():
    df = frame_with_nulls_and_categories()
    df["tag"] = pd.Series(["x", "y", "z", "x", "y"], dtype=object)
    table = rows(list_namespace({"df": df, "arr": np.zeros((3, 4)), "s": df["price"], "d": {"a": 1}, "n": 7}).text)
    kind, shape, dtypes, memory, value = table["df"]
    assert (kind, shape) == ("DataFrame", "5×6")
    assert dtypes.startswith("float64×1, str×1, category×1, int64×1, datetime64[")
    assert memory.endswith("+") and value == "columns: price, city, grade, n, when, tag"
    assert table["arr"][:4] == ["ndarray", "3×4", "float64", "96 B"]
    assert table["s"] == ["Series", "5", "float64", "172 B", "[1.5, nan, 3.0, 4.5, nan]"]
    assert table["d"][:2] == ["dict", "1"] and table["d"][4] == "{'a': 1}"
    assert table["n"][0] == "int" and table["n"][4] == "7"


def test_data_is_listed_first_then_everything_by_name():
    namespace = {"zeta": 1, "alpha": "a", "frame": pd.DataFrame({"a": [1]}), "Beta": [1], "arr": np.ones(2)}
    assert list(rows(list_namespace(namespace).text)) == ["arr", "frame", "alpha", "Beta", "zeta"]


def test_the_listing_stops_at_200_rows_and_says_how_many_more():
    listing = list_namespace({f"v{i:03}": i for i in range(250)})
    assert listing.total == 250 and len(rows(listing.text)) == 200
    assert "… and 50 more (the table stops at 200 rows)" in listing.text


def test_an_empty_namespace_says_so():
    assert list_namespace({"_": 1, "In": []}).text.startswith("No variables are defined")


def test_the_listing_never_runs_a_python_level_sizeof_and_survives_a_broken_object():
    class Deep:
        def __sizeof__(self) -> int:
            raise AssertionError("walked the data")

    class Broken:
        """Looks like an array, but reading its shape fails."""
        __array__ = dtype = None

        @property
        def shape(self):
            raise RuntimeError("half built")

    table = rows(list_namespace({"deep": Deep(), "broken": Broken()}).text)
    assert table["deep"][3] == ""
    assert table["broken"][4] == "(could not be read: RuntimeError)"


def test_a_pandas_frame_shows_its_columns_nulls_ranges_top_values_and_first_rows():
    text = describe(frame_with_nulls_and_categories(), "df")
    headline, index = text.splitlines()[:2]
    assert headline.startswith("df: pandas DataFrame, 5 rows × 5 columns, ")
    assert headline.endswith(" B in memory (shallow)")
    assert index == "Index: RangeIndex(start=0, stop=5, step=1)"
    assert "| price | float64 | 3 | 2 | min 1.5 · max 4.5 · mean 3 |" in text
    assert "| city | str | 4 | 1 | 2 distinct; top: 'Paris' 3 · 'Rome' 1 |" in text
    assert "| grade | category | 4 | 1 | 2 categories; top: 'a' 3 · 'b' 1 |" in text
    assert "| n | int64 | 5 | 0 | min 1 · max 5 · mean 3 |" in text
    assert "| when | datetime64[us] | 4 | 1 | min 2024-01-01 00:00:00 · max 2024-05-01 00:00:00 |" in text
    assert "First 5 rows:\n```\n   price   city grade  n       when\n0    1.5  Paris     a  1 2024-01-01" in text


def test_a_column_of_unique_values_says_none_repeat_instead_of_a_top_list():
    text = describe(pd.DataFrame({"id": ["a", "b", "c"]}), "df")
    assert "| id | str | 3 | 0 | 3 distinct, none repeated |" in text


def test_a_long_text_column_is_counted_over_its_first_rows_and_says_so():
    df = pd.DataFrame({"city": pd.Series(["Paris", "Rome"] * 600_000, dtype=object)})
    assert "2 distinct in the first 100,000 rows; top: 'Paris' 50,000 · 'Rome' 50,000" in describe(df, "df")


def test_figures_the_time_budget_cannot_afford_are_named_with_how_to_get_them():
    text = describe(frame_with_nulls_and_categories(), "df", budget_s=0)
    assert "| price | float64 |  |  |  |" in text
    assert ("Not computed, to keep this look under 0 s: the figures of columns price, city, grade, n, when. "
            'Ask for one column (df["name"]) to get its figures, with a fresh time budget.') in text
    assert "First 5 rows:" in text


def test_a_wide_frame_details_fifty_columns_and_counts_the_rest():
    text = describe(pd.DataFrame(np.zeros((2, 80)), columns=[f"c{i}" for i in range(80)]), "wide")
    assert "| c49 |" in text and "| c50 |" not in text
    assert "… and 30 more columns (float64×30)." in text
    assert len(text) < 8_000


def test_a_pandas_series_shows_its_index_nulls_summary_and_first_values():
    s = pd.Series([3.0, None, 1.0], index=pd.Index(["x", "y", "z"], name="key"), name="score")
    assert describe(s, "s") == "\n".join([
        f"s: pandas Series 'score', 3 values, dtype float64, {s.memory_usage(deep=False)} B in memory (shallow)",
        "Index: Index, dtype str, 'x' … 'z', name 'key'",
        "Non-null 2 · nulls 1",
        "Summary: min 1 · max 3 · mean 2",
        "",
        "First 3 values:",
        "  'x': 3.0",
        "  'y': nan",
        "  'z': 1.0",
    ])


def test_a_numpy_array_shows_shape_dtype_and_nan_aware_statistics():
    text = describe(np.array([[1.0, np.nan], [3.0, 5.0]]), "arr")
    assert text.splitlines()[:2] == ["arr: numpy ndarray, shape 2×2, dtype float64, 4 elements, 32 B",
                                     "Values: NaN 1 · min 1 · max 5 · mean 3 (over the non-NaN values)"]
    assert "array([[ 1., nan]," in text
    assert "Values: min 0 · max 9 · mean 4.5" in describe(np.arange(10), "ints")
    assert "Values: True 2 · False 1" in describe(np.array([True, False, True]), "flags")


def test_a_numpy_array_too_big_for_the_budget_or_memory_mapped_gets_no_statistics(tmp_path):
    assert "Not computed, to keep this look under 0 s: min, max, mean and NaN count." in \
        describe(np.ones(10), "arr", budget_s=0)
    mapped = np.memmap(tmp_path / "a.bin", dtype="float32", mode="w+", shape=(1000,))
    assert "Memory-mapped from a file: statistics would read all of it" in describe(mapped, "mapped")


def test_a_polars_frame_shows_its_schema_null_counts_summary_head_and_estimated_size():
    df = pl.DataFrame({"a": [1, 2, None, 4], "b": ["x", "y", "x", None]})
    text = describe(df, "df")
    assert text.startswith("df: polars DataFrame, 4 rows × 2 columns, ")
    assert "(estimated)" in text.splitlines()[0]
    assert "| a | Int64 | 1 | min 1 · max 4 · mean 2.33333 |" in text
    assert "| b | String | 1 | 2 distinct; top: 'x' 2 · 'y' 1 |" in text
    assert "First 4 rows:" in text and "│ null ┆ x    │" in text


def test_a_polars_series_shows_nulls_summary_and_first_values():
    text = describe(pl.Series("v", [2.0, None, 4.0]), "v")
    assert "Nulls: 1" in text and "Summary: min 2 · max 4 · mean 3" in text and "[2.0, None, 4.0]" in text


def test_a_polars_lazyframe_is_described_from_its_schema_and_never_collected():
    calls = []

    def explode(frame: pl.DataFrame) -> pl.DataFrame:
        calls.append(frame)
        raise AssertionError("the plan was executed")

    lazy = pl.LazyFrame({"a": [1, 2], "b": ["x", "y"]}).map_batches(explode)
    text = describe(lazy, "lf")
    listing = list_namespace({"lf": lazy}).text
    assert calls == []
    assert text.startswith("lf: polars LazyFrame, 2 columns (lazy: nothing has been computed)")
    assert "| a | Int64 |" in text and "| b | String |" in text
    assert "need a compute, which this tool never starts: `lf.select(pl.len()).collect()`" in text
    assert rows(listing)["lf"] == ["pl.LazyFrame", "?×2", "Int64×1, String×1", "lazy", "columns: a, b"]


def test_describing_a_lazy_scan_of_ten_billion_rows_is_instant():
    side = pl.LazyFrame({"a": range(100_000)})
    huge = side.join(side.rename({"a": "b"}), how="cross").with_columns((pl.col("a") * pl.col("b")).alias("ab"))
    start = time.perf_counter()
    text = describe(huge, "huge")
    assert time.perf_counter() - start < 0.5
    assert "3 columns" in text


@pytest.fixture(scope="module")
def dask_client():
    with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client:
        yield client


def test_a_dask_frame_is_described_from_its_metadata_without_computing_a_task(dask_client):
    calls = []

    def partition(i: int) -> pd.DataFrame:
        calls.append(i)
        raise AssertionError("a partition was computed")

    meta = pd.DataFrame({"x": pd.Series(dtype="float64"), "y": pd.Series(dtype="int64")})
    ddf = dd.from_map(partition, range(4), meta=meta, enforce_metadata=False)
    with get_task_stream(dask_client) as stream:
        text = describe(ddf, "ddf")
        series = describe(ddf["x"], 'ddf["x"]')
        listing = list_namespace({"ddf": ddf}).text
    assert calls == [] and stream.data == []
    assert text.splitlines()[:2] == ["ddf: Dask DataFrame, 2 columns, 4 partitions (lazy: nothing has been computed)",
                                     "Divisions: unknown; index dtype int64"]
    assert "| x | float64 |" in text and "`len(ddf)`" in text and "`ddf.head()` (computes the first partition)" in text
    assert series.startswith("ddf[\"x\"]: Dask Series 'x', dtype float64, 4 partitions")
    assert rows(listing)["ddf"] == ["dd.DataFrame", "?×2", "float64×1, int64×1", "lazy", "columns: x, y"]


def test_a_spark_frame_is_described_from_its_dtypes_without_a_job():
    class DataFrame:
        """Stands for pyspark's: recognised by module and class name, so pyspark need not be installed."""
        __module__ = "pyspark.sql.dataframe"
        dtypes = (("id", "bigint"), ("name", "string"))
        columns = ("id", "name")

        def count(self) -> int:
            raise AssertionError("a Spark job ran")

    text = describe(DataFrame(), "sdf")
    assert text.startswith("sdf: Spark DataFrame, 2 columns (lazy: nothing has been computed)")
    assert "| id | bigint | ? |" in text and "`sdf.count()`" in text
    assert rows(list_namespace({"sdf": DataFrame()}).text)["sdf"][:4] == ["spark.DataFrame", "?×2",
                                                                          "bigint×1, string×1", "lazy"]


def test_a_dict_or_list_shows_its_length_first_items_and_value_types():
    d = {f"k{i}": i for i in range(12)}
    text = describe(d, "d")
    assert text.splitlines()[:3] == [f"d: dict, 12 items, {sys.getsizeof(d)} B (the container itself)", "- 'k0': 0",
                                     "- 'k1': 1"]
    assert "… and 2 more" in text and "Value types: int×12" in text
    listed = describe(list(range(5000)), "xs")
    assert "- [9] 9" in listed and "- [10]" not in listed and "Value types (first 1,000): int×1000" in listed
    assert "- x: 1" in describe(namedtuple("Point", "x y")(1, 2), "p")


def test_a_multiline_string_is_shown_as_text():
    assert describe("select *\nfrom t", "query") == "query: str, 15 characters\n```\nselect *\nfrom t\n```"


def test_any_other_object_shows_its_type_repr_attributes_and_public_names_without_running_properties():
    thing = Thing()
    text = describe(thing, "thing")
    assert text.startswith(f"thing: {Thing.__module__}.Thing\nrepr: <")
    assert "- rate = 0.25\n- label = 'north'" in text
    assert "Methods: fit" in text and "Properties: expensive" in text
    assert thing.reads == 0


def test_a_value_that_cannot_be_described_says_why():
    class DataFrame:
        __module__ = "pandas.core.frame"

    text = describe(DataFrame(), "odd")
    assert text.startswith("odd: pandas.core.frame.") and "could not be described (AttributeError" in text


def test_frames_inside_containers_are_abbreviated():
    assert short_repr({"train": pd.DataFrame({"a": range(3)}), "x": np.zeros(2)}) == \
        "{'train': <DataFrame 3×1>, 'x': <ndarray 2>}"
    assert short_repr("x" * 200, 20) == "'xxxxxxx...xxxxxxxx'"


def test_short_reprs_of_huge_containers_read_only_their_first_items():
    class Loud:
        def __repr__(self) -> str:
            raise AssertionError("an item past the first ones was formatted")

    big = defaultdict(list, {f"k{i}": [i] for i in range(8)})
    big["z"] = Loud()
    assert short_repr(big, 200) == ("defaultdict({'k0': [0], 'k1': [1], 'k2': [2], 'k3': [3], 'k4': [4], 'k5': [5], "
                                    "...})")
    assert short_repr({3, 1, 2}) == "{1, 2, 3}"
    assert short_repr(namedtuple("Point", "x y")(1, [Loud] * 100)).startswith("Point(x=1, y=[<class")
    assert describe(big, "big").startswith("big: defaultdict, 9 items")
