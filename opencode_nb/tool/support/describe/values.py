"""One value described as an analyst would: a frame's columns with their nulls, ranges and top values, its
first rows; lazy and distributed frames from their metadata only."""

from __future__ import annotations

import contextlib
import functools
import inspect
import itertools
import sys
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from .common import (
    DESCRIBE_BUDGET_S,
    ESTIMATED,
    FAST_SCAN_S,
    FULL_COUNT_ROWS,
    HASH_S,
    HEAD_ROWS,
    MAX_COLUMNS,
    OBJECT_SCAN_S,
    PREFIX_ROWS,
    SAMPLE_ITEMS,
    SCALARS,
    SLOW_SCAN_S,
    TYPE_SAMPLE,
    Budget,
    _memory_mapped,
    _numpy_repr,
    _pandas_memory,
    clip,
    dims,
    dtype_tally,
    human_bytes,
    kind_of,
    number,
    pandas_frame_figures,
    plural,
    qualified,
    short_repr,
    table,
    tally,
    top_values,
)
from .lazy import dask_partitions, polars_plan, polars_schema, without_dask_compute
from .polars_pool import Counting, polars_pool_running


def describe(value: Any, label: str, *, budget_s: float = DESCRIBE_BUDGET_S) -> str:
    """A bounded, analyst-grade description of `value`, which the person's code calls `label`.

    Never raises: a value that cannot be described says why, with its type and a short repr.
    """
    kind = kind_of(value)
    budget = Budget(budget_s)
    try:
        if kind is not None:
            return DESCRIBERS[kind](value, label, budget)
        if isinstance(value, (str, bytes, bytearray)):
            return _describe_text(value, label)
        if isinstance(value, (dict, list, tuple, set, frozenset, deque)):
            return _describe_container(value, label)
        if isinstance(value, SCALARS):
            return f"{label}: {qualified(type(value))} = {short_repr(value, 300)}"
        return _describe_object(value, label)
    except Exception as exc:
        return (f"{label}: {qualified(type(value))}. It could not be described ({type(exc).__name__}: "
                f"{short_repr(str(exc), 200)}).\nrepr: {short_repr(value, 300)}")


def _describe_pandas_frame(df: Any, label: str, budget: Budget) -> str:
    rows, cols = df.shape
    memory = pandas_frame_figures(df)[1]
    shallow = "shallow, estimated from a sample of the columns" if memory.startswith(ESTIMATED) else "shallow"
    cells = []
    for i in range(min(cols, MAX_COLUMNS)):
        name = clip(str(df.columns[i]), 40)
        column = df.iloc[:, i]
        cells.append([name, str(column.dtype), *_pandas_column(column, name, budget)])
    lines = [f"{label}: pandas DataFrame, {plural(rows, 'row')} × {plural(cols, 'column')}, {memory} in memory "
             f"({shallow})",
             f"Index: {_pandas_index(df.index)}", "", table(["column", "dtype", "non-null", "nulls", "summary"], cells)]
    if cols > MAX_COLUMNS:
        lines.append(f"… and {cols - MAX_COLUMNS:,} more columns ({dtype_tally(df.dtypes.tolist()[MAX_COLUMNS:])}).")
    if rows:
        head = df.head(HEAD_ROWS).to_string(max_cols=12, max_colwidth=30)
        lines += ["", f"First {min(rows, HEAD_ROWS)} rows:", "```", head, "```"]
    return "\n".join(lines + budget.note("the figures of columns ", f'Ask for one column ({label}["name"]) to get '
                                                                  "its figures, with a fresh time budget."))


