"""A notebook's change as a person reads it: which cells were added, removed or changed, never its JSON.

A `.ipynb` is JSON whose every save reorders nothing but rewrites outputs, execution counts and metadata, so
its line diff is pages of escaped strings where a person asked "what did this turn do to my notebook".
Here both versions are read with nbformat and compared cell by cell: matched by cell id when every cell of
both has one (nbformat 4.5) and the versions share some (a notebook written whole by a tool gets new ids),
else by source, a run of differing cells paired in order. Each cell is named by its 1-based position (in
the new version; a removed cell by its old one) and its first line; a changed cell's source comes as a
unified diff, its outputs as a count and their kinds. A version nbformat cannot read is said in one line.
"""

from __future__ import annotations

import difflib
import json
import warnings
from collections.abc import Sequence
from typing import Any

import nbformat

from .. import secrets

_FIRST_LINE = 60


def is_notebook(path: str) -> bool:
    return path.lower().endswith(".ipynb")


def notebook_diff(path: str, old: bytes | None, new: bytes | None) -> str:
    """The change from `old` to `new` (None: not there), cell by cell, secrets hidden; ends with a newline."""
    cells: dict[str, list[Any]] = {}
    for side, data in (("before", old), ("after", new)):
        if data is None:
            cells[side] = []
            continue
        read = _cells(data)
        if isinstance(read, str):
            return secrets.redact(f"notebook {path}: the version {side} the turn is not a readable notebook "
                                  f"({read}), so its cells cannot be compared\n")
        cells[side] = read
    lines = _compare(path, cells["before"], cells["after"])
    head = f"notebook {path}" + (" (new)" if old is None else " (deleted)" if new is None else "")
    return secrets.redact("\n".join([f"{head}: {_counts(lines) or 'no cell changed (only metadata)'}",
                                     *(line for _, block in lines for line in block)]) + "\n")


def _cells(data: bytes) -> list[Any] | str:
    """The notebook's cells, or why it could not be read."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return list(nbformat.reads(data.decode("utf-8"), as_version=4).cells)
    except UnicodeDecodeError:
        return "not UTF-8 text"
    except nbformat.reader.NotJSONError:  # its message quotes the file: JSON is what is never shown
        return "not valid JSON"
    except nbformat.ValidationError as exc:
        return "not valid nbformat: " + " ".join(str(exc.message).split())[:100]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return f"nbformat could not read it ({type(exc).__name__})"


def _compare(path: str, old: list[Any], new: list[Any]) -> list[tuple[str, list[str]]]:
    """(what happened, its lines) for each cell that was added, removed or changed, in notebook order."""
    by_id = all(c.get("id") for c in [*old, *new]) and bool({c.id for c in old} & {c.id for c in new})
    keys_old = [_key(c, by_id) for c in old]
    keys_new = [_key(c, by_id) for c in new]
    out: list[tuple[str, list[str]]] = []
    matcher = difflib.SequenceMatcher(None, keys_old, keys_new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        paired = list(zip(range(i1, i2), range(j1, j2), strict=False)) if tag == "equal" or (
            tag == "replace" and not by_id) else []
        for i, j in paired:
            changed = _changed(path, j + 1, old[i], new[j])
            if changed:
                out.append(("changed", changed))
        for i in range(i1 + len(paired), i2):
            out.append(("removed", [f"cell {i + 1} ({old[i].cell_type}) removed: {_first_line(old[i])}"]))
        for j in range(j1 + len(paired), j2):
            out.append(("added", [f"cell {j + 1} ({new[j].cell_type}) added: {_first_line(new[j])}"
                                  + _outputs_note(new[j])]))
    return out


def _key(cell: Any, by_id: bool) -> str:
    return str(cell.get("id")) if by_id else f"{cell.cell_type}\0{_source(cell)}"


def _changed(path: str, index: int, old: Any, new: Any) -> list[str]:
    """The lines saying how one cell changed; none when only its metadata or execution count did."""
    kind = old.cell_type if old.cell_type == new.cell_type else f"{old.cell_type} → {new.cell_type}"
    lines: list[str] = []
    if _source(old) != _source(new):
        lines += [line.rstrip("\n") for line in difflib.unified_diff(
            _source(old).splitlines(keepends=True), _source(new).splitlines(keepends=True),
            fromfile=f"a/{path} cell {index}", tofile=f"b/{path} cell {index}")]
    before, after = _outputs(old), _outputs(new)
    if before != after:
        lines.append(f"outputs: {_summary(before)} → {_summary(after)}"
                     + (" (same kinds, new content)" if _kinds(before) == _kinds(after) else ""))
    if not lines and old.cell_type == new.cell_type:
        return []
    return [f"cell {index} ({kind}) changed: {_first_line(new)}", *lines]


def _source(cell: Any) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _outputs(cell: Any) -> list[str]:
    """Each output as comparable text, without what changes at every run (execution counts)."""
    out = []
    for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
        shown = {k: v for k, v in dict(output).items() if k != "execution_count"}
        out.append(json.dumps(shown, sort_keys=True, default=str))
    return out


def _kinds(outputs: Sequence[str]) -> list[str]:
    kinds = []
    for text in outputs:
        output = json.loads(text)
        kind = str(output.get("output_type", "?"))
        kinds.append(f"error {output.get('ename', '')}".strip() if kind == "error" else kind)
    return kinds


def _summary(outputs: Sequence[str]) -> str:
    if not outputs:
        return "none"
    return f"{len(outputs)} ({', '.join(dict.fromkeys(_kinds(outputs)))})"


def _outputs_note(cell: Any) -> str:
    outputs = _outputs(cell)
    return f" [outputs: {_summary(outputs)}]" if outputs else ""


def _first_line(cell: Any) -> str:
    line = next((t.strip() for t in _source(cell).splitlines() if t.strip()), "")
    if not line:
        return "(empty)"
    return line if len(line) <= _FIRST_LINE else line[:_FIRST_LINE - 1] + "…"


def _counts(lines: list[tuple[str, list[str]]]) -> str:
    said = []
    for what in ("changed", "added", "removed"):
        n = sum(1 for kind, _ in lines if kind == what)
        if n:
            said.append(f"{n} cell{'s' if n > 1 else ''} {what}")
    return ", ".join(said)
