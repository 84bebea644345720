"""A failed cell's traceback as the person's frames: their cells and their own modules, and of a library only
where their call went in and where it raised.

IPython's traceback starts in its own `run_code` and may run fifteen frames deep into pandas before the
`raise`; the model needs the cell's line, the person's functions it went through, the library call the
person made and the line that raised. So the frames are kept as data (read once, when the cell fails, so
the traceback and the frames' locals are not kept alive), and the frames in between inside one library are
counted, not shown. Frames of IPython, ipykernel and this package before the person's first frame are
dropped: they are how a cell runs, not why it failed.
"""

from __future__ import annotations

import linecache
import os
import re
import sysconfig
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

Kind = Literal["cell", "person", "library", "internal"]

MAX_FRAMES = 40
"""Frames kept of one traceback (a deep recursion keeps its first and last ones)."""
MAX_CAUSES = 3
"""Exceptions of a chain (`raise … from`, or raised while handling) named above the last one."""
MAX_VALUE_CHARS = 2000
"""Of an exception's text: a message quoting a whole array still reads in a few lines."""

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_INTERNAL_PACKAGES = ("IPython", "ipykernel", "opencode_nb", "asyncio")


@dataclass(frozen=True)
class Frame:
    """One frame of a failed cell's traceback."""

    kind: Kind
    where: str
    """`Cell In [5]` for a cell (`count` says which), a path for a module (shortened to its package for a library)."""
    line: int
    function: str
    code: str
    """The source line, without its indentation."""
    count: int | None = None
    """The execution count of the cell the frame ran in (cell frames only)."""
    package: str = ""
    """The top-level package of a library frame (`pandas`), to say which library the counted frames were in."""


@dataclass(frozen=True)
class Trace:
    """A traceback reduced to the frames that explain it."""

    frames: tuple[Frame, ...]
    hidden: tuple[tuple[int, str], ...] = ()
    """For each gap in `frames` (by the index of the frame after it): how many frames were left out, and where."""
    causes: tuple[str, ...] = ()
    """`Name: value` of the exceptions this one was raised from or while handling, oldest first."""


def clean(text: str) -> str:
    return _ANSI.sub("", text)


def exception_line(error: BaseException) -> tuple[str, str]:
    """(name, value) of an exception, the value cut at `MAX_VALUE_CHARS` and without terminal colours."""
    try:
        value = str(error)
    except Exception as exc:  # a __str__ that fails: the name still says a lot
        value = f"<its message could not be read: {type(exc).__name__}>"
    value = clean(value)
    if len(value) > MAX_VALUE_CHARS:
        value = value[:MAX_VALUE_CHARS] + f" … ({len(value) - MAX_VALUE_CHARS:,} more characters)"
    return type(error).__name__, value


def trace_of(error: BaseException, cell_count: Callable[[str], int | None]) -> Trace:
    """The frames of `error`'s traceback that explain it; `cell_count` gives the execution count of a cell's
    code file name (IPython's compiler knows them), None for a module's file."""
    frames = [_frame(summary, cell_count) for summary in traceback.extract_tb(error.__traceback__, limit=None)]
    kept, hidden = _trim(frames)
    return Trace(tuple(kept), tuple(hidden), _causes(error))


def _frame(summary: traceback.FrameSummary, cell_count: Callable[[str], int | None]) -> Frame:
    filename = summary.filename
    code = clean((summary.line or linecache.getline(filename, summary.lineno or 0) or "").strip())
    line = summary.lineno or 0
    count = cell_count(filename)
    if count is not None:
        return Frame("cell", f"Cell In [{count}]", line, summary.name, code, count=count)
    kind, where, package = _classify(filename)
    return Frame(kind, where, line, summary.name, code, package=package)


