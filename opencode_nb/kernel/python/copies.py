"""The copies a spawned worker gets of the variables the code names: written by the kernel, read by the worker.

What it is sent: only the variables the code names (from its syntax, see `gates.names_used`).

- Modules go as their names and are imported again (`pd`, `np`), as do functions and classes that live
  in a module; functions defined in the notebook go as their source, with what that source names.
- Frames go as Arrow IPC files in /dev/shm when there is room (pandas through pyarrow, polars natively):
  at 1 GB, 3.75 s against 5.17 s pickled. Everything else is pickled (protocol 5).
- All of it within `max_bytes`: other values first, whole or not at all; frames then share what is left,
  and a frame too big for its share is sent as a random sample of its rows in their original order,
  which the notes say (with the factor that scales counts and sums back).
- What cannot be copied (a generator, a lock) is left out and the notes say why. Objects holding
  connections are refused before anything starts (`worker_refusal`).

The copy is taken on the kernel's loop thread: a consistent snapshot, which the person's next cell cannot
change halfway; the kernel pauses for it (about a second per 500 MB).
"""

from __future__ import annotations

import importlib
import inspect
import io
import os
import pickle
import sys
import textwrap
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .gates import names_used
from .live import HIDDEN

SAMPLE_SEED = 0
SOURCE_DEPTH = 3
"""How many levels of notebook functions calling notebook functions are sent as source."""


class _TooBig(Exception):
    pass


class _Capped:
    """A file that refuses to grow past `limit` bytes, so pickling a huge object stops early."""

    def __init__(self, file: io.BufferedWriter, limit: int) -> None:
        self.file = file
        self.limit = limit
        self.written = 0

    def write(self, data: Any) -> int:
        self.written += memoryview(data).nbytes
        if self.written > self.limit:
            raise _TooBig
        return self.file.write(data)


def _frame_type(value: Any) -> str | None:
    """"pandas"/"pandas-series"/"polars"/"polars-series" for the frames sent as Arrow; None otherwise."""
    for library in ("pandas", "polars"):
        module = sys.modules.get(library)
        if module is None:
            continue
        if isinstance(value, module.DataFrame):
            return library
        if isinstance(value, module.Series):
            return library + "-series"
    return None


def _frame_bytes(value: Any, kind: str) -> int:
    """A frame's size in memory, cheaply: with text or object columns, from its first 1,000 rows (measuring
    every string of a 5M-row column takes 0.4 s)."""
    if kind.startswith("polars"):
        return int(value.estimated_size())
    frame = value.to_frame() if kind == "pandas-series" else value
    if len(frame) <= 1000 or all(dtype.kind in "biufcmM" for dtype in frame.dtypes):
        return int(frame.memory_usage(index=True, deep=len(frame) <= 1000).sum())
    return int(frame.iloc[:1000].memory_usage(index=True, deep=True).sum() * len(frame) / 1000)


def _notebook_source(value: Any) -> str | None:
    """A function's or class's source when it was defined in the notebook (IPython keeps cells' lines)."""
    if getattr(value, "__module__", None) != "__main__":
        return None
    try:
        return textwrap.dedent(inspect.getsource(value))
    except (OSError, TypeError):
        return None


def pack(code: str, namespace: Mapping[str, Any], directory: Path, max_bytes: int) -> tuple[dict[str, Any], list[str]]:
    """Write copies of the variables the code names into `directory`; the worker's job, and notes for the run."""
    found = _gather(code, namespace)
    entries, notes = found.entries, found.notes
    budget = _write_pickles(found.others, directory, max_bytes, entries, notes)
    _write_frames(found.frames, directory, budget, max_bytes, entries, notes)
    job = {"code": code, "entries": entries, "sources": found.sources, "sys_path": sys.path, "cwd": os.getcwd()}
    return job, notes


@dataclass
class _Found:
    """The variables the code names, sorted by how each travels to the worker."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    """Modules (imported again there), then each copy as it is written."""
    sources: list[dict[str, Any]] = field(default_factory=list)
    """Functions and classes defined in the notebook: their source is run again there."""
    notes: list[str] = field(default_factory=list)
    frames: list[tuple[str, Any, str, int]] = field(default_factory=list)
    """Data frames with their kind and size: they share what is left of the budget, sampled if need be."""
    others: list[tuple[str, Any]] = field(default_factory=list)
    """Everything else, pickled first, each taking what it needs of the budget."""


def _gather(code: str, namespace: Mapping[str, Any]) -> _Found:
    """Follow the names the code uses, and those the notebook's own functions and classes use in turn."""
    found = _Found()
    seen: set[str] = set()
    wanted = [(name, 0) for name in sorted(names_used(code))]
    while wanted:
        name, depth = wanted.pop(0)
        if name in seen or name not in namespace or name in HIDDEN or name.startswith("__"):
            continue
        seen.add(name)
        value = namespace[name]
        if isinstance(value, types.ModuleType):
            found.entries.append({"name": name, "kind": "module", "module": value.__name__})
        elif isinstance(value, types.FunctionType | type) and value.__module__ == "__main__":
            source = _notebook_source(value)
            if source is None or depth >= SOURCE_DEPTH:
                found.notes.append(f"Not sent to the worker: `{name}`, defined in the notebook, whose source could "
                                   "not be found; define it again in the code.")
                continue
            found.sources.append({"name": name, "defines": value.__name__, "source": source})
            wanted.extend((n, depth + 1) for n in sorted(names_used(source)))
        elif (kind := _frame_type(value)) is not None:
            found.frames.append((name, value, kind, _frame_bytes(value, kind)))
        else:
            found.others.append((name, value))
            if type(value).__module__ == "__main__":  # an instance of a notebook class: send the class too
                wanted.append((type(value).__name__, depth + 1))
    return found