def _describe_pandas_series(s: Any, label: str, budget: Budget) -> str:
    kind = "Index" if kind_of(s) == "pandas.Index" else "Series"
    name = f" {short_repr(s.name, 40)}" if s.name is not None else ""
    memory = _pandas_memory(s.memory_usage(deep=False), [str(s.dtype)])
    lines = [f"{label}: pandas {type(s).__name__ if kind == 'Index' else 'Series'}{name}, {len(s):,} values, "
             f"dtype {s.dtype}, {memory} in memory (shallow)"]
    if kind == "Series":
        lines.append(f"Index: {_pandas_index(s.index)}")
        non_null, nulls, summary = _pandas_column(s, "the null count and summary", budget)
    else:
        lines.append(f"Range: {_pandas_index(s)}")
        non_null, nulls, summary = _pandas_column(s.to_series(index=None), "the null count and summary", budget)
    if summary:
        lines += [f"Non-null {non_null} · nulls {nulls}", f"Summary: {summary}"]
    if kind == "Series":
        lines += ["", f"First {min(len(s), HEAD_ROWS)} values:"]
        lines += [f"  {short_repr(i, 30)}: {short_repr(v, 70)}" for i, v in s.iloc[:HEAD_ROWS].items()]
    head = f"{label}.iloc[:1_000_000]" if kind == "Series" else f"{label}[:1_000_000]"
    return "\n".join(lines + budget.note("", f"Compute them on a slice ({head}) instead."))


def _pandas_column(col: Any, name: str, budget: Budget) -> tuple[str, str, str]:
    """(non-null, nulls, summary) of one column as table cells; empty when the budget cannot afford its scans."""
    import numpy as np
    import pandas as pd

    n, dtype = len(col), col.dtype
    api = pd.api.types
    try:
        if isinstance(dtype, np.dtype) and dtype.kind in "fiub":
            if not budget.affords(n * FAST_SCAN_S, name):
                return "", "", ""
            valid, summary = array_figures(col.to_numpy())
        elif isinstance(dtype, pd.CategoricalDtype):
            if not budget.affords(n * SLOW_SCAN_S, name):
                return "", "", ""
            valid = int(col.count())
            summary = top_values(col.value_counts(), f"{len(dtype.categories):,} categories", "")
        elif api.is_object_dtype(dtype) or api.is_string_dtype(dtype) or api.is_bool_dtype(dtype):
            counted = n if n <= FULL_COUNT_ROWS else PREFIX_ROWS
            objects = str(dtype) == "object"  # Arrow-backed strings count their nulls from a bitmap
            cost = n * (OBJECT_SCAN_S if objects else SLOW_SCAN_S) + counted * (HASH_S if objects else HASH_S / 4)
            if not budget.affords(cost, name):
                return "", "", ""
            valid = int(col.count())
            summary = _pandas_values(col.iloc[:counted], "" if counted == n else f" in the first {counted:,} rows")
        else:
            if not budget.affords(n * SLOW_SCAN_S, name):
                return "", "", ""
            valid = int(col.count())
            summary = f"min {number(col.min())} · max {number(col.max())}"
            if api.is_numeric_dtype(dtype):
                summary += f" · mean {number(col.mean())}"
    except Exception as exc:  # complex numbers, mixed objects that do not compare, ...
        return "?", "?", f"(not computed: {type(exc).__name__})"
    return f"{valid:,}", f"{n - valid:,}", summary if valid else "all null"


def _pandas_values(col: Any, where: str) -> str:
    try:
        counts = col.value_counts()
    except TypeError:  # unhashable values: lists, dicts
        return f"unhashable values{where}, e.g. {short_repr(col.dropna().iloc[:3].tolist(), 60)}"
    return top_values(counts, "", where)


def _pandas_index(index: Any) -> str:
    kind = type(index).__name__
    if kind == "RangeIndex":
        text = f"RangeIndex(start={index.start:,}, stop={index.stop:,}, step={index.step})"
    elif index.nlevels > 1:
        return f"{kind}, {index.nlevels} levels {list(index.names)}, {len(index):,} entries"
    else:
        span = f"{number(index[0])} … {number(index[-1])}" if len(index) else "empty"
        text = f"{kind}, dtype {index.dtype}, {span}"
        freq = getattr(index, "freqstr", None)
        text += f", freq {freq}" if freq else ""
    return text + (f", name {index.name!r}" if index.name is not None else "")