def _trim(frames: list[Frame]) -> tuple[list[Frame], list[tuple[int, str]]]:
    """Drop the runner's frames before the person's first; of each run of library frames keep the person's
    entry into it and, at the end, the frame that raised."""
    first = next((i for i, f in enumerate(frames) if f.kind in ("cell", "person")), None)
    if first is None:  # raised before any code of the person's ran (a library's own runner): keep the end
        return frames[-3:], ([(0, f"{len(frames) - 3} frames of the runner")] if len(frames) > 3 else [])
    frames = frames[first:]
    kept: list[Frame] = []
    hidden: list[tuple[int, str]] = []
    i = 0
    while i < len(frames):
        frame = frames[i]
        if frame.kind in ("cell", "person"):
            kept.append(frame)
            i += 1
            continue
        end = i
        while end < len(frames) and frames[end].kind not in ("cell", "person"):
            end += 1
        run = frames[i:end]
        kept.append(run[0])
        last = end == len(frames)
        middle = run[1:-1] if last and len(run) > 1 else run[1:]
        if middle:
            packages = sorted({f.package or "the standard library" for f in middle})
            hidden.append((len(kept), f"{len(middle)} frame{'s' * (len(middle) != 1)} inside {', '.join(packages)}"))
        if last and len(run) > 1:
            kept.append(run[-1])
        i = end
    if len(kept) > MAX_FRAMES:
        head, tail = kept[:MAX_FRAMES // 2], kept[-MAX_FRAMES // 2:]
        cut = len(kept) - len(head) - len(tail)
        hidden = [(at, what) for at, what in hidden if at <= len(head)]
        hidden.append((len(head), f"{cut} frames of a deep call chain"))
        kept = head + tail
    return kept, hidden


def _causes(error: BaseException) -> tuple[str, ...]:
    chain: list[str] = []
    seen = {id(error)}
    current: BaseException | None = error
    while current is not None and len(chain) < MAX_CAUSES:
        nxt = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
        if nxt is None or id(nxt) in seen:
            break
        seen.add(id(nxt))
        name, value = exception_line(nxt)
        chain.append(f"{name}: {value}" if value else name)
        current = nxt
    return tuple(reversed(chain))


def _classify(filename: str) -> tuple[Kind, str, str]:
    """(kind, shown path, top-level package) of a module's file."""
    path = os.path.normpath(filename)
    for root in _library_roots():
        if path.startswith(root + os.sep):
            rel = path[len(root) + 1:]
            package = rel.split(os.sep, 1)[0].removesuffix(".py")
            kind: Kind = "internal" if package in _INTERNAL_PACKAGES else "library"
            return kind, rel, package
    if filename.startswith("<") and filename.endswith(">"):  # <frozen runpy>, <string>: the interpreter's own
        return "library", filename, filename.strip("<>").split(" ")[-1]
    if path.startswith(_own_root() + os.sep):
        return "internal", path, "opencode_nb"
    return "person", _shown(path), ""


@cache
def _library_roots() -> tuple[str, ...]:
    """Where installed packages and the standard library live, longest first (site-packages sits inside stdlib's
    prefix on some layouts)."""
    paths = sysconfig.get_paths()
    roots = {os.path.normpath(paths[key]) for key in ("purelib", "platlib", "stdlib", "platstdlib") if key in paths}
    import site

    for extra in [*site.getsitepackages(), site.getusersitepackages()]:
        roots.add(os.path.normpath(extra))
    return tuple(sorted(roots, key=len, reverse=True))


@cache
def _own_root() -> str:
    return os.path.normpath(str(Path(__file__).resolve().parents[2]))


def _shown(path: str) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return path


def frame_line(frame: Frame, cell_label: Mapping[int, str]) -> str:
    """`Cell [ab12] (In [5]), line 3` / `pandas/core/frame.py, line 4102, in __getitem__`."""
    if frame.kind == "cell":
        where = cell_label.get(frame.count or -1, frame.where)
        inside = f", in {frame.function}" if frame.function != "<module>" else ""
        return f"{where}, line {frame.line}{inside}"
    return f"{frame.where}, line {frame.line}, in {frame.function}"


def trace_text(trace: Trace, name: str, value: str, cell_label: Mapping[int, str]) -> str:
    """The traceback as the model reads it: Python's layout, most recent call last, gaps said."""
    lines = [f"(raised while handling, or from: {cause})" for cause in trace.causes]
    if trace.frames:
        lines.append("Traceback (most recent call last):")
    gaps = dict(trace.hidden)
    for i, frame in enumerate(trace.frames):
        if i in gaps:
            lines.append(f"  … {gaps[i]} left out")
        lines.append(f"  {frame_line(frame, cell_label)}")
        if frame.code:
            lines.append(f"    {frame.code}")
    lines.append(f"{name}: {value}" if value else name)
    return "\n".join(lines)


def syntax_text(error: SyntaxError, where: str) -> str:
    """A cell that did not compile: its line, a caret under the spot, the message (no frames: nothing ran)."""
    lines = [f"  {where}, line {error.lineno}" if error.lineno else f"  {where}"]
    if error.text:
        text = clean(error.text.rstrip("\n"))
        stripped = text.lstrip()
        lines.append(f"    {stripped}")
        if error.offset:
            lines.append("    " + " " * max(0, error.offset - 1 - (len(text) - len(stripped))) + "^")
    lines.append(f"{type(error).__name__}: {clean(error.msg or '')}")
    return "\n".join(lines)
