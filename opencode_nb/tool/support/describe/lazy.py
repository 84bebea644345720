"""What a lazy frame knows without a compute, read under guards that refuse the compute itself.

Both libraries work some figures out on first use, and that work can run the person's graph or code:

- Dask: `divisions`, `npartitions` and `known_divisions` of a frame after `set_index`, `sort_values` or
  `repartition(partition_size=...)` sample every partition (quantiles, memory usage) through `dask.compute`,
  seconds of work on the kernel's loop thread.
- polars: `collect_schema()`, `.schema`, `.columns`, `explain()` and `str(lf)` all resolve the plan, and resolving
  `map_batches` or `map_elements` without a `return_dtype` calls the person's Python function to learn what it
  returns. Only `serialize()` reads the plan without resolving it, and it copies every in-memory frame the plan
  holds and pickles the functions.

Predicting which expressions are cheap would need a list of them, and each release changes it. So the reads
happen under a guard that refuses the costly step when it starts, and a refused figure is reported as needing a
compute:

- Dask computes through its configured scheduler; for the read, that scheduler is one that raises. Only the
  reading thread is refused: dask's configuration is global, and a compute another thread starts meanwhile
  goes to the scheduler it would have used. What still runs is no task: dask optimises the graph it was about
  to hand over (milliseconds), and reads a `from_pandas` frame's divisions off the pandas index in memory.
- polars calls Python back from native code in two cases: to build the dtype objects of a schema (its own
  `polars.datatypes`), and to run a function the plan holds. A trace function sees each callback before its first
  line runs and raises into any that is not polars' datatypes code, so the function's body never runs and the
  resolution fails.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, ParamSpec, TypeVar

T = TypeVar("T")
P = ParamSpec("P")


class NeedsCompute(Exception):
    """Raised where a guarded read would have started a compute or run the person's code."""


def dask_partitions(ddf: Any) -> tuple[int | None, tuple[Any, ...] | None]:
    """(npartitions, divisions) of a Dask frame or series, each None when working it out needs a compute.

    The partition count may be known when the divisions are not: `set_index("x", npartitions=4)` and
    `repartition(npartitions=3)` carry it as an argument.
    """
    with _no_dask_compute():
        divisions = _quietly(lambda: tuple(ddf.divisions))
        npartitions = len(divisions) - 1 if divisions is not None else _quietly(lambda: int(ddf.npartitions))
    return npartitions, divisions


def without_dask_compute(read: Callable[P, T]) -> Callable[P, T]:
    """`read`, run with dask's compute refused on this thread: a read that would start one raises
    `NeedsCompute`, so a Dask object is described from what it knows or not at all."""
    @functools.wraps(read)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> T:
        with _no_dask_compute():
            return read(*args, **kwargs)

    return guarded


@contextlib.contextmanager
def _no_dask_compute() -> Iterator[None]:
    import dask
    import dask.base
    import dask.threaded

    reader, configured = threading.get_ident(), dask.config.get("scheduler", None)

    def refuse(dsk: Any, keys: Any, **kwargs: Any) -> Any:
        if threading.get_ident() != reader:
            # Chosen only now: `get_scheduler()` imports distributed (half a second) to look for a client, and a
            # default client sets the configured scheduler anyway.
            usual = dask.base.get_scheduler(scheduler=configured) if configured is not None else dask.threaded.get
            return usual(dsk, keys, **kwargs)
        raise NeedsCompute("working this out needs a compute")

    with dask.config.set(scheduler=refuse):
        yield


def _quietly(read: Callable[[], T]) -> T | None:
    try:
        return read()
    except Exception:  # refused, or a figure dask cannot work out at all (nulls in a would-be index)
        return None


def polars_schema(lf: Any) -> dict[str, Any] | None:
    """The schema of a polars LazyFrame as {name: dtype}, or None when only running a Python function of the
    plan would tell (a `map_batches` or `map_elements` without `return_dtype`; a schema polars resolved
    earlier is cached, and read here for free).

    Raises:
        Exception: polars' own error when the plan cannot resolve (a column it names does not exist).
    """
    return _without_python(lf._ldf.collect_schema, _polars_datatypes())


def polars_plan(lf: Any) -> list[str] | None:
    """The unoptimised plan, as `explain(optimized=False)` prints it; None when printing it would run a Python
    function of the plan (printing resolves the schema first)."""
    try:
        text = _without_python(lf._ldf.describe_plan, _polars_datatypes())
    except Exception:
        return None
    return None if text is None else text.splitlines()


def _polars_datatypes() -> str:
    return os.path.dirname(sys.modules["polars.datatypes"].__file__ or "") + os.sep


def _without_python(native: Callable[[], T], allowed: str) -> T | None:
    """`native()`, with every Python function it calls back refused unless its code lies under `allowed`; None
    when one was refused.

    `native` must itself be native code: a Python function would be the first call refused. Calls made by an
    allowed function are not checked (they are polars' own). CPython unsets a trace function that raises, so
    a library that swallowed the refusal and called back again would go unwatched: polars does not (the first
    refused function fails the resolution), and the tests count the calls of two functions in one plan.
    """
    caller = inspect.currentframe()
    refused: list[str] = []

    def watch(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_back is caller and not frame.f_code.co_filename.startswith(allowed):
            refused.append(frame.f_code.co_name)
            raise NeedsCompute(f"{frame.f_code.co_name} would run to work out the schema")

    previous = sys.gettrace()
    sys.settrace(watch)
    try:
        result = native()
    except Exception:
        if refused:
            return None
        raise
    finally:
        sys.settrace(previous)
    return None if refused else result
