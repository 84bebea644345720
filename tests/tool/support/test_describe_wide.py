"""A wide pandas frame lists at a cost that does not grow with its columns, and its memory figure stays right:
exact for numpy-backed columns, and for a few columns of other kinds; estimated, and said so, past that."""

import numpy as np
import pandas as pd

from opencode_nb.tool.support.describe import describe, human_bytes, list_namespace

from .test_describe import rows


def shallow(df: pd.DataFrame) -> str:
    return human_bytes(int(df.memory_usage(deep=False).sum()))


def test_a_frame_of_twenty_thousand_numeric_columns_lists_its_exact_shallow_memory():
    df = pd.DataFrame(np.zeros((3, 20_000)), columns=[f"c{i}" for i in range(20_000)])
    df["n"], df["flag"], df["when"] = 1, True, pd.Timestamp("2024-01-01")
    _, shape, dtypes, memory, _ = rows(list_namespace({"df": df}).text)["df"]
    assert (shape, memory) == ("3×20,003", shallow(df))
    assert dtypes.startswith("float64×20000, int64×1, bool×1, datetime64[")


def test_object_columns_are_counted_exactly_and_marked_as_pointing_to_more():
    df = pd.DataFrame({"x": np.arange(1_000.0), "tag": pd.Series(["a"] * 1_000, dtype=object)})
    assert rows(list_namespace({"df": df}).text)["df"][3] == shallow(df) + "+"


def test_up_to_a_hundred_columns_of_other_kinds_are_measured_one_by_one():
    df = pd.DataFrame({f"k{i}": pd.Categorical(["a", "b", "c"] * 100) for i in range(60)})
    df = df.assign(**{f"n{i}": pd.array(range(300), dtype="Int64") for i in range(40)}, x=np.arange(300.0))
    listing = list_namespace({"df": df}).text
    assert rows(listing)["df"][2:4] == ["category×60, Int64×40, float64×1", shallow(df)]
    assert "estimated" not in listing
    assert "(shallow)" in describe(df, "df").splitlines()[0]


def test_past_a_hundred_such_columns_the_figure_is_estimated_from_a_sample_and_says_so():
    df = pd.DataFrame({f"k{i}": pd.Categorical([f"v{j}" for j in range(100)]) for i in range(200)})
    listing = list_namespace({"df": df}).text
    memory = rows(listing)["df"][3]
    assert memory == "~" + shallow(df)  # alike columns: the sample's average is every column's size
    assert "~: estimated from a sample of its columns" in listing
    assert describe(df, "df").splitlines()[0].endswith(
        f"{memory} in memory (shallow, estimated from a sample of the columns)")
