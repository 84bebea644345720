"""The person's variables as the model reads them: a table of the namespace, and one value in detail.

`list_namespace` is one row a variable (type, shape, dtypes, shallow memory, a short repr); `describe` looks
at one value the way an analyst would (a frame's columns with their nulls, ranges and top values, and its
first rows). Both are plain text of a few kilobytes at most.

A look must never cost the person a compute they did not ask for, so both are cheap by construction:

- Types are recognised by the module and name of the classes in their MRO, so importing this module imports
  no data library; a library is touched only through an object that already belongs to it.
- The table reads what an object already knows (shape, dtypes, buffer sizes). It never calls
  `memory_usage(deep=True)`, nor `sys.getsizeof` where a Python-level `__sizeof__` may walk the data (pandas'
  does), nor a full `repr`: a namespace holding a 1 GB frame lists in a few milliseconds.
- A description's scans (null counts, min/max/mean, top values) share one wall-clock `Budget`. Each scan starts
  only if its estimated cost fits what is left, and whatever did not fit is named in a note, so the model knows
  which figures are missing and how to get them. Top values of very long text columns are counted over their
  first rows, and say so.
- Lazy and distributed frames (polars LazyFrame, Dask, Spark) are described from their schema and metadata
  only; the description names the figures that would need a compute.
"""

from __future__ import annotations

import contextlib
import datetime
import decimal
import fractions
import functools
import inspect
import itertools
import numbers
import reprlib
import sys
import time
import types
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

__all__ = ["DESCRIBE_BUDGET_S", "LIST_LIMIT", "Budget", "Listing", "clip", "describe", "human_bytes", "kind_of",
           "list_namespace", "qualified", "short_repr", "visible"]

LIST_LIMIT = 200
"""Rows of the namespace table; data-like values come first, so they are the last to be cut."""
REPR_WIDTH = 80
"""Characters of a value's one-line repr in the table."""
DESCRIBE_BUDGET_S = 1.0
"""Wall-clock time one description may spend on scans; a 1 GB numeric frame needs about half of it."""
MAX_COLUMNS = 50
"""Columns detailed in a description: a 2,000-column frame still reads in a few kilobytes."""
HEAD_ROWS = 5
SAMPLE_ITEMS = 10
TOP_VALUES = 5
FULL_COUNT_ROWS = 1_000_000
"""Text columns up to this long have their values counted in full; longer ones over their first rows."""
PREFIX_ROWS = 100_000
TYPE_SAMPLE = 1_000
"""Elements whose types are tallied in a container or an object array."""

FAST_SCAN_S = 8e-9
"""Estimated seconds per cell for a numeric numpy column's null count, min, max and mean (twice the measured)."""
SLOW_SCAN_S = 2e-8
"""Per cell, pandas' own null count, min, max and mean (extension and datetime columns, categoricals)."""
OBJECT_SCAN_S = 1e-7
"""Per cell, the non-null count of a column of Python objects."""
HASH_S = 2e-7
"""Per cell, counting the distinct values of a column of Python objects."""
POLARS_HASH_S = 5e-8
"""Per cell, counting the distinct values of a polars text column."""

HIDDEN_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
"""IPython's own entries in the namespace; `_`, `__`, `_i3`, `_oh` and the like go with every private name."""
CALLABLE_TYPES = frozenset({"ufunc", "vectorize", "cython_function_or_method", "fused_cython_function",
                            "_lru_cache_wrapper", "partialmethod", "ExitAutocall", "itemgetter", "attrgetter",
                            "methodcaller"})
"""Types whose instances are tools to call, not data; `inspect.isroutine` does not recognise them."""

