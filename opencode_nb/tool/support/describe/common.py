"""What the listing and the descriptions share: recognising a value's kind by name, the time budget of a
look, and the short text forms (reprs, sizes, tables)."""

from __future__ import annotations

import datetime
import decimal
import fractions
import functools
import inspect
import itertools
import math
import numbers
import reprlib
import sys
import time
import types
from collections import Counter, deque
from collections.abc import Callable, Iterable
from typing import Any

from .lazy import polars_schema, without_dask_compute

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
SIZE_SAMPLE = 100
"""Columns without a fixed item size (categoricals, Arrow strings, nullable numbers) measured one by one in a
frame; past this many, an even sample of them is measured and the rest estimated from it (shown `~`)."""

FAST_SCAN_S = 8e-9
"""Estimated seconds per cell for a numeric numpy column's null count, min, max and mean (twice the measured)."""
SLOW_SCAN_S = 2e-8
"""Per cell, pandas' own null count, min, max and mean (extension and datetime columns, categoricals)."""
OBJECT_SCAN_S = 1e-7
"""Per cell, the non-null count of a column of Python objects."""
HASH_S = 2e-7
"""Per cell, counting the distinct values of a column of Python objects."""
POLARS_HASH_S = 5e-8
"""Per cell, counting the distinct values of a polars text column with polars (which runs its thread pool)."""
POLARS_COUNT_S = 4e-7
"""Per cell, counting them in Python instead (`to_list` and a `Counter`, 3.2e-7 measured), which leaves polars'
thread pool alone."""

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
    return _tally_text(Counter(labels), width)


def dtype_tally(dtypes: list[Any], width: int = REPR_WIDTH) -> str:
    """`tally` of dtype objects; see `dtype_groups`."""
    return _tally_groups(dtype_groups(dtypes), width)


def dtype_groups(dtypes: list[Any]) -> list[tuple[Any, int]]:
    """(dtype, how many) in order of first appearance, grouping identical objects: naming a numpy dtype costs
    microseconds and hashing a categorical one hashes its categories, while a 20,000-column frame repeats a
    handful of objects. Equal dtypes built apart (two columns' categoricals) are merged by `_tally_groups`."""
    import numpy as np

    ids = np.fromiter(map(id, dtypes), dtype=np.uintp, count=len(dtypes))
    _, first, counts = np.unique(ids, return_index=True, return_counts=True)
    order = np.argsort(first)
    return list(zip([dtypes[i] for i in first[order].tolist()], counts[order].tolist(), strict=True))


def _tally_groups(groups: list[tuple[Any, int]], width: int = REPR_WIDTH) -> str:
    labels: Counter[str] = Counter()
    for dtype, n in groups:
        labels[str(dtype)] += n
    return _tally_text(labels, width)


def _tally_text(counts: Counter[str], width: int) -> str:
    text = ", ".join(f"{label}×{n}" for label, n in counts.most_common())
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


def top_values(counts: Any, distinct: str, where: str) -> str:
    """`counts` (value → count, most frequent first) as 'N distinct; top: a 40 · b 30'."""
    pairs = [(k, int(c)) for k, c in itertools.islice(counts.items(), TOP_VALUES) if c]
    distinct = distinct or f"{int((counts > 0).sum()):,} distinct"
    if not pairs:
        return f"no values{where}"
    if pairs[0][1] == 1:
        return f"{distinct}{where}, none repeated"
    return f"{distinct}{where}; top: " + " · ".join(f"{short_repr(k, 30)} {c:,}" for k, c in pairs)


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


ESTIMATED = "~"
"""What a memory figure starts with when it was estimated from a sample; listings look for it to say so."""


def _pandas_memory(nbytes: Any, dtypes: list[str], *, estimated: bool = False) -> str:
    return (ESTIMATED if estimated else "") + human_bytes(int(nbytes)) + ("+" if "object" in dtypes else "")


def pandas_frame_figures(df: Any) -> tuple[str, str]:
    """(dtypes tally, shallow memory) of a frame, at a cost that does not grow with its columns:
    `memory_usage(deep=False)` builds a Series a column (8 µs each, 160 ms at 20,000 columns), and naming each
    column's dtype costs about as much.

    A numpy-backed column (numbers, dates, objects) holds rows × item size bytes, so those are counted by dtype,
    exactly. Columns of other kinds are measured as `memory_usage` measures them, up to `SIZE_SAMPLE` of them;
    past that an even sample is measured and the figure starts with `~`.
    """
    import numpy as np

    rows, dtypes = len(df), df.dtypes.tolist()
    groups = dtype_groups(dtypes)
    sized = [(dtype, n) for dtype, n in groups if isinstance(dtype, np.dtype)]
    nbytes = int(df.index.memory_usage(deep=False)) + sum(n * rows * dtype.itemsize for dtype, n in sized)
    unsized = [id(dtype) for dtype, _ in groups if not isinstance(dtype, np.dtype)]
    estimated = False
    if unsized:
        ids = np.fromiter(map(id, dtypes), dtype=np.uintp, count=len(dtypes))
        positions = np.flatnonzero(np.isin(ids, np.array(unsized, dtype=np.uintp)))
        sample = positions[::math.ceil(len(positions) / SIZE_SAMPLE)]
        # One sub-frame: a Series a column through `iloc` costs three times as much.
        measured = int(df.iloc[:, sample].memory_usage(index=False, deep=False).sum())
        estimated = len(sample) < len(positions)
        nbytes += measured * len(positions) // len(sample)
    objects = any(dtype.kind == "O" for dtype, _ in sized)
    return _tally_groups(groups), _pandas_memory(nbytes, ["object"] if objects else [], estimated=estimated)


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


def _pandas_frame_row(df: Any) -> tuple[str, str, str, str]:
    return dims(df.shape), *pandas_frame_figures(df), names("columns", df.columns)


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
    schema = polars_schema(lf)
    if schema is None:
        return "?×?", "", "lazy", "schema unknown until its Python functions run"
    return f"?×{len(schema):,}", tally(map(str, schema.values())), "lazy", names("columns", schema)


@without_dask_compute
def _dask_frame_row(ddf: Any) -> tuple[str, str, str, str]:
    # Only what the frame's meta knows: even `npartitions` may have to work out divisions first (100 ms for a
    # million-row `from_pandas`), or list the files of a parquet dataset.
    return f"?×{len(ddf.columns):,}", tally(map(str, ddf.dtypes)), "lazy", names("columns", ddf.columns)


@without_dask_compute
def _dask_series_row(s: Any) -> tuple[str, str, str, str]:
    return "?", str(s.dtype), "lazy", ""


@without_dask_compute
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


