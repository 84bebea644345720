"""What the model is given about a failed cell: its source, the error and the person's frames, the variables the
cell reads (and the cells that bound them), the installed package for an import error, and the cells above.

Gathered without computing anything the cell did not use: the cell's text says which names it reads
(`reads.py`), and only those are described, by the `variables` describer within one shared time budget; a
1 GB frame the cell never touched is not looked at, nor named. Everything else is read as it stands: the
failure recorded when the cell raised (`failures.py`), the input history (`bound.py`), the notebook's cells
(as `notebook_read` shows them, nearest first, within `ABOVE_CHARS`; what was cut is said).

An error this kernel did not see comes from the cell's saved output (`saved.py`): its traceback is that
output's text, and the context says so, and that the variables, described as they are now, may not be what
they were when the cell failed.
"""

from __future__ import annotations

import asyncio
import builtins
import time
from typing import TYPE_CHECKING, Any

from ...tool.notebook import cell_heading, outputs_text, shorten
from ...tool.support.describe.values import describe
from ...values import Cell
from .bound import Bindings
from .failures import Failure
from .frames import trace_text
from .reads import parse, reads
from .versions import installed, python_line

if TYPE_CHECKING:
    from ..runner import NotebookAgent

SOURCE_CHARS = 8000
"""Of the failing cell's own text."""
MAX_VARIABLES = 12
"""Variables described; further names the cell reads are listed by name."""
DESCRIBE_BUDGET_S = 0.05
"""Wall-clock time all the descriptions share for their scans (each says which figures did not fit)."""
DESCRIPTION_CHARS = 4000
"""Of one variable's description."""
ABOVE_CHARS = 12_000
"""Of the cells above the failing one, nearest first; older cells are left out, and the text says so."""
CELL_CHARS = 3000
"""Of one cell above (its source, then its outputs)."""
READ_TIMEOUT_S = 2.0
"""How long the notebook's cells may take to arrive before the context goes without them."""

NOT_DESCRIBED = frozenset({"In", "Out", "exit", "quit", "get_ipython", "display"})
"""IPython's own names: never the person's data."""


async def context_for(agent: NotebookAgent, cell: str | None = None) -> str:
    """The context block for a cell (its id, or `N` for In [N]; None: the last cell that raised).

    Raises:
        UsageError: that cell has no recorded failure (the message says what to do).
    """
    return await context_text(agent, agent.failures.find(cell))


async def context_text(agent: NotebookAgent, failure: Failure) -> str:
    """The context block of a Fix or Explain prompt for `failure` (see the module docstring)."""
    shell = agent.shell
    namespace: dict[str, Any] = shell.user_ns
    labels = _cell_labels(agent, failure)
    sections = [_cell_section(failure), _error_section(failure, labels)]
    read = _read_names(shell, failure.source)
    sections.append(_variables_section(agent, read, namespace, saved=failure.saved is not None))
    if failure.module:
        sections.append(f"## Installed\n{await installed(failure.module)}\n{python_line()}")
    sections.append(await _above_section(agent, failure))
    return "\n\n".join(s for s in sections if s)


def _cell_labels(agent: NotebookAgent, failure: Failure) -> dict[int, str]:
    """Execution count → how a cell frame names its cell: `Cell [ab12] (In [5])`."""
    labels: dict[int, str] = {}
    for frame in failure.trace.frames:
        if frame.count is not None and frame.count not in labels:
            cell_id = failure.cell_id if frame.count == failure.count else agent.failures.cell_id_of(frame.count)
            labels[frame.count] = f"Cell [{cell_id}] (In [{frame.count}])" if cell_id else frame.where
    return labels


def _cell_section(failure: Failure) -> str:
    source = failure.source.rstrip("\n")
    if len(source) > SOURCE_CHARS:
        source = shorten(source, SOURCE_CHARS)
    return f"## The cell that failed: {failure.label}\n```python\n{source}\n```"


def _error_section(failure: Failure, labels: dict[int, str]) -> str:
    if failure.saved is not None:
        note = f"{failure.note}\n" if failure.note else ""
        return ("## The error (from the cell's saved output: this kernel did not see the cell fail, so the "
                f"traceback is the text the output shows)\n{note}{failure.saved}")
    if failure.syntax:
        return f"## The error (the cell did not compile; nothing in it ran)\n{failure.syntax}"
    return f"## The error\n{trace_text(failure.trace, failure.name, failure.value, labels)}"