KINDS = {
    ("pandas", "DataFrame"): "pandas.DataFrame", ("pandas", "Series"): "pandas.Series",
    ("pandas", "Index"): "pandas.Index", ("numpy", "ndarray"): "numpy.ndarray",
    ("polars", "DataFrame"): "polars.DataFrame", ("polars", "Series"): "polars.Series",
    ("polars", "LazyFrame"): "polars.LazyFrame", ("dask", "DataFrame"): "dask.DataFrame",
    ("dask", "Series"): "dask.Series", ("dask", "Array"): "dask.Array", ("pyspark", "DataFrame"): "spark.DataFrame",
}
"""(top-level package, class name) of a class in the value's MRO → its kind; subclasses are recognised too."""
LABELS = {"pandas.DataFrame": "DataFrame", "pandas.Series": "Series", "polars.DataFrame": "pl.DataFrame",
          "polars.Series": "pl.Series", "polars.LazyFrame": "pl.LazyFrame", "dask.DataFrame": "dd.DataFrame",
          "dask.Series": "dd.Series", "dask.Array": "da.Array", "spark.DataFrame": "spark.DataFrame"}
"""Short type names of the table; a polars or Dask frame must not read as a pandas one."""

SIZED = (str, bytes, bytearray, list, tuple, dict, set, frozenset, deque)
"""Types whose `len` and `sys.getsizeof` are known to be instant."""
SCALARS = (numbers.Number, type(None), decimal.Decimal, fractions.Fraction, datetime.date, datetime.time,
           datetime.timedelta)


def kind_of(value: Any) -> str | None:
    """The data kind of `value` (`pandas.DataFrame`, `numpy.ndarray`, `array` for other array libraries...), or
    None for everything else. Reads class names only, so it never imports a library."""
    for cls in type(value).__mro__[:-1]:
        key = ((getattr(cls, "__module__", None) or "").partition(".")[0], cls.__name__)
        if key == ("numpy", "generic"):  # numpy scalars have a shape and a dtype, yet are plain numbers
            return None
        if key in KINDS:
            return KINDS[key]
    cls = type(value)
    if hasattr(cls, "__array_namespace__") or all(hasattr(cls, a) for a in ("__array__", "shape", "dtype")):
        return "array"
    return None


def visible(name: str, value: Any) -> bool:
    """Whether the table lists `name`: not private, not IPython's, and not a tool to call or import.

    Modules, classes, functions, methods, partials and ufuncs are hidden. A callable *instance* of another
    class (a torch module, a fitted pipeline) is listed: it is state the person built, not a tool.
    """
    if name.startswith("_") or name in HIDDEN_NAMES:
        return False
    if isinstance(value, (types.ModuleType, type, types.GenericAlias, types.UnionType)):
        return False
    if inspect.isroutine(value) or isinstance(value, functools.partial):
        return False
    cls = type(value)
    return not (cls.__module__ in ("typing", "typing_extensions") or cls.__name__ in CALLABLE_TYPES)


class Listing(NamedTuple):
    text: str
    total: int
    """Variables listed, including any cut from the table."""


def list_namespace(namespace: Mapping[str, Any], *, limit: int = LIST_LIMIT) -> Listing:
    """The table of the person's variables: data (frames, series, arrays) first, then the rest, each by name.

    Data comes first because it is what the model is asked about, and the table is cut after `limit` rows.
    """
    entries = sorted(((kind_of(value) is None, name.lower(), name, value)
                      for name, value in list(namespace.items()) if isinstance(name, str) and visible(name, value)),
                     key=lambda entry: entry[:3])
    if not entries:
        return Listing("No variables are defined in the kernel yet (modules, functions and classes are not listed).",
                       0)
    rows = [[name, *_row(value)] for _, _, name, value in entries[:limit]]
    text = (f"{plural(len(entries), 'variable')} in the kernel, data first, then by name. Memory is shallow (+: object "
            "columns point to more); modules, functions, classes and _private names are not listed.\n\n"
            + table(["name", "type", "shape", "dtypes", "memory", "value"], rows))
    if len(entries) > limit:
        text += (f"\n… and {len(entries) - limit:,} more (the table stops at {limit} rows). "
                 "Call variables with a name to look at any of them.")
    return Listing(text, len(entries))


def _row(value: Any) -> tuple[str, str, str, str, str]:
    kind = kind_of(value)
    label = LABELS.get(kind or "", type(value).__name__)
    try:
        return (label, *ROWS.get(kind or "", _plain_row)(value))
    except Exception as exc:  # a half-built or broken object must not break the table
        return label, "?", "", "", f"(could not be read: {type(exc).__name__})"


