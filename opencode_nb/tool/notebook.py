"""What the three notebook tools share: reaching the notebook, and cells and outputs as the model reads them.

`notebook_read`, `notebook_edit` and `notebook_run` work on the notebook the kernel serves, through
`ctx.notebook` (live JupyterLab model when the extension answers, the file on disk otherwise). Outside a
kernel there is none, and every tool says so the same way. A refusal of the access object (an unknown id, a
file with unsaved edits elsewhere) is worded for the model already; it becomes the tool's error unchanged.

Outputs are summarised, never dumped: text is cut per output, an image is named with its size (the
model sees it as an image only where a tool attaches it: `notebook_run`), and an error keeps its name,
value and traceback without the terminal colours.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Awaitable
from typing import Any, TypeVar

from ..errors import ToolError
from ..values import Attachment, Cell
from .base import MAX_OUTPUT_BYTES, MAX_OUTPUT_LINES, ToolContext, bounded, cut_note, save_output, split_lines
from .context import NotebookAccess, NotebookRefused

NO_NOTEBOOK = ("There is no notebook in this session: the notebook tools work only inside a Jupyter kernel with "
               "the notebook open (`%load_ext opencode_nb`, then `%%agent` in a cell). To look at a saved "
               "notebook, use read on the .ipynb file.")

MAX_TEXT_CHARS = 2000
"""Per output, what the model reads of its text: a long log says what it needs to in its head and tail."""
MAX_TRACEBACK_LINES = 30
"""The last frames of a traceback, where the cause usually is."""
IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp")

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_SUMMARISED = re.compile(r"^\[image/[\w.+-]+: \d+ bytes\]$")
"""How the extension's `read_cells` replaces image data it does not send."""

T = TypeVar("T")


def access(ctx: ToolContext) -> NotebookAccess:
    """The notebook, or the error that explains why these tools cannot work here.

    Raises:
        ToolError: outside a kernel (no notebook).
    """
    if ctx.notebook is None:
        raise ToolError(NO_NOTEBOOK)
    return ctx.notebook


async def refused_as_error(call: Awaitable[T]) -> T:
    """`await call`, with the access object's refusal turned into the tool error the model reads."""
    try:
        return await call
    except NotebookRefused as refused:
        raise ToolError(str(refused)) from None


def joined(value: Any) -> str:
    """nbformat allows a string or a list of lines wherever text goes."""
    return "".join(value) if isinstance(value, list) else str(value)


def clean(text: str) -> str:
    return _ANSI.sub("", text)


def shorten(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """`text` within `limit` characters: its head and tail, and how much was cut between them."""
    text = clean(text).rstrip()
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n… ({len(text) - 2 * half:,} characters cut) …\n{text[-half:]}"


def size_text(n_bytes: int) -> str:
    return f"{n_bytes:,} bytes" if n_bytes < 1024 else (
        f"{n_bytes / 1024:.1f} KB" if n_bytes < 1024 * 1024 else f"{n_bytes / 1024 / 1024:.1f} MB")


def image_note(mime: str, data: Any, *, attached: bool = False) -> str:
    """`[image/png, 12.3 KB]`: an image named by its size, never its bytes."""
    text = joined(data).strip()
    if _SUMMARISED.match(text):
        return text
    encoded = re.sub(r"\s", "", text)
    size = len(encoded) * 3 // 4 - (len(encoded) - len(encoded.rstrip("=")))  # base64: 4 characters carry 3 bytes
    return f"[{mime}, {size_text(size)}{', attached' if attached else ''}]"


def output_text(output: dict[str, Any], *, attached: bool = False) -> str:
    """One nbformat output as the model reads it; `attached` says its image comes with the result."""
    kind = output.get("output_type")
    if kind == "stream":
        text = shorten(joined(output.get("text", "")))
        return f"[stderr] {text}" if output.get("name") == "stderr" and text else text
    if kind == "error":
        return error_text(output, lines=3)
    data = output.get("data") or {}
    parts = []
    if "text/plain" in data:
        parts.append(shorten(joined(data["text/plain"])))
    elif "text/markdown" in data:
        parts.append(shorten(joined(data["text/markdown"])))
    for mime, value in data.items():
        if mime in IMAGE_MIMES:
            parts.append(image_note(mime, value, attached=attached))
        elif mime not in ("text/plain", "text/markdown"):
            parts.append(f"[{mime} output]")
    return "\n".join(p for p in parts if p)


def error_text(output: dict[str, Any], *, lines: int = MAX_TRACEBACK_LINES) -> str:
    """`Name: value`, then the traceback's last `lines` lines (colours removed)."""
    head = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
    trace = [clean(line).rstrip() for line in joined_lines(output.get("traceback"))]
    trace = [line for line in trace if line.strip()]
    if trace and trace[-1].strip() == head.strip():
        trace.pop()
    if not trace:
        return head
    shown = trace[-lines:]
    if len(shown) == len(trace):
        return f"{head}\n" + "\n".join(f"  {line}" for line in shown)
    cut = f"  … ({len(trace) - len(shown)} earlier lines)"
    return f"{head}\nTraceback, last lines:\n" + "\n".join([cut, *(f"  {line}" for line in shown)])


def joined_lines(value: Any) -> list[str]:
    """A traceback's lines: nbformat keeps a list whose entries may themselves hold several lines."""
    if not value:
        return []
    text = "\n".join(value) if isinstance(value, list) else str(value)
    return text.splitlines()


def outputs_text(outputs: list[dict[str, Any]], *, attached: bool = False) -> str:
    return "\n".join(text for o in outputs if (text := output_text(o, attached=attached)))


def images(outputs: list[dict[str, Any]]) -> list[Attachment]:
    """The images among `outputs`, as attachments the model looks at (summarised ones have no data)."""
    found = []
    for output in outputs:
        for mime, value in (output.get("data") or {}).items():
            data = re.sub(r"\s", "", joined(value))
            if mime in IMAGE_MIMES and data and not _SUMMARISED.match(joined(value).strip()) and _is_base64(data):
                found.append(Attachment(mime=mime, url=f"data:{mime};base64,{data}"))
    return found


def _is_base64(data: str) -> bool:
    try:
        base64.b64decode(data, validate=True)
    except ValueError:
        return False
    return True


def cell_heading(cell: Cell, *, position: int | None = None, calling: str | None = None,
                 pending: int | None = None) -> str:
    """`[cell abc123] #3 code · In [4]`: the line each cell's block starts with, marking a running cell, the
    agent's own, and one with a change waiting for the person (`pending`: its number)."""
    bits = [f"[cell {cell.id}]" + (f" #{position}" if position is not None else ""), cell.cell_type]
    if cell.cell_type == "code" and cell.execution_count is not None:
        bits.append(f"In [{cell.execution_count}]")
    elif cell.cell_type == "code" and not cell.running:
        bits.append("not run")
    if cell.running:
        bits.append("running")
    if calling is not None and cell.id == calling:
        bits.append("the agent's own cell (inserts go below it by default)")
    if pending is not None:
        bits.append(f"pending change {pending} (proposed, not accepted yet: the source shown is the cell's now)")
    return f"{bits[0]} " + " · ".join(bits[1:])


def bounded_error(ctx: ToolContext, text: str) -> ToolError:
    """A tool error within the output bounds; the whole text is saved where the note says, like an output."""
    if len(split_lines(text)) <= MAX_OUTPUT_LINES and len(text.encode()) <= MAX_OUTPUT_BYTES:
        return ToolError(text)
    path = save_output(ctx, text)
    shown, cut = bounded(text)
    return ToolError(shown + cut_note(cut, path))