def _write_pickles(others: list[tuple[str, Any]], directory: Path, max_bytes: int, entries: list[dict[str, Any]],
                   notes: list[str]) -> int:
    """Pickle each value while the budget lasts; returns what is left of it."""
    budget = max_bytes
    for name, value in others:
        path = directory / f"{len(entries)}.pickle"
        try:
            with open(path, "wb") as file:
                capped = _Capped(file, budget)
                pickle.dump(value, capped, protocol=5)  # type: ignore[arg-type]
        except _TooBig:
            path.unlink(missing_ok=True)
            notes.append(f"Not sent to the worker: `{name}` ({type(value).__name__}), bigger than the "
                         f"{_mb(budget)} left of the worker's {_mb(max_bytes)}.")
            continue
        except Exception as exc:
            path.unlink(missing_ok=True)
            notes.append(f"Not sent to the worker: `{name}` ({type(value).__name__}) cannot be copied to "
                         f"another process ({exc}).")
            continue
        budget -= capped.written
        entries.append({"name": name, "kind": "pickle", "path": str(path)})
    return budget


def _write_frames(frames: list[tuple[str, Any, str, int]], directory: Path, budget: int, max_bytes: int,
                  entries: list[dict[str, Any]], notes: list[str]) -> None:
    """Write each frame, sampled down to its share of the budget when it is bigger."""
    total = sum(size for *_, size in frames)
    for name, value, kind, size in frames:
        share = budget if total <= budget else int(budget * size / total)
        rows = len(value)
        if size > share and rows:
            keep = max(1, int(rows * share / size))
            value = _sample(value, keep)
            notes.append(f"`{name}` has {rows:,} rows (about {_mb(size)}), more than the worker could be sent "
                         f"({_mb(max_bytes)} for all variables): it got a random sample of {keep:,} rows, in "
                         f"their original order. Figures computed from it are estimates (scale counts and sums "
                         f"by {rows / keep:.3g}); live mode sees every row.")
        entry = _write_frame(name, value, kind, directory / f"{len(entries)}.arrow")
        if entry is None:
            notes.append(f"Not sent to the worker: `{name}`, a frame neither Arrow nor pickle could copy.")
        else:
            entries.append(entry)


def _mb(size: int) -> str:
    return f"{size / 2**20:,.0f} MB"


def _sample(value: Any, keep: int) -> Any:
    import numpy as np

    rows = np.sort(np.random.default_rng(SAMPLE_SEED).choice(len(value), size=keep, replace=False, shuffle=False))
    return value.take(rows) if hasattr(value, "iloc") else value[rows]


def _write_frame(name: str, value: Any, kind: str, path: Path) -> dict[str, Any] | None:
    """Arrow IPC when it can (polars natively, pandas through pyarrow), else a pickle; None when neither can."""
    entry: dict[str, Any] = {"name": name, "kind": kind, "path": str(path)}
    try:
        if kind == "polars":
            value.write_ipc(path)
        elif kind == "polars-series":
            value.to_frame().write_ipc(path)
        else:
            import pyarrow as pa

            frame = value.to_frame() if kind == "pandas-series" else value
            table = pa.Table.from_pandas(frame, preserve_index=True)
            with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
            entry["unnamed"] = kind == "pandas-series" and value.name is None
        return entry
    except Exception:  # no pyarrow, or a column Arrow cannot hold (mixed objects): pickle keeps anything
        path = path.with_suffix(".pickle")
        try:
            with open(path, "wb") as file:
                pickle.dump(value, file, protocol=5)
        except Exception:
            path.unlink(missing_ok=True)
            return None
        return {"name": name, "kind": "pickle", "path": str(path)}


# ---------------------------------------------------------------------------------------------- in the worker


def load(job: dict[str, Any], namespace: dict[str, Any]) -> list[str]:
    """Bind the variables the parent sent: modules, then notebook functions and classes (pickled instances
    of those classes need them), then the data."""
    notes: list[str] = []
    entries = job["entries"]
    for entry in [e for e in entries if e["kind"] == "module"]:
        try:
            namespace[entry["name"]] = importlib.import_module(entry["module"])
        except Exception as exc:
            notes.append(f"`{entry['name']}` (module {entry['module']}) could not be imported in the worker: {exc}")
    for source in reversed(job["sources"]):  # the deepest helpers first
        try:
            exec(compile(source["source"], "<notebook>", "exec"), namespace)
            if source["name"] != source["defines"]:
                namespace[source["name"]] = namespace[source["defines"]]
        except Exception as exc:
            notes.append(f"`{source['name']}` could not be defined again in the worker: {exc!r}")
    for entry in [e for e in entries if e["kind"] != "module"]:
        try:
            namespace[entry["name"]] = _read(entry)
        except Exception as exc:
            notes.append(f"`{entry['name']}` could not be loaded in the worker: {exc!r}")
    return notes


def _read(entry: dict[str, Any]) -> Any:
    kind, path = entry["kind"], entry["path"]
    if kind == "pickle":
        with open(path, "rb") as file:
            return pickle.load(file)  # written by the kernel that spawned us, a moment ago
    if kind.startswith("polars"):
        import polars as pl

        frame = pl.read_ipc(path)
        return frame.to_series() if kind == "polars-series" else frame
    import pyarrow as pa

    with pa.memory_map(path) as source:
        frame = pa.ipc.open_file(source).read_all().to_pandas()
    if kind == "pandas":
        return frame
    series = frame.iloc[:, 0]
    if entry.get("unnamed"):
        series.name = None
    return series