def _pandas_frame_row(df: Any) -> tuple[str, str, str, str]:
    dtypes = [str(d) for d in df.dtypes]
    return (dims(df.shape), tally(dtypes), _pandas_memory(df.memory_usage(deep=False).sum(), dtypes),
            names("columns", df.columns))


def _pandas_series_row(s: Any) -> tuple[str, str, str, str]:
    head = s.iloc[:5] if hasattr(s, "iloc") else s[:5]
    return (f"{len(s):,}", str(s.dtype), _pandas_memory(s.memory_usage(deep=False), [str(s.dtype)]),
            short_repr(head.tolist()))


def _numpy_row(a: Any) -> tuple[str, str, str, str]:
    return dims(a.shape), str(a.dtype), human_bytes(a.nbytes), _numpy_repr(a, threshold=12, edgeitems=2)


def _polars_frame_row(df: Any) -> tuple[str, str, str, str]:
    return dims(df.shape), tally(map(str, df.schema.values())), human_bytes(df.estimated_size()), \
        names("columns", df.columns)


def _polars_series_row(s: Any) -> tuple[str, str, str, str]:
    return f"{len(s):,}", str(s.dtype), human_bytes(s.estimated_size()), short_repr(s.head(5).to_list())


def _lazy_row(lf: Any) -> tuple[str, str, str, str]:
    schema = lf.collect_schema()
    return f"?×{len(schema):,}", tally(map(str, schema.dtypes())), "lazy", names("columns", schema.names())


def _dask_frame_row(ddf: Any) -> tuple[str, str, str, str]:
    # Only what the frame's meta knows: even `npartitions` may have to work out divisions first (100 ms for a
    # million-row `from_pandas`), or list the files of a parquet dataset.
    return f"?×{len(ddf.columns):,}", tally(map(str, ddf.dtypes)), "lazy", names("columns", ddf.columns)


def _dask_series_row(s: Any) -> tuple[str, str, str, str]:
    return "?", str(s.dtype), "lazy", ""


def _dask_array_row(a: Any) -> tuple[str, str, str, str]:
    return dims(a.shape), str(a.dtype), "lazy", f"chunks {dims(a.chunksize)}"


def _spark_row(sdf: Any) -> tuple[str, str, str, str]:
    dtypes = sdf.dtypes
    return f"?×{len(dtypes):,}", tally(t for _, t in dtypes), "lazy", names("columns", [n for n, _ in dtypes])


def _array_row(a: Any) -> tuple[str, str, str, str]:
    nbytes = getattr(a, "nbytes", None)
    return dims(a.shape), str(a.dtype), human_bytes(nbytes) if isinstance(nbytes, int) else "", short_repr(a)


def _plain_row(value: Any) -> tuple[str, str, str, str]:
    return (f"{len(value):,}" if isinstance(value, SIZED) else ""), "", shallow_size(value), short_repr(value)


ROWS: dict[str, Callable[[Any], tuple[str, str, str, str]]] = {
    "pandas.DataFrame": _pandas_frame_row, "pandas.Series": _pandas_series_row, "pandas.Index": _pandas_series_row,
    "numpy.ndarray": _numpy_row, "polars.DataFrame": _polars_frame_row, "polars.Series": _polars_series_row,
    "polars.LazyFrame": _lazy_row, "dask.DataFrame": _dask_frame_row, "dask.Series": _dask_series_row,
    "dask.Array": _dask_array_row, "spark.DataFrame": _spark_row, "array": _array_row,
}


