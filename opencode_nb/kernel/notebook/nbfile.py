"""The notebook file on disk, for front ends without the extension: which file, and cell edits on its JSON.

The JSON is edited as loaded, key order kept, and written back with the indent it had, so every part the
edit did not touch stays byte for byte what the front end wrote (nbformat sorts keys and splits text
into lines; cells made here follow the same rules). A write goes to a temporary file in the same folder,
then replaces the notebook in one rename: a reader never sees half a notebook. It goes through `fs`, along
the path the file had when it was read, so a folder on the way that became a link since is refused.

Cell ids arrived with nbformat 4.5. A file without them gets ids from the cells' positions (`cell-3`),
which stay the same until the file changes; the first write stores them and marks the file 4.5.

Nothing here knows whether writing is wise; `cells.py` decides that.
"""

from __future__ import annotations

import errno
import json
import os
import stat as modes
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import fs

NOTEBOOK_ENV = "OPENCODE_NB_NOTEBOOK"
"""Names the notebook file where nothing else does (nbclient and nbconvert tell the kernel nothing)."""

MAX_OUTPUT_CHARS = 2000


def notebook_file(user_ns: Mapping[str, Any], env: Mapping[str, str], cwd: Path) -> Path | None:
    """The notebook the kernel serves: the server's `JPY_SESSION_NAME`, VS Code's `__vsc_ipynb_file__`,
    else `OPENCODE_NB_NOTEBOOK`; relative paths are taken from the kernel's working directory."""
    for candidate in (env.get("JPY_SESSION_NAME"), user_ns.get("__vsc_ipynb_file__"), env.get(NOTEBOOK_ENV)):
        if not candidate or not str(candidate).endswith(".ipynb"):
            continue  # a console's session name is no notebook
        path = Path(str(candidate)).expanduser()
        if not path.is_absolute():
            path = cwd / path if (cwd / path).exists() or not (cwd / path.name).exists() else cwd / path.name
        return path
    return None


@dataclass
class NotebookDoc:
    data: dict[str, Any]
    """The JSON as loaded (key order kept), changed in place by the edits below."""
    indent: int | None
    newline: bool
    ids_added: bool
    """The file had no cell ids; the positional ones given are stored by the next write."""
    stamp: tuple[int, int]
    """(mtime_ns, size) when read: a write refuses to replace a file that changed since."""
    real: Path | None = None
    """Where the file really was when read (links resolved): a save walks to it from `/` without following
    a link, so a folder on the way swapped for one since is refused, not followed."""

    @property
    def cells(self) -> list[dict[str, Any]]:
        return self.data["cells"]

    def index_of(self, cell_id: str) -> int:
        for i, cell in enumerate(self.cells):
            if cell.get("id") == cell_id:
                return i
        raise KeyError(cell_id)


def load(path: Path) -> NotebookDoc:
    """Read the notebook.

    Raises:
        OSError: it cannot be read.
        ValueError: it is not an nbformat 4 notebook.
    """
    raw = path.read_bytes()
    stat = path.stat()
    text = raw.decode("utf-8")
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("nbformat") != 4 or not isinstance(data.get("cells"), list):
        raise ValueError(f"{path} is not an nbformat 4 notebook")
    ids_added = False
    for i, cell in enumerate(data["cells"]):
        if not cell.get("id"):
            data["cells"][i] = _with_key(cell, "id", f"cell-{i}")
            ids_added = True
    return NotebookDoc(data, _indent(text), text.endswith("\n"), ids_added, (stat.st_mtime_ns, stat.st_size),
                       Path(os.path.realpath(path)))


def dumps(doc: NotebookDoc) -> str:
    if doc.ids_added and doc.data.get("nbformat_minor", 0) < 5:
        doc.data["nbformat_minor"] = 5
    text = json.dumps(doc.data, indent=doc.indent, ensure_ascii=False,
                      separators=(",", ": ") if doc.indent is not None else None)
    return text + ("\n" if doc.newline else "")