def _describe_numpy(a: Any, label: str, budget: Budget) -> str:
    shape = dims(a.shape) if a.ndim else "() (a 0-d array)"
    lines = [f"{label}: numpy {type(a).__name__}, shape {shape}, dtype {a.dtype}, {plural(a.size, 'element')}, "
             f"{human_bytes(a.nbytes)}"]
    if a.dtype.names:
        fields = [f"{n} ({a.dtype.fields[n][0]})" for n in a.dtype.names[:MAX_COLUMNS]]
        lines.append("Fields: " + ", ".join(fields))
    elif a.dtype.kind in "fiub" and a.size:
        if _memory_mapped(a):
            lines.append("Memory-mapped from a file: statistics would read all of it, so none were computed.")
        elif budget.affords(a.size * FAST_SCAN_S, "min, max, mean and NaN count"):
            valid, summary = array_figures(a)
            nan = f"NaN {a.size - valid:,} · " if a.dtype.kind == "f" else ""
            lines.append(f"Values: {nan}{summary}" + (" (over the non-NaN values)" if nan and valid < a.size else ""))
    elif a.dtype.kind == "O" and a.size:
        lines.append(f"Element types (first {TYPE_SAMPLE:,}): {tally(type(v).__name__ for v in a.flat[:TYPE_SAMPLE])}")
    lines += ["", "```", _numpy_repr(a, threshold=60, edgeitems=3, one_line=False), "```"]
    return "\n".join(lines + budget.note("", f"Compute them on a slice ({label}[:1_000_000]) instead."))


def array_figures(values: Any) -> tuple[int, str]:
    """(count of non-NaN values, 'min … · max … · mean …') of a numeric or boolean numpy array, in as few
    passes as numpy allows: NaN-aware reductions only when there are NaNs."""
    import numpy as np

    size = values.size
    if size == 0:
        return 0, "empty"
    if values.dtype.kind == "b":
        true = int(np.count_nonzero(values))
        return size, f"True {true:,} · False {size - true:,}"
    nans = int(np.count_nonzero(np.isnan(values))) if values.dtype.kind == "f" else 0
    if nans == size:
        return 0, "all NaN"
    low, high, mean = (np.nanmin(values), np.nanmax(values), np.nanmean(values)) if nans else \
        (values.min(), values.max(), values.mean())
    return size - nans, f"min {number(low)} · max {number(high)} · mean {number(mean)}"


def _describe_polars_frame(df: Any, label: str, budget: Budget) -> str:
    import polars as pl

    rows, cols = df.shape
    counting = Counting(polars_pool_running())
    cells = [[clip(name, 40), str(dtype), f"{df[name].null_count():,}",
              _polars_summary(df[name], name, budget, counting)]
             for name, dtype in itertools.islice(df.schema.items(), MAX_COLUMNS)]
    lines = [f"{label}: polars DataFrame, {plural(rows, 'row')} × {plural(cols, 'column')}, "
             f"{human_bytes(df.estimated_size())} (estimated)", "",
             table(["column", "dtype", "nulls", "summary"], cells)]
    if cols > MAX_COLUMNS:
        lines.append(f"… and {cols - MAX_COLUMNS:,} more columns.")
    with pl.Config(tbl_rows=HEAD_ROWS, tbl_cols=12, fmt_str_lengths=30, tbl_width_chars=140,
                   tbl_hide_dataframe_shape=True):
        head = str(df.head(HEAD_ROWS))
    lines += ["", f"First {min(rows, HEAD_ROWS)} rows:", "```", head, "```"] if rows else []
    lines += counting.note(f'{label}["name"].value_counts()')
    return "\n".join(lines + budget.note("the figures of columns ", f'Ask for one column ({label}["name"]) to get '
                                                                  "its figures, with a fresh time budget."))