class Budget:
    """Time one description may spend on scans, and the scans it had to leave out."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = time.perf_counter() + seconds
        self.skipped: list[str] = []

    def affords(self, cost_s: float, what: str) -> bool:
        """Whether a scan estimated at `cost_s` fits what is left; if not, `what` is remembered for the note."""
        if time.perf_counter() + cost_s <= self.deadline:
            return True
        self.skipped.append(what)
        return False

    def note(self, what: str, hint: str) -> list[str]:
        """The closing note naming what was left out (`what` leads the list of names), and how to get it."""
        if not self.skipped:
            return []
        shown = ", ".join(self.skipped[:12]) + (f" and {len(self.skipped) - 12} more" if len(self.skipped) > 12 else "")
        return ["", f"Not computed, to keep this look under {self.seconds:g} s: {what}{shown}. {hint}".rstrip()]


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
    dtypes = [str(d) for d in df.dtypes]
    memory = _pandas_memory(df.memory_usage(deep=False).sum(), dtypes)
    cells = []
    for i in range(min(cols, MAX_COLUMNS)):
        name = clip(str(df.columns[i]), 40)
        cells.append([name, dtypes[i], *_pandas_column(df.iloc[:, i], name, budget)])
    lines = [f"{label}: pandas DataFrame, {plural(rows, 'row')} × {plural(cols, 'column')}, {memory} in memory "
             "(shallow)",
             f"Index: {_pandas_index(df.index)}", "", table(["column", "dtype", "non-null", "nulls", "summary"], cells)]
    if cols > MAX_COLUMNS:
        lines.append(f"… and {cols - MAX_COLUMNS:,} more columns ({tally(dtypes[MAX_COLUMNS:])}).")
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
            summary = _top(col.value_counts(), f"{len(dtype.categories):,} categories", "")
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
    return _top(counts, "", where)


def _top(counts: Any, distinct: str, where: str) -> str:
    """`counts` (value → count, most frequent first) as 'N distinct; top: a 40 · b 30'."""
    pairs = [(k, int(c)) for k, c in itertools.islice(counts.items(), TOP_VALUES) if c]
    distinct = distinct or f"{int((counts > 0).sum()):,} distinct"
    if not pairs:
        return f"no values{where}"
    if pairs[0][1] == 1:
        return f"{distinct}{where}, none repeated"
    return f"{distinct}{where}; top: " + " · ".join(f"{short_repr(k, 30)} {c:,}" for k, c in pairs)


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


def _pandas_memory(nbytes: Any, dtypes: list[str]) -> str:
    return human_bytes(int(nbytes)) + ("+" if "object" in dtypes else "")


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


def _numpy_repr(a: Any, *, threshold: int, edgeitems: int, one_line: bool = True) -> str:
    import numpy as np

    with np.printoptions(threshold=threshold, edgeitems=edgeitems, linewidth=100, precision=6):
        text = repr(a)
    if one_line:
        return clip(text)
    lines = text.splitlines()
    return "\n".join(lines[:25] + (["…"] if len(lines) > 25 else []))


def _memory_mapped(a: Any) -> bool:
    import mmap

    import numpy as np

    base = a
    while base is not None:
        if isinstance(base, (np.memmap, mmap.mmap)):
            return True
        base = getattr(base, "base", None)
    return False


def _describe_polars_frame(df: Any, label: str, budget: Budget) -> str:
    import polars as pl

    rows, cols = df.shape
    cells = [[clip(name, 40), str(dtype), f"{df[name].null_count():,}", _polars_summary(df[name], name, budget)]
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
    return "\n".join(lines + budget.note("the figures of columns ", f'Ask for one column ({label}["name"]) to get '
                                                                  "its figures, with a fresh time budget."))


def _describe_polars_series(s: Any, label: str, budget: Budget) -> str:
    lines = [f"{label}: polars Series {s.name!r}, {len(s):,} values, dtype {s.dtype}, "
             f"{human_bytes(s.estimated_size())} (estimated)", f"Nulls: {s.null_count():,}"]
    summary = _polars_summary(s, "the summary", budget)
    lines += [f"Summary: {summary}"] if summary else []
    lines += ["", f"First {min(len(s), HEAD_ROWS)} values: {short_repr(s.head(HEAD_ROWS).to_list(), 300)}"]
    return "\n".join(lines + budget.note("", f"Compute it on a slice ({label}.head(1_000_000)) instead."))


def _polars_summary(s: Any, name: str, budget: Budget) -> str:
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
            counted = n if n <= FULL_COUNT_ROWS else PREFIX_ROWS
            if not budget.affords(counted * POLARS_HASH_S, name):
                return ""
            counts = s.head(counted).alias("value").drop_nulls().value_counts(sort=True)
            where = "" if counted == n else f" in the first {counted:,} rows"
            return _top(dict(counts.head(TOP_VALUES).rows()), f"{counts.height:,} distinct", where)
    except Exception as exc:
        return f"(not computed: {type(exc).__name__})"
    return ""


def _describe_lazy(lf: Any, label: str, budget: Budget) -> str:
    schema = lf.collect_schema()
    cells = [[clip(n, 40), str(t)] for n, t in itertools.islice(schema.items(), MAX_COLUMNS)]
    lines = [f"{label}: polars LazyFrame, {plural(len(schema), 'column')} (lazy: nothing has been computed)", "",
             table(["column", "dtype"], cells)]
    if len(schema) > MAX_COLUMNS:
        lines.append(f"… and {len(schema) - MAX_COLUMNS:,} more columns.")
    plan = lf.explain(optimized=False).splitlines()
    lines += ["", "Plan (unoptimised):", "```", *plan[:15], *(["…"] if len(plan) > 15 else []), "```"]
    lines += ["", f"Rows, nulls, values and statistics need a compute, which this tool never starts: "
              f"`{label}.select(pl.len()).collect()`, `{label}.null_count().collect()`, `{label}.head(5).collect()`, "
              f"`{label}.describe()`."]
    return "\n".join(lines)


def _describe_dask(ddf: Any, label: str, budget: Budget) -> str:
    frame = kind_of(ddf) == "dask.DataFrame"
    divisions = ddf.divisions
    known = (f"known, {number(divisions[0])} … {number(divisions[-1])}" if ddf.known_divisions
             else "unknown")
    meta_index = ddf.index  # lazy: its dtype and name come from the frame's meta
    what = plural(len(ddf.columns), "column") if frame else f"dtype {ddf.dtype}"
    lines = [f"{label}: Dask {'DataFrame' if frame else 'Series'}"
             + (f" {short_repr(ddf.name, 40)}" if not frame and ddf.name is not None else "")
             + f", {what}, {ddf.npartitions:,} partitions (lazy: nothing has been computed)",
             f"Divisions: {known}; index dtype {meta_index.dtype}"
             + (f", name {meta_index.name!r}" if meta_index.name is not None else "")]
    if frame:
        cells = [[clip(str(n), 40), str(t)] for n, t in itertools.islice(ddf.dtypes.items(), MAX_COLUMNS)]
        lines += ["", table(["column", "dtype"], cells)]
        if len(ddf.columns) > MAX_COLUMNS:
            lines.append(f"… and {len(ddf.columns) - MAX_COLUMNS:,} more columns.")
    lines += ["", "Rows, nulls, values and statistics need a compute, which this tool never starts: "
              f"`len({label})`, `{label}.isna().sum().compute()`, `{label}.head()` (computes the first partition), "
              f"`{label}.describe().compute()`."]
    return "\n".join(lines)


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


class _ShortRepr(reprlib.Repr):
    """reprlib, made safe for any size: a frame or array inside a container shows as `<DataFrame 3×2>`, dicts
    and sets show their first items without sorting all of them (reprlib sorts), and subclasses of the builtin
    containers (defaultdict, Counter, named tuples), which reprlib hands to their full `repr`, are abbreviated
    the same way."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.maxstring = self.maxother = max(width, 20)
        self.maxlong = 40
        self.maxlist = self.maxtuple = self.maxset = self.maxfrozenset = self.maxdeque = 8
        self.maxdict = 6

    def repr1(self, x: Any, level: int) -> str:
        kind = kind_of(x)
        if kind is not None and level < self.maxlevel:  # the value itself keeps its own (bounded) repr
            label = LABELS.get(kind, type(x).__name__)
            try:
                return f"<{label} {ROWS[kind](x)[0]}>"
            except Exception:
                return f"<{label}>"
        cls = type(x)
        if isinstance(x, dict):
            pairs = ((self.repr1(k, level - 1), self.repr1(v, level - 1)) for k, v in x.items())
            return self._wrap(cls is dict, x, "{" + self._first(len(x), (f"{k}: {v}" for k, v in pairs), level,
                                                                self.maxdict) + "}")
        if isinstance(x, (set, frozenset)):
            if not x:
                return f"{cls.__name__}()"
            inner = "{" + self._first(len(x), (self.repr1(v, level - 1) for v in x), level, self.maxset) + "}"
            return inner if cls is set else f"{cls.__name__}({inner})"
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            pieces = (f"{f}={self.repr1(v, level - 1)}" for f, v in zip(x._fields, x, strict=False))
            return f"{cls.__name__}({self._first(len(x), pieces, level, self.maxtuple)})"
        if isinstance(x, (list, tuple)) and cls not in (list, tuple):
            return self._wrap(False, x, self.repr_list(list(itertools.islice(x, self.maxlist + 1)), level))
        return super().repr1(x, level)

    def _first(self, n: int, pieces: Iterable[str], level: int, most: int) -> str:
        if n and level <= 0:
            return self.fillvalue
        shown = list(itertools.islice(pieces, most))
        return ", ".join(shown + ([self.fillvalue] if n > most else []))

    @staticmethod
    def _wrap(plain: bool, x: Any, inner: str) -> str:
        return inner if plain else f"{type(x).__name__}({inner})"