def _read_names(shell: Any, source: str) -> list[str]:
    try:
        code = shell.transform_cell(source)
    except Exception:
        code = source
    tree = parse(code)
    return reads(tree) if tree is not None else []


def _variables_section(agent: NotebookAgent, names: list[str], namespace: dict[str, Any], *,
                       saved: bool = False) -> str:
    data: list[str] = []
    undefined: list[str] = []
    for name in names:
        if name in NOT_DESCRIBED or name.startswith("_"):
            continue
        if name not in namespace:
            if not hasattr(builtins, name):
                undefined.append(name)
            continue
        if type(namespace[name]).__name__ == "module":
            continue  # `np.mean`: the module's attribute, not the person's data
        data.append(name)
    if not data and not undefined:
        return "## Variables the cell reads\nNone of the person's variables (only builtins and modules)."
    bound = Bindings(agent.shell, agent.failures.cell_id_of).last_bound(data[:MAX_VARIABLES])
    blocks = ["## Variables the cell reads (described now, as they are in the namespace)"]
    if saved:
        blocks[0] += ("\nThe error is from the cell's saved output, not from a run in this kernel: these values "
                      "may differ from what they were when the cell failed.")
    left = DESCRIBE_BUDGET_S
    described = data[:MAX_VARIABLES]
    for i, name in enumerate(described):
        share = max(0.005, left / (len(described) - i))
        start = time.perf_counter()
        text = describe(namespace[name], name, budget_s=share)
        left = max(0.0, left - (time.perf_counter() - start))
        if len(text) > DESCRIPTION_CHARS:
            text = text[:DESCRIPTION_CHARS] + f"\n… (description cut at {DESCRIPTION_CHARS:,} characters)"
        where = bound.get(name)
        blocks.append(f"{text}\n(bound last by {where})" if where else f"{text}\n(which cell bound it is unknown)")
    if len(data) > MAX_VARIABLES:
        blocks.append("Also read, not described here (the variables tool describes them): "
                      + ", ".join(data[MAX_VARIABLES:]))
    if undefined:
        blocks.append("Read but not defined in the namespace now: " + ", ".join(undefined))
    return "\n\n".join(blocks)


async def _above_section(agent: NotebookAgent, failure: Failure) -> str:
    head = "## The cells above it (as notebook_read shows them)"
    try:
        snapshot = await asyncio.wait_for(agent.notebook.read(None), READ_TIMEOUT_S)
    except TimeoutError:
        return f"{head}\nThe notebook did not answer in time; notebook_read may still reach it."
    except Exception as exc:  # no notebook known, a front end that refused: say why, go on without them
        return f"{head}\nThe notebook's cells could not be read: {exc}"
    cells = snapshot.cells
    index = _position(cells, failure)
    if index is None:
        return (f"{head}\nThe failing cell is not in the notebook as it is now (deleted, or edited so its text no "
                "longer matches what ran); notebook_read shows the notebook.")
    lines: list[str] = []
    now = cells[index]
    if now.source.rstrip("\n") != failure.source.rstrip("\n"):
        lines.append(f"The failing cell was edited after it ran; its text now:\n{shorten(now.source, CELL_CHARS)}")
    blocks: list[str] = []
    used = 0
    first_kept = index
    for position in range(index - 1, -1, -1):
        block = _cell_block(cells[position], position + 1)
        if used + len(block) > ABOVE_CHARS and blocks:
            break
        blocks.append(block)
        used += len(block)
        first_kept = position
    blocks.reverse()
    if first_kept > 0:
        lines.append(f"(cells #1–#{first_kept} are left out to keep this short; notebook_read shows them)")
    if not blocks:
        lines.append("(none: it is the notebook's first cell)")
    return "\n\n".join([f"{head}\nThe failing cell is #{index + 1} of {snapshot.total}.", *lines, *blocks])


def _position(cells: list[Cell], failure: Failure) -> int | None:
    if failure.cell_id:
        for i, cell in enumerate(cells):
            if cell.id == failure.cell_id:
                return i
    matches = [i for i, cell in enumerate(cells) if cell.source.rstrip("\n") == failure.source.rstrip("\n")]
    return matches[0] if len(matches) == 1 else None


def _cell_block(cell: Cell, position: int) -> str:
    block = cell_heading(cell, position=position)
    block += "\n" + (shorten(cell.source, CELL_CHARS) if cell.source.strip() else "(empty)")
    shown = outputs_text(cell.outputs)
    if shown:
        block += "\n--- outputs ---\n" + shorten(shown, CELL_CHARS // 2)
    return block
