"""A failure this kernel did not see, read from the error output the notebook saved under the cell.

The page shows Fix and Explain under any error output: one saved in a notebook reopened on a fresh kernel, or
one raised before `%load_ext opencode_nb`. The failure log (`failures.py`) has nothing for those, so before a
Fix or Explain asks it for a failure, the cell is read from the notebook (the live model when the extension
answers, else the file) and its last error output becomes a `Failure` the log falls back on (`adopt`).

No live traceback exists for such an error, so its frames are the output's text (colours removed), and the
context says the error comes from the saved output while the variables are described as they are now.
`%agent fix` alone still means the last failure this kernel saw; only when there is none does it take the
notebook's last cell with an error output, and says so. Agent cells (`%%agent`, `%agent`) are never taken:
their errors are ours.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ...tool.notebook import joined_lines
from ...values import Cell
from ..notebook.cellrun import is_agent_prompt
from .failures import COUNT, Failure
from .frames import MAX_VALUE_CHARS, Trace, clean

if TYPE_CHECKING:
    from ..runner import NotebookAgent
    from .runs import Kind

READ_TIMEOUT_S = 2.0
"""How long the notebook may take to answer before the log's own answer (its clear "nothing failed") stands."""
READ_OUTPUT_CHARS = 60_000
"""Of one output as the notebook sends it: a traceback with its terminal colours runs several times its text."""
TRACE_CHARS = 8000
"""Of the saved traceback's text; its head and its end (where the error line is) are kept."""

LAST_NOTE = ("No cell has raised an error in this kernel since opencode_nb was loaded; this is the notebook's "
             "last cell with an error output.")


async def adopt_saved(agent: NotebookAgent, args: list[str], kind: Kind) -> None:
    """Before `%agent fix|explain`: where the log saw nothing for the cell `args` name, hand it what the
    notebook's saved outputs show (or forget an earlier look's finding). Never raises: when the notebook
    cannot be read, the log's own message stands."""
    from .runs import parse_request

    try:
        cell = parse_request(kind, args).cell
    except UsageError:
        return  # the run says what is wrong with the line
    log = agent.failures
    if log.recorded(cell):
        return
    try:
        await agent.aworkspace()  # the notebook's access is built with it, on a worker thread
        found = await asyncio.wait_for(_saved_failure(agent, cell), READ_TIMEOUT_S)
    except Exception:  # no notebook known, a front end that refused or did not answer
        found = None
    log.adopt(cell, found)


async def _saved_failure(agent: NotebookAgent, cell: str | None) -> Failure | None:
    notebook = agent.notebook
    numbered = COUNT.match(cell) if cell is not None else None
    if cell is not None and numbered is None:
        snapshot = await notebook.read([cell], max_output_chars=READ_OUTPUT_CHARS)
        return failure_of(snapshot.cells[0]) if snapshot.cells else None
    snapshot = await notebook.read(None)
    # A cell this kernel saw run is known better than its saved output says (a file saved before that run).
    shown = [c for c in snapshot.cells if _saved_error(c) is not None and not agent.failures.recorded(c.id)]
    if numbered is None:
        candidates = shown[::-1]
    else:
        count = int(numbered.group(1))
        candidates = [c for c in shown if c.execution_count == count]
    if not candidates:
        return None
    whole = await notebook.read([candidates[0].id], max_output_chars=READ_OUTPUT_CHARS)
    return failure_of(whole.cells[0], note=LAST_NOTE if cell is None else "")


def failure_of(cell: Cell, *, note: str = "") -> Failure | None:
    """The failure a cell's last error output shows, None when it shows none (or it is an agent's cell)."""
    output = _saved_error(cell)
    if output is None:
        return None
    name = clean(str(output.get("ename") or "Error"))
    value = clean(str(output.get("evalue") or ""))
    if len(value) > MAX_VALUE_CHARS:
        value = value[:MAX_VALUE_CHARS] + f" … ({len(value) - MAX_VALUE_CHARS:,} more characters)"
    return Failure(cell_id=cell.id, count=cell.execution_count, source=cell.source, name=name, value=value,
                   trace=Trace(()), saved=trace_text(output, name, value), note=note)


def _saved_error(cell: Cell) -> dict[str, Any] | None:
    if cell.cell_type != "code" or is_agent_prompt(cell.source):
        return None
    errors = [o for o in cell.outputs if o.get("output_type") == "error"]
    return errors[-1] if errors else None


def trace_text(output: dict[str, Any], name: str, value: str) -> str:
    """The saved traceback as plain text: colours and IPython's rule of dashes gone, the error line last."""
    lines = [clean(line).rstrip() for line in joined_lines(output.get("traceback"))]
    while lines and (not lines[0].strip() or set(lines[0].strip()) == {"-"}):
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    error = f"{name}: {value}" if value else name
    if not lines or lines[-1].strip() != error.strip():
        lines.append(error)  # a traceback cut short, or one that ends elsewhere: the error still closes it
    text = "\n".join(lines)
    if len(text) <= TRACE_CHARS:
        return text
    head, tail = text[:TRACE_CHARS // 4], text[-(TRACE_CHARS * 3 // 4):]
    return f"{head}\n… ({len(text) - len(head) - len(tail):,} characters of the traceback left out) …\n{tail}"

