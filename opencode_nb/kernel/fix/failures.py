"""Every cell that raised in this kernel, kept as what Fix and Explain need: its id, count, source, the
exception and the person's frames.

IPython's `post_run_cell` event hands over each cell's result, with the exception it raised (the usage-error
handler of `magics/usage.py`, IPython's only custom one, leaves it there too). The traceback is read at once
into frames (`frames.py`) and the exception let go, so a failure kept does not keep a library's frames and
their locals alive. Kept: the last `PER_CELL` failures of each of the last `MAX_CELLS` cells that failed.

Not kept: the agent's own cells (`%agent`, `%%agent`: their errors are ours, not the person's code's), an
interrupt and a stopped agent. A cell that ran without an error since it failed has no failure to fix; the
last failure a cell left standing is what `%agent fix` takes by default.

An error this kernel did not see (a notebook reopened on a fresh kernel, a cell run before `%load_ext`) is
known only from the cell's saved output: `saved.py` reads it from the notebook and hands it over (`adopt`)
before a Fix or Explain asks for a failure, and `find` falls back on it where nothing was recorded.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..cell_now import calling_cell_id
from ..magics.usage import is_ours
from ..notebook.cellrun import is_agent_prompt

if TYPE_CHECKING:
    from .frames import Trace

PER_CELL = 3
"""Failures kept per cell: the latest, and the two before it (the same error again, or a new one)."""
MAX_CELLS = 100
"""Cells whose failures are kept; the cell that failed longest ago goes first."""
MAX_COUNTS = 10_000
"""Execution counts remembered with their cell id, to name the cell that bound a variable."""

COUNT = re.compile(r"^\[?(\d+)\]?$")
"""How a cell is named by its execution count: `5` or `[5]`."""


@dataclass(frozen=True)
class Failure:
    """One cell's failure, as it was when the cell raised."""

    cell_id: str | None
    """The front end's id of the cell (JupyterLab sends it; nbclient does not)."""
    count: int | None
    """Its execution count: `In [count]`."""
    source: str
    """The cell's text as the kernel received it."""
    name: str
    """The exception's class name (`KeyError`)."""
    value: str
    """Its message, without terminal colours, cut if very long."""
    trace: Trace
    """The person's frames (`frames.py`); none for a cell that did not compile."""
    syntax: str = ""
    """For a cell that did not compile: its line and the caret, as Python shows them."""
    module: str | None = None
    """The module an `ImportError` or an `AttributeError` on a module is about (`pydantic`, `numpy`)."""
    seq: int = 0
    at: float = 0.0
    saved: str | None = None
    """For an error this kernel did not see: the traceback as the cell's saved output shows it (no colours),
    since no live traceback exists to take frames from (`trace` is then empty)."""
    note: str = ""
    """Why this failure was chosen, when that is not plain (`%agent fix` alone, nothing raised here)."""

    @property
    def label(self) -> str:
        """`cell [ab12] (In [5])`, or `In [5]` where the front end sent no id."""
        count = f"In [{self.count}]" if self.count is not None else "a cell"
        return f"cell [{self.cell_id}] ({count})" if self.cell_id else count