def _describe_polars_series(s: Any, label: str, budget: Budget) -> str:
    counting = Counting(polars_pool_running())
    lines = [f"{label}: polars Series {s.name!r}, {len(s):,} values, dtype {s.dtype}, "
             f"{human_bytes(s.estimated_size())} (estimated)", f"Nulls: {s.null_count():,}"]
    summary = _polars_summary(s, "the summary", budget, counting)
    lines += [f"Summary: {summary}"] if summary else []
    lines += ["", f"First {min(len(s), HEAD_ROWS)} values: {short_repr(s.head(HEAD_ROWS).to_list(), 300)}"]
    lines += counting.note(f"{label}.value_counts()")
    return "\n".join(lines + budget.note("", f"Compute it on a slice ({label}.head(1_000_000)) instead."))


def _polars_summary(s: Any, name: str, budget: Budget, counting: Counting) -> str:
    """One column's figures, through calls measured to leave polars' thread pool alone (`polars_pool.py`); text
    values are counted by `counting`, since polars' own counting starts the pool."""
    import polars as pl

    n, dtype = len(s), s.dtype
    try:
        if dtype == pl.Boolean:
            true = int(s.sum())
            return f"True {true:,} · False {n - s.null_count() - true:,}"
        if dtype.is_numeric() and budget.affords(n * FAST_SCAN_S, name):
            return f"min {number(s.min())} · max {number(s.max())} · mean {number(s.mean())}"
        if dtype.is_temporal() and budget.affords(n * FAST_SCAN_S, name):
            return f"min {number(s.min())} · max {number(s.max())}"
        if dtype == pl.String or isinstance(dtype, (pl.Categorical, pl.Enum)):
            return counting.values(s, name, budget)
    except Exception as exc:
        return f"(not computed: {type(exc).__name__})"
    return ""


def _describe_lazy(lf: Any, label: str, budget: Budget) -> str:
    try:
        schema = polars_schema(lf)
    except Exception as exc:  # the plan names a column that is not there, say
        why = next(iter(str(exc).strip().splitlines()), "")
        return f"{label}: polars LazyFrame whose plan does not resolve ({type(exc).__name__}: {clip(why, 300)})"
    if schema is None:
        lines = [f"{label}: polars LazyFrame (lazy: nothing has been computed)",
                 "Its columns are not known: polars would have to call Python functions of the plan to learn them "
                 "(a `map_batches` or `map_elements` without `return_dtype`, say), which this tool never does. "
                 "Giving each one a `return_dtype` makes the schema known without running anything."]
    else:
        cells = [[clip(n, 40), str(t)] for n, t in itertools.islice(schema.items(), MAX_COLUMNS)]
        lines = [f"{label}: polars LazyFrame, {plural(len(schema), 'column')} (lazy: nothing has been computed)", "",
                 table(["column", "dtype"], cells)]
        if len(schema) > MAX_COLUMNS:
            lines.append(f"… and {len(schema) - MAX_COLUMNS:,} more columns.")
    plan = polars_plan(lf)
    if plan:
        lines += ["", "Plan (unoptimised):", "```", *plan[:15], *(["…"] if len(plan) > 15 else []), "```"]
    figures, first = ("Columns, rows", f"`{label}.collect_schema()`, ") if schema is None else ("Rows", "")
    lines += ["", f"{figures}, nulls, values and statistics need a compute, which this tool never starts: {first}"
              f"`{label}.select(pl.len()).collect()`, `{label}.null_count().collect()`, `{label}.head(5).collect()`, "
              f"`{label}.describe()`."]
    return "\n".join(lines)