def short_repr(value: Any, width: int = REPR_WIDTH) -> str:
    """One line of at most `width` characters; containers are abbreviated before they are formatted."""
    try:
        text = _ShortRepr(width).repr(value)
    except Exception as exc:
        text = f"<{type(value).__name__}: repr failed with {type(exc).__name__}>"
    return clip(text, width)


def clip(text: str, width: int = REPR_WIDTH) -> str:
    """`text` on one line of at most `width` characters."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def shallow_size(value: Any) -> str:
    """`sys.getsizeof`, unless the type's `__sizeof__` is Python code, which may walk the data (pandas' does)."""
    if inspect.isfunction(getattr(type(value), "__sizeof__", None)):
        return ""
    try:
        return human_bytes(sys.getsizeof(value))
    except Exception:
        return ""


def human_bytes(n: float) -> str:
    """`915.5 MB`: binary multiples, as pandas' `info()` prints them."""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def number(x: Any) -> str:
    """A figure for the model: thousands separators on integers, six significant digits on floats."""
    if type(x).__module__ == "numpy":
        x = str(x) if getattr(x, "dtype", None) is not None and x.dtype.kind in "mM" else x.item()
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return short_repr(x, 40) if not isinstance(x, (datetime.date, datetime.timedelta)) else str(x)
    return f"{x:,}" if isinstance(x, int) else f"{x:.6g}"


def dims(shape: Iterable[Any]) -> str:
    """`15,000,000×8`; `?` for a dimension a lazy array does not know yet."""
    return "×".join(f"{d:,}" if isinstance(d, numbers.Integral) else "?" for d in shape)


def tally(labels: Iterable[str], width: int = REPR_WIDTH) -> str:
    """`float64×3, object×1`: most common first, cut to `width`."""
    text = ", ".join(f"{label}×{n}" for label, n in Counter(labels).most_common())
    return text if len(text) <= width else text[: width - 1] + "…"


def names(prefix: str, values: Iterable[Any], width: int = REPR_WIDTH) -> str:
    """`columns: a, b, c, …` within `width`, reading no more names than fit."""
    text = f"{prefix}: "
    for i, value in enumerate(values):
        piece = ("" if i == 0 else ", ") + clip(str(value), 30)
        if len(text) + len(piece) > width - 3:
            return text + (", …" if i else "…")
        text += piece
    return text


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def qualified(cls: type) -> str:
    module = getattr(cls, "__module__", "") or ""
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A markdown table; pipes and line breaks inside cells are escaped so each row stays one line."""
    def cell(text: str) -> str:
        return " ".join(str(text).split()).replace("|", "\\|")

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
