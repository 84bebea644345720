"""A notebook as the model reads it: cells in order, with their outputs summarized rather than dumped.

A saved notebook's JSON is mostly escaped source and base64 images; shown raw it wastes the model's
context and hides the structure. Each cell gets its index (what notebook tools and people refer to), its
kind and execution count; stream output is cut to its head and tail, rich outputs are named
(`[image/png output]`) and errors give their name, value and the last traceback line.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...errors import ToolError

MAX_STREAM_CHARS = 1500
"""Per output: a long training log says what it needs to in its first and last lines."""

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def notebook_text(data: bytes, title: str) -> str:
    try:
        nb = json.loads(data)
    except json.JSONDecodeError as exc:
        raise ToolError(f"{title} is not a valid notebook: {exc.msg} at line {exc.lineno}. Read it with "
                        "offset and limit as text, or repair the JSON.") from None
    if not isinstance(nb, dict):
        raise ToolError(f"{title} is not a valid notebook: its JSON is not an object with `cells`.")
    cells = nb.get("cells") or []
    kernel = (nb.get("metadata") or {}).get("kernelspec", {}).get("name")
    head = f"Notebook {title}: {len(cells)} cell{'s' if len(cells) != 1 else ''}"
    out = [head + (f", kernel {kernel}" if kernel else "")]
    for index, cell in enumerate(cells):
        out.append(_cell(index, cell))
    return "\n\n".join(out)


def _cell(index: int, cell: dict[str, Any]) -> str:
    kind = cell.get("cell_type", "code")
    count = cell.get("execution_count")
    header = f"[cell {index}] {kind}" + (f" (execution {count})" if count else "")
    source = joined(cell.get("source", "")).rstrip("\n")
    text = f"{header}\n{source}" if source else f"{header}\n(empty)"
    outputs = [summary for o in cell.get("outputs") or [] if (summary := output_summary(o))]
    if outputs:
        text += "\n--- outputs ---\n" + "\n".join(outputs)
    return text


def output_summary(output: dict[str, Any]) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        text = _short(joined(output.get("text", "")))
        return f"[{output.get('name', 'stdout')}] {text}" if output.get("name") == "stderr" else text
    if kind == "error":
        trace = [_ANSI.sub("", line) for line in output.get("traceback") or []]
        last = next((line.strip() for line in reversed(trace) if line.strip()), "")
        text = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
        return text if not last or last == text else f"{text}\n  (traceback ends: {last[:300]})"
    data = output.get("data") or {}
    parts = []
    if "text/plain" in data:
        parts.append(_short(joined(data["text/plain"])))
    parts += [f"[{mime} output]" for mime in data if mime != "text/plain"]
    return "\n".join(parts) or f"[{kind} output]"


def joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _short(text: str) -> str:
    text = _ANSI.sub("", text).rstrip()
    if len(text) <= MAX_STREAM_CHARS:
        return text
    half = MAX_STREAM_CHARS // 2
    return f"{text[:half]}\n… ({len(text) - 2 * half} characters cut) …\n{text[-half:]}"