@without_dask_compute
def _describe_dask(ddf: Any, label: str, budget: Budget) -> str:
    frame = kind_of(ddf) == "dask.DataFrame"
    npartitions, divisions = dask_partitions(ddf)
    if divisions is None:
        known = "not known without a compute (set_index, sort_values and repartition by size sample the data to " \
                "choose them)"
    elif divisions and divisions[0] is not None:
        known = f"known, {number(divisions[0])} … {number(divisions[-1])}"
    else:
        known = "unknown"
    partitions = f"{npartitions:,} partitions" if npartitions is not None else "partitions not known without a compute"
    kind = "DataFrame" if frame else "Index" if type(ddf).__name__ == "Index" else "Series"
    index = ""
    if kind != "Index":  # a Dask Index is a Series without an index; the others' comes from their meta
        named = f", name {ddf.index.name!r}" if ddf.index.name is not None else ""
        index = f"; index dtype {ddf.index.dtype}{named}"
    what = plural(len(ddf.columns), "column") if frame else f"dtype {ddf.dtype}"
    lines = [f"{label}: Dask {kind}"
             + (f" {short_repr(ddf.name, 40)}" if not frame and ddf.name is not None else "")
             + f", {what}, {partitions} (lazy: nothing has been computed)",
             f"Divisions: {known}{index}"]
    if frame:
        cells = [[clip(str(n), 40), str(t)] for n, t in itertools.islice(ddf.dtypes.items(), MAX_COLUMNS)]
        lines += ["", table(["column", "dtype"], cells)]
        if len(ddf.columns) > MAX_COLUMNS:
            lines.append(f"… and {len(ddf.columns) - MAX_COLUMNS:,} more columns.")
    lines += ["", "Rows, nulls, values and statistics need a compute, which this tool never starts: "
              f"`len({label})`, `{label}.isna().sum().compute()`, `{label}.head()` (computes the first partition), "
              f"`{label}.describe().compute()`."]
    return "\n".join(lines)


@without_dask_compute
def _describe_dask_array(a: Any, label: str, budget: Budget) -> str:
    nbytes = a.nbytes
    size = human_bytes(int(nbytes)) if nbytes == nbytes else "unknown"  # NaN when a dimension is unknown
    return "\n".join([
        f"{label}: Dask Array, shape {dims(a.shape)}, dtype {a.dtype}, {size} once computed "
        "(lazy: nothing has been computed)",
        f"Chunks: {dims(a.chunksize)} each, {a.npartitions:,} in all ({dims(a.numblocks)} blocks)",
        "", f"Values and statistics need a compute, which this tool never starts: `{label}[:5].compute()`, "
        f"`{label}.mean().compute()`."])


def _describe_spark(sdf: Any, label: str, budget: Budget) -> str:
    try:
        cells = [[f.name, f.dataType.simpleString(), "yes" if f.nullable else "no"] for f in sdf.schema.fields]
    except Exception:  # a frame without a readable schema object still has its dtypes
        cells = [[n, t, "?"] for n, t in sdf.dtypes]
    lines = [f"{label}: Spark DataFrame, {plural(len(cells), 'column')} (lazy: nothing has been computed)", "",
             table(["column", "type", "nullable"], cells[:MAX_COLUMNS])]
    if len(cells) > MAX_COLUMNS:
        lines.append(f"… and {len(cells) - MAX_COLUMNS:,} more columns.")
    lines += ["", f"Rows, values and statistics need a Spark job, which this tool never starts: `{label}.count()`, "
              f"`{label}.limit(5).toPandas()`, `{label}.summary()`."]
    return "\n".join(lines)


def _describe_array(a: Any, label: str, budget: Budget) -> str:
    return (f"{label}: {qualified(type(a))}, shape {dims(a.shape)}, dtype {a.dtype}\n"
            f"repr: {short_repr(a, 400)}\n\nStatistics are computed for numpy, pandas and polars data only (this "
            "array may live on a device); convert a slice of it to numpy for figures.")


DESCRIBERS: dict[str, Callable[[Any, str, Budget], str]] = {
    "pandas.DataFrame": _describe_pandas_frame, "pandas.Series": _describe_pandas_series,
    "pandas.Index": _describe_pandas_series, "numpy.ndarray": _describe_numpy,
    "polars.DataFrame": _describe_polars_frame, "polars.Series": _describe_polars_series,
    "polars.LazyFrame": _describe_lazy, "dask.DataFrame": _describe_dask, "dask.Series": _describe_dask,
    "dask.Array": _describe_dask_array, "spark.DataFrame": _describe_spark, "array": _describe_array,
}