def save(path: Path, doc: NotebookDoc) -> None:
    """Replace the file atomically with `doc`.

    Raises:
        FileExistsError: the file changed on disk since `doc` was read (someone saved it meanwhile).
    """
    text = dumps(doc)
    real = doc.real or Path(os.path.realpath(path))
    top = Path(real.anchor)

    def unchanged(now: os.stat_result | None) -> bool:
        return now is not None and modes.S_ISREG(now.st_mode) and (now.st_mtime_ns, now.st_size) == doc.stamp

    # `fs.write_file`: a fresh file renamed over the name, its mode kept, the stamp checked in the folder
    # held; a folder on the way that became a link raises `fs.Refused` (an OSError) and nothing is written.
    if not unchanged(fs.lstat(top, real)):
        raise FileExistsError(f"{path} changed on disk while it was being edited")
    try:
        fs.write_file(top, real, text.encode("utf-8"), only_if=unchanged, make_parents=False, durable=True)
    except fs.Refused as exc:
        if exc.errno == errno.EEXIST:
            raise FileExistsError(f"{path} changed on disk while it was being edited") from None
        raise
    new = fs.lstat(top, real)
    if new is not None:
        doc.stamp = (new.st_mtime_ns, new.st_size)
    doc.ids_added = False


# ---------------------------------------------------------------------------------------------- reading


def cell_view(cell: Mapping[str, Any], *, max_output_chars: int | None = MAX_OUTPUT_CHARS) -> dict[str, Any]:
    """A file cell in the shape the extension reports (`Cell` fields), text joined, long outputs cut."""
    outputs = [_joined_output(o) for o in cell.get("outputs", [])]
    if max_output_chars is not None:
        outputs = [_summarised(o, max_output_chars) for o in outputs]
    return {"id": cell["id"], "cell_type": cell.get("cell_type", "code"), "source": _joined(cell.get("source", "")),
            "metadata": dict(cell.get("metadata") or {}), "execution_count": cell.get("execution_count"),
            "outputs": outputs}


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def _joined_output(output: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(output)
    if "text" in out:
        out["text"] = _joined(out["text"])
    if isinstance(out.get("data"), dict):
        out["data"] = {k: _joined(v) if isinstance(v, list) else v for k, v in out["data"].items()}
    return out


def _summarised(output: dict[str, Any], limit: int) -> dict[str, Any]:
    out = dict(output)
    if isinstance(out.get("text"), str):
        out["text"] = _cut(out["text"], limit)
    if isinstance(out.get("data"), dict):
        data = {}
        for mime, value in out["data"].items():
            if mime.startswith("image/") and isinstance(value, str):
                data[mime] = f"[{mime}: {len(value) * 3 // 4} bytes]"
            elif isinstance(value, str):
                data[mime] = _cut(value, limit)
            else:
                data[mime] = value
        out["data"] = data
    return out


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}…[{len(text) - limit} more characters]"


# ---------------------------------------------------------------------------------------------- editing


def new_cell(cell_type: str, source: str, metadata: Mapping[str, Any], *, cell_id: str | None = None,
             outputs: list[dict[str, Any]] | None = None, execution_count: int | None = None) -> dict[str, Any]:
    """A cell as nbformat writes it: keys sorted, text split into lines."""
    cell: dict[str, Any] = {"cell_type": cell_type}
    if cell_type == "code":
        cell["execution_count"] = execution_count
    cell["id"] = cell_id or uuid.uuid4().hex[:8]
    cell["metadata"] = dict(metadata)
    if cell_type == "code":
        cell["outputs"] = [split_output(o) for o in outputs or []]
    cell["source"] = _lines(source)
    return cell


def insert(doc: NotebookDoc, cells: list[dict[str, Any]], after: str | None) -> tuple[list[str], int]:
    """Insert below cell `after` (at the end when None); returns the new ids and the first one's index.

    Raises:
        KeyError: `after` is not a cell of the notebook.
    """
    index = doc.index_of(after) + 1 if after is not None else len(doc.cells)
    made = [new_cell(c.get("cell_type", "code"), c.get("source", ""), c.get("metadata") or {}) for c in cells]
    doc.cells[index:index] = made
    return [c["id"] for c in made], index


