"""The person's variables as the model reads them: a table of the namespace, and one value in detail.

`list_namespace` is one row a variable (type, shape, dtypes, shallow memory, a short repr); `describe` looks
at one value the way an analyst would (a frame's columns with their nulls, ranges and top values, and its
first rows). Both are plain text of a few kilobytes at most.

A look must never cost the person a compute they did not ask for, so both are cheap by construction:

- Types are recognised by the module and name of the classes in their MRO, so importing this module imports
  no data library; a library is touched only through an object that already belongs to it.
- The table reads what an object already knows (shape, dtypes, buffer sizes). It never calls
  `memory_usage(deep=True)`, nor `sys.getsizeof` where a Python-level `__sizeof__` may walk the data (pandas'
  does), nor a full `repr`: a namespace holding a 1 GB frame lists in a few milliseconds. Nor does its cost
  grow with a frame's columns: a pandas frame's memory is counted by dtype, not column by column.
- A description's scans (null counts, min/max/mean, top values) share one wall-clock `Budget`. Each scan starts
  only if its estimated cost fits what is left, and whatever did not fit is named in a note, so the model knows
  which figures are missing and how to get them. Top values of very long text columns are counted over their
  first rows, and say so.
- Nor may a look start polars' thread pool: once its threads have run, the kernel can no longer be copied by a
  fork, and every later run of the python tool pays a second for a spawned worker. polars values are read only
  through calls measured to leave the pool alone, and text values are counted in Python over the first rows
  unless the pool runs anyway (`polars_pool.py` lists what was measured). One exception is left: the schema of a
  LazyFrame scanning a CSV file without `schema=` is inferred on the pool, and nothing short of resolving the
  plan tells such a frame apart.
- Lazy and distributed frames (polars LazyFrame, Dask, Spark) are described from their schema and metadata
  only; the description names the figures that would need a compute. Some of that metadata is itself worked out
  on first read, by running the graph or the person's functions, so it is read under guards that refuse the
  compute (`lazy.py`) and reported as unknown when they do.
"""

from __future__ import annotations

from .common import human_bytes, short_repr, visible
from .listing import list_namespace
from .values import describe

__all__ = ["describe", "human_bytes", "list_namespace", "short_repr", "visible"]