def _describe_text(text: str | bytes | bytearray, label: str) -> str:
    unit = "characters" if isinstance(text, str) else "bytes"
    head = f"{label}: {type(text).__name__}, {len(text):,} {unit}"
    if isinstance(text, str) and "\n" in text:
        lines = text[:3000].splitlines()
        shown = lines[:40] + (["…"] if len(lines) > 40 or len(text) > 3000 else [])
        return "\n".join([head, "```", *shown, "```"])
    return f"{head}: {short_repr(text, 1000)}"


def _describe_container(value: Any, label: str) -> str:
    lines = [f"{label}: {type(value).__name__}, {plural(len(value), 'item')}, {human_bytes(sys.getsizeof(value))} "
             "(the container itself)"]
    if isinstance(value, dict):
        lines += [f"- {short_repr(k, 40)}: {short_repr(v, 100)}" for k, v in itertools.islice(value.items(),
                                                                                             SAMPLE_ITEMS)]
        values: Iterable[Any] = value.values()
    elif isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        lines += [f"- {f}: {short_repr(v, 100)}" for f, v in itertools.islice(zip(value._fields, value,
                                                                                  strict=False), SAMPLE_ITEMS)]
        values = value
    else:
        unordered = isinstance(value, (set, frozenset))
        lines += [f"- {'' if unordered else f'[{i}] '}{short_repr(v, 100)}"
                  for i, v in enumerate(itertools.islice(value, SAMPLE_ITEMS))]
        values = value
    if len(value) > SAMPLE_ITEMS:
        lines.append(f"… and {len(value) - SAMPLE_ITEMS:,} more")
    if len(value):
        sample = min(len(value), TYPE_SAMPLE)
        first = "" if sample == len(value) else f" (first {sample:,})"
        lines.append(f"Value types{first}: {tally(type(v).__name__ for v in itertools.islice(values, sample))}")
    return "\n".join(lines)


def _describe_object(value: Any, label: str) -> str:
    lines = [f"{label}: {qualified(type(value))}"]
    if callable(value) and (inspect.isroutine(value) or isinstance(value, type)):
        with contextlib.suppress(TypeError, ValueError):  # builtins without a signature
            lines.append(f"Signature: {getattr(value, '__name__', label)}{inspect.signature(value)}")
        doc = (inspect.getdoc(value) or "").strip().splitlines()
        lines += [f"Doc: {doc[0][:200]}"] if doc else []
    lines.append(f"repr: {short_repr(value, 300)}")
    own = getattr(value, "__dict__", None)
    if isinstance(own, dict):
        public = [(k, v) for k, v in own.items() if isinstance(k, str) and not k.startswith("_")]
        lines += [f"- {k} = {short_repr(v, 100)}" for k, v in public[:15]]
        lines += [f"… and {len(public) - 15} more attributes"] if len(public) > 15 else []
    kinds = _public_names(value, set(own) if isinstance(own, dict) else set())
    for what, found in kinds.items():
        if found:
            lines.append(f"{what}: {', '.join(found)}")
    return "\n".join(lines)


def _public_names(value: Any, skip: set[str]) -> dict[str, list[str]]:
    """Public names of `value` by what they are, looked up statically: no property is run to find out."""
    found: dict[str, list[str]] = {"Methods": [], "Properties": [], "Other attributes": []}
    for name in [n for n in dir(value) if not n.startswith("_") and n not in skip][:30]:
        try:
            attr = inspect.getattr_static(value, name)
        except AttributeError:
            found["Other attributes"].append(name)
            continue
        if isinstance(attr, (property, functools.cached_property)) or inspect.isdatadescriptor(attr):
            found["Properties"].append(name)
        elif callable(attr) or isinstance(attr, (classmethod, staticmethod)):
            found["Methods"].append(name)
        else:
            found["Other attributes"].append(name)
    return found


