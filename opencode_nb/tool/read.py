"""read: a file's lines, numbered; images as attachments; notebooks as cells."""

from __future__ import annotations

import base64
import difflib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..errors import ToolError
from ..session.models import Attachment
from .base import Tool, ToolContext, ToolResult, ask_external, relative, resolve_path

DEFAULT_LIMIT = 2000
MAX_LINE = 2000
IMAGES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
          ".webp": "image/webp"}
MAX_IMAGE_BYTES = 5 * 1024 * 1024


class ReadParams(BaseModel):
    path: str = Field(description="Path of the file to read, relative to the project root or absolute")
    offset: int | None = Field(None, ge=1, description="Line number to start at (1-based)")
    limit: int | None = Field(None, ge=1, description=f"Number of lines to read (default {DEFAULT_LIMIT})")


class ReadTool(Tool[ReadParams]):
    id = "read"
    params = ReadParams

    async def execute(self, params: ReadParams, ctx: ToolContext) -> ToolResult:
        path = resolve_path(ctx, params.path)
        await ctx.ask("read", [relative(ctx, path)], always=["*"], metadata={"path": str(path)})
        await ask_external(ctx, path)
        title = relative(ctx, path)
        if path.is_dir():
            raise ToolError(f"{title} is a directory: use the list tool to see what is in it.")
        if not path.exists():
            raise ToolError(_missing(path))
        if path.suffix.lower() in IMAGES:
            return _image(path, title)
        data = path.read_bytes()
        if path.suffix == ".ipynb":
            return ToolResult(title, notebook_text(data, path), {"kind": "notebook"})
        if _binary(data):
            raise ToolError(f"{title} is a binary file ({len(data):,} bytes) and cannot be shown as text.")
        lines = data.decode("utf-8", errors="replace").splitlines()
        start = (params.offset or 1) - 1
        chosen = lines[start:start + (params.limit or DEFAULT_LIMIT)]
        body = "\n".join(f"{start + i + 1:>6}\t{_cut(line)}" for i, line in enumerate(chosen))
        end = start + len(chosen)
        if end < len(lines):
            body += f"\n\n(The file has {len(lines)} lines; read on with offset={end + 1}.)"
        elif not lines:
            body = "(The file is empty.)"
        return ToolResult(title, body, {"lines": len(lines), "shown": [start + 1, end]})


def _cut(line: str) -> str:
    return line if len(line) <= MAX_LINE else line[:MAX_LINE] + "… (line cut)"


def _binary(data: bytes) -> bool:
    sample = data[:8192]
    if b"\0" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(sample) - 4  # a multibyte character cut at the sample's end is fine
    return False


def _missing(path: Path) -> str:
    folder = path.parent
    names = [p.name for p in folder.iterdir()] if folder.is_dir() else []
    near = difflib.get_close_matches(path.name, names, n=3, cutoff=0.5)
    hint = f" Did you mean: {', '.join(str(folder / n) for n in near)}?" if near else ""
    return f"File not found: {path}.{hint}"


def _image(path: Path, title: str) -> ToolResult:
    data = path.read_bytes()
    if len(data) > MAX_IMAGE_BYTES:
        raise ToolError(f"{title} is an image of {len(data):,} bytes, over the {MAX_IMAGE_BYTES:,}-byte limit.")
    mime = IMAGES[path.suffix.lower()]
    url = f"data:{mime};base64,{base64.b64encode(data).decode()}"
    return ToolResult(title, f"Image {title} ({mime}, {len(data):,} bytes) is attached.", {"kind": "image"},
                      [Attachment(mime=mime, url=url, filename=path.name)])


def notebook_text(data: bytes, path: Path) -> str:
    """A notebook as its cells, with outputs summarized rather than dumped."""
    try:
        nb = json.loads(data)
    except json.JSONDecodeError as exc:
        raise ToolError(f"{path} is not a valid notebook: {exc.msg} at line {exc.lineno}.") from None
    out = []
    for i, cell in enumerate(nb.get("cells", [])):
        kind = cell.get("cell_type", "code")
        source = _joined(cell.get("source", ""))
        count = cell.get("execution_count")
        head = f"[{i}] {kind}" + (f" (execution {count})" if count else "")
        out.append(f"{head}\n{source}")
        summaries = [_output(o) for o in cell.get("outputs", [])]
        if summaries:
            out.append("  outputs:\n" + "\n".join("    " + s.replace("\n", "\n    ") for s in summaries))
    return "\n\n".join(out) or "(The notebook has no cells.)"


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _output(output: dict[str, Any]) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        return _short(_joined(output.get("text", "")))
    if kind == "error":
        return f"{output.get('ename')}: {output.get('evalue')}"
    data = output.get("data", {})
    if "text/plain" in data:
        shown = _short(_joined(data["text/plain"]))
        rich = [m for m in data if m != "text/plain"]
        return shown + (f"  [also {', '.join(rich)}]" if rich else "")
    return " ".join(f"[{m} output]" for m in data) or f"[{kind}]"


def _short(text: str, limit: int = 800) -> str:
    text = text.rstrip()
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"