class FailureLog:
    """The failures of this kernel's cells (see the module docstring); registered on IPython's events."""

    def __init__(self) -> None:
        self._failures: OrderedDict[str, deque[Failure]] = OrderedDict()
        self._ran_ok: dict[str, int] = {}
        """Cell key → `seq` of its latest run without an error."""
        self._ids: OrderedDict[int, str] = OrderedDict()
        """Execution count → the id of the cell that ran with it."""
        self._seq = itertools.count(1)
        self._shell: Any = None
        self._saved: dict[str, Failure] = {}
        """What the notebook's saved outputs say (`adopt`), by the way `find` was asked: `id:…`, `count:N`, `last`."""

    # -------------------------------------------------------------------------------------------- recording

    def register(self, shell: Any) -> None:
        self._shell = shell
        shell.events.register("post_run_cell", self._ended)

    def unregister(self) -> None:
        if self._shell is None:
            return
        with contextlib.suppress(ValueError):
            self._shell.events.unregister("post_run_cell", self._ended)
        self._shell = None

    def _ended(self, result: Any) -> None:
        if result is None:  # interrupted: nothing to record
            return
        with contextlib.suppress(Exception):  # a failure we cannot read must never break the person's cell
            self.record(result)

    def record(self, result: Any) -> None:
        """Record one cell's result (IPython's `ExecutionResult`)."""
        info = getattr(result, "info", None)
        source = getattr(info, "raw_cell", "") or ""
        cell_id = getattr(info, "cell_id", None) or calling_cell_id(self._shell)
        count = result.execution_count if isinstance(result.execution_count, int) else None
        seq = next(self._seq)
        if count is not None and cell_id:
            self._ids[count] = cell_id
            while len(self._ids) > MAX_COUNTS:
                self._ids.popitem(last=False)
        if is_agent_prompt(source):
            return
        key = _key(cell_id, source)
        error = result.error_before_exec or result.error_in_exec
        if error is None:
            self._ran_ok[key] = seq
            return
        if isinstance(error, KeyboardInterrupt) or is_ours(error):  # ■, a stopped agent, a mistyped %agent line
            return
        failure = self._failure(error, cell_id, count, source, seq)
        kept = self._failures.setdefault(key, deque(maxlen=PER_CELL))
        kept.append(failure)
        self._failures.move_to_end(key)
        while len(self._failures) > MAX_CELLS:
            old, _ = self._failures.popitem(last=False)
            self._ran_ok.pop(old, None)

    def _failure(self, error: BaseException, cell_id: str | None, count: int | None, source: str,
                 seq: int) -> Failure:
        from .frames import Trace, exception_line, syntax_text, trace_of  # here: %load_ext stays fast

        name, value = exception_line(error)
        syntax = ""
        if isinstance(error, SyntaxError) and _in_the_cell(error, self._cell_count):
            syntax = syntax_text(error, f"In [{count}]" if count is not None else "the cell")
            trace = Trace(())
        else:
            trace = trace_of(error, self._cell_count)
        return Failure(cell_id=cell_id, count=count, source=source, name=name, value=value, trace=trace,
                       syntax=syntax, module=_module_of(error), seq=seq, at=time.time())

    def _cell_count(self, filename: str) -> int | None:
        """The execution count of a cell's code file (IPython names them), None for a module's file."""
        compiler = getattr(self._shell, "compile", None)
        try:
            named = compiler.format_code_name(filename) if compiler is not None else None
        except Exception:
            return None
        if not named:
            return None
        found = re.search(r"\[(\d+)\]", named[1])
        return int(found.group(1)) if found else None

    # -------------------------------------------------------------------------------------------- finding

    def adopt(self, cell: str | None, failure: Failure | None) -> None:
        """What the notebook's saved output shows for `cell` (None: the last cell with an error output), for
        `find` to fall back on; None forgets what an earlier look found."""
        key = _asked(cell)
        if failure is None:
            self._saved.pop(key, None)
        else:
            self._saved[key] = failure

    def recorded(self, cell: str | None) -> bool:
        """Whether this kernel saw what `find(cell)` would return, or saw the cell run: then the notebook's saved
        outputs are not needed (nor trusted: the file may have been saved before that run)."""
        if cell is None:
            return self.last() is not None
        numbered = COUNT.match(cell)
        if numbered:
            count = int(numbered.group(1))
            return any(f.count == count for kept in self._failures.values() for f in kept)
        key = _key(cell, "")
        return key in self._failures or key in self._ran_ok

    def cell_id_of(self, count: int) -> str | None:
        """The id of the cell that ran as `In [count]`, if the front end sent one."""
        return self._ids.get(count)

    def standing(self) -> list[Failure]:
        """The latest failure of every cell that has not run without an error since, newest first."""
        found = []
        for key, kept in reversed(self._failures.items()):
            if kept and self._ran_ok.get(key, 0) < kept[-1].seq:
                found.append(kept[-1])
        return found

    def last(self) -> Failure | None:
        """The failure of the last cell that raised and has not run cleanly since."""
        standing = self.standing()
        return standing[0] if standing else None

    def find(self, cell: str | None = None) -> Failure:
        """The failure `%agent fix [CELL]` means: the last one, a cell id's latest, or `In [N]`'s.

        Raises:
            UsageError: nothing failed, or not that cell (the message says what to run instead).
        """
        if cell is None:
            failure = self.last() or self._saved.get(_asked(None))
            if failure is None:
                raise UsageError(_NOTHING)
            return failure
        numbered = COUNT.match(cell)
        if numbered:
            return self._by_count(int(numbered.group(1)))
        key = _key(cell, "")
        kept = self._failures.get(key)
        if not kept:
            saved = self._saved.get(_asked(cell))
            if saved is not None and key not in self._ran_ok:
                return saved
            raise UsageError(f"Cell {cell} has not raised an error in this kernel since opencode_nb was loaded, and "
                             "the notebook shows no error output under it (or it is not a cell id). Run the cell "
                             f"so it fails again, then %agent fix {cell}; %agent fix alone takes the last cell "
                             "that raised.")
        if self._ran_ok.get(key, 0) > kept[-1].seq:
            raise UsageError(f"Cell {cell} ran without an error after it failed, so there is nothing to fix. If it "
                             "still goes wrong, run it so the error shows, then %agent fix again.")
        return kept[-1]

    def _by_count(self, count: int) -> Failure:
        for kept in self._failures.values():
            for failure in kept:
                if failure.count == count:
                    return failure
        saved = self._saved.get(_asked(str(count)))
        if saved is not None and _key(saved.cell_id, saved.source) not in self._ran_ok:
            return saved
        raise UsageError(f"In [{count}] did not raise an error in this kernel (or it is no longer kept). Name the "
                         "cell by its id, or run it so it fails again and use %agent fix alone.")


_NOTHING = ("No cell has raised an error in this kernel since opencode_nb was loaded, and no cell of the notebook "
            "shows an error output, so there is nothing to fix or explain. Run the cell that fails, then %agent "
            "fix (or %agent explain) in a cell below it.")


def _key(cell_id: str | None, source: str) -> str:
    """A cell is known by its id; without one (nbclient), by its text."""
    return f"id:{cell_id}" if cell_id else f"text:{hash(source)}"


def _asked(cell: str | None) -> str:
    """How `find` was asked, as the key of what the notebook's saved outputs said for it."""
    if cell is None:
        return "last"
    numbered = COUNT.match(cell)
    return f"count:{int(numbered.group(1))}" if numbered else f"id:{cell}"


def _module_of(error: BaseException) -> str | None:
    if isinstance(error, ImportError) and error.name:
        return error.name
    if isinstance(error, AttributeError):
        owner = getattr(error, "obj", None)
        if type(owner).__name__ == "module":
            return str(getattr(owner, "__name__", "")) or None
    return None


def _in_the_cell(error: SyntaxError, cell_count: Any) -> bool:
    """A syntax error in the cell itself (nothing ran), not one a library raised while the cell ran."""
    filename = error.filename or ""
    return error.__traceback__ is None or cell_count(filename) is not None or filename.startswith("<")