def restore(doc: NotebookDoc, cell: Mapping[str, Any], index: int) -> str:
    """Put a deleted cell back at `index` (or the end), under its old id unless that is taken."""
    taken = {c.get("id") for c in doc.cells}
    cell_id = cell["id"] if cell["id"] not in taken else None
    made = new_cell(cell["cell_type"], cell["source"], cell.get("metadata") or {}, cell_id=cell_id,
                    outputs=cell.get("outputs"), execution_count=cell.get("execution_count"))
    doc.cells.insert(min(max(index, 0), len(doc.cells)), made)
    return made["id"]


def replace(doc: NotebookDoc, cell_id: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """Change some of a cell's `source`, `cell_type`, `metadata`, `outputs`, `execution_count`; returns the
    cell as it was (`cell_view`, uncut).

    Raises:
        KeyError: no cell has that id.
    """
    index = doc.index_of(cell_id)
    old = doc.cells[index]
    previous = cell_view(old, max_output_chars=None)
    cell_type = fields.get("cell_type") or old.get("cell_type", "code")
    cell = dict(old)
    if cell_type != old.get("cell_type"):
        cell["cell_type"] = cell_type
        if cell_type == "code":
            cell.update(execution_count=None, outputs=[])
        else:
            cell.pop("execution_count", None)
            cell.pop("outputs", None)
    if "source" in fields:
        cell["source"] = _lines(fields["source"]) if isinstance(old.get("source"), list) else fields["source"]
    if "metadata" in fields:
        cell["metadata"] = dict(fields["metadata"])
    if cell_type == "code":
        if "outputs" in fields:
            cell["outputs"] = [split_output(o) for o in fields["outputs"]]
        if "execution_count" in fields:
            cell["execution_count"] = fields["execution_count"]
    if list(old) == sorted(old):
        cell = dict(sorted(cell.items()))
    doc.cells[index] = cell
    return previous


def delete(doc: NotebookDoc, cell_ids: list[str]) -> list[tuple[dict[str, Any], int]]:
    """Delete cells; returns each as it was (`cell_view`, uncut) with its former index.

    Raises:
        KeyError: an id names no cell (nothing is deleted then).
    """
    indexes = sorted({doc.index_of(cell_id) for cell_id in cell_ids})
    deleted = [(cell_view(doc.cells[i], max_output_chars=None), i) for i in indexes]
    for i in reversed(indexes):
        del doc.cells[i]
    return deleted


def split_output(output: Mapping[str, Any]) -> dict[str, Any]:
    """An output as nbformat stores it: text split into lines, images and JSON left whole."""
    out = dict(output)
    if out.get("output_type") == "stream" and isinstance(out.get("text"), str):
        out["text"] = _lines(out["text"])
    if isinstance(out.get("data"), dict):
        out["data"] = {k: _lines(v) if isinstance(v, str) and (k.startswith("text/") or k in _SPLIT_MIMES) else v
                       for k, v in out["data"].items()}
    return dict(sorted(out.items()))


_SPLIT_MIMES = frozenset({"application/javascript", "image/svg+xml"})


def _lines(text: str) -> list[str]:
    return str(text).splitlines(keepends=True)


def _with_key(mapping: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    updated = {**mapping, key: value}
    return dict(sorted(updated.items())) if list(mapping) == sorted(mapping) else updated


def _indent(text: str) -> int | None:
    """The indent of the file's JSON: the spaces before its first key."""
    first = text.find("\n")
    if first < 0:
        return None
    line = text[first + 1:text.find("\n", first + 1)] if text.find("\n", first + 1) > 0 else text[first + 1:]
    stripped = line.lstrip(" ")
    return len(line) - len(stripped) if stripped.startswith('"') else None
