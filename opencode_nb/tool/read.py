"""read: a file's lines, numbered; images as attachments; notebooks as cells.

A relative path starts at the working folder (a notebook's folder). Reading asks `read` with the path relative
to the project root; a path that leaves the project (as written, as its links resolve, or as the opened file
really is) asks `external_directory` for its folder first.
The file is opened once and read through that descriptor, so a link flipped after the check cannot send
the read elsewhere (`files/safeopen`). Permission comes before anything about the file is said, so a
refused read does not even reveal whether the file exists. A file that conventionally holds secrets (`.env`,
`id_rsa`: `secrets/files.py`) asks by the default rules; once allowed, its values are learned as secrets
before the output is stored, so the model reads the file with its values redacted.
"""

from __future__ import annotations

import asyncio
import base64
import difflib
import os
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from .. import secrets
from ..errors import ToolError
from ..values import Attachment
from .base import MAX_OUTPUT_BYTES, Tool, ToolContext, ToolResult, for_person, relative, shown, workspace_root
from .files.access import open_checked
from .files.ignore import IgnoreRules
from .files.safeopen import open_path
from .files.textfile import open_error
from .support.ipynb import notebook_text

DEFAULT_LIMIT = 2000
MAX_LINE = 2000
"""Longer lines (minified files, embedded data) are cut: they cost context and say little."""
MAX_IMAGE_BYTES = 5 * 1024 * 1024

IMAGE_SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF87a", "image/gif"),
                    (b"GIF89a", "image/gif"))
IMAGE_SUFFIXES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
                  ".webp": "image/webp"}

BINARY_SUFFIXES = frozenset({
    ".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar", ".exe", ".dll", ".so", ".dylib", ".o", ".a",
    ".lib", ".obj", ".class", ".jar", ".war", ".wasm", ".pyc", ".pyo", ".bin", ".dat", ".pkl", ".pickle",
    ".npy", ".npz", ".parquet", ".feather", ".arrow", ".h5", ".hdf5", ".sqlite", ".db", ".pdf", ".doc", ".docx",
    ".xls", ".xlsx", ".ppt", ".pptx", ".odt", ".ods", ".odp", ".mp3", ".mp4", ".wav", ".avi", ".mov", ".ico",
    ".bmp", ".tif", ".tiff", ".woff", ".woff2", ".ttf", ".otf",
})
"""Formats that are never text, whatever their first bytes look like."""


class ReadParams(BaseModel):
    path: str = Field(description="Path of the file to read, relative to the working directory or absolute")
    offset: int | None = Field(None, ge=1, description="Line number to start reading at (1-based)")
    limit: int | None = Field(None, ge=1, description=f"Number of lines to read (default and maximum {DEFAULT_LIMIT})")


class ReadTool(Tool[ReadParams]):
    id = "read"
    params = ReadParams

    async def execute(self, params: ReadParams, ctx: ToolContext) -> ToolResult:
        with await open_checked(ctx, params.path, folders=False) as opened:
            path = opened.path
            title, pattern = shown(ctx, path), relative(ctx, path)
            # "Always" for a file that holds secrets grants that file, not every read from then on.
            secret = secrets.is_secret_file(pattern)
            await ctx.ask("read", [pattern], always=[pattern] if secret else ["*"], metadata={"path": str(path)})
            if opened.kind == "dir":
                raise ToolError(f"{title} is a directory, not a file. Use the list tool to see what is in it.")
            if opened.kind == "missing":
                raise ToolError(await asyncio.to_thread(missing_file_message, path, title, workspace_root(ctx),
                                                        lambda found: shown(ctx, found)))
            if opened.kind == "other":
                raise ToolError(f"{title} is not a regular file (a device, FIFO or socket), so it is not read.")
            if opened.kind == "error":
                raise ToolError(open_error(opened, title))
            data = await asyncio.to_thread(opened.read_bytes)
        if secret:
            secrets.learn_file(pattern, data.decode("utf-8", errors="replace"))
        mime = image_type(path, data)
        if mime is not None:
            return _image(data, mime, title, path.name)
        if path.suffix.lower() == ".ipynb":
            return ToolResult(title, notebook_text(data, title),
                              {"kind": "notebook", "path": str(path), **for_person("The notebook's cells and outputs")})
        why = binary_reason(path, data)
        if why is not None:
            raise ToolError(f"Cannot read {title}: it is a binary file ({why}, {len(data):,} bytes). Inspect it "
                            "with a program that understands the format instead, for example through bash.")
        return numbered(data.decode("utf-8", errors="replace"), title, params.offset or 1,
                        min(params.limit or DEFAULT_LIMIT, DEFAULT_LIMIT))


def numbered(text: str, title: str, offset: int, limit: int) -> ToolResult:
    """Lines `offset`.. as `cat -n` shows them, within the line and byte bounds, with a footer saying what next."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines()
    total = len(lines)
    if offset > max(total, 1):
        raise ToolError(f"Offset {offset} is out of range for {title}, which has {total} lines.")
    rows: list[str] = []
    size = 0
    capped = False
    for number in range(offset, min(offset + limit, total + 1)):
        line = lines[number - 1]
        if len(line) > MAX_LINE:
            line = line[:MAX_LINE] + f"… (line cut at {MAX_LINE} characters)"
        row = f"{number:>6}\t{line}"
        size += len(row.encode()) + 1
        if size > MAX_OUTPUT_BYTES and rows:
            capped = True
            break
        rows.append(row)
    last = offset + len(rows) - 1
    if not total:
        footer = "(The file is empty.)"
    elif capped:
        footer = (f"(Output capped at {MAX_OUTPUT_BYTES // 1024} KB: showing lines {offset}-{last} of {total}. "
                  f"Use offset={last + 1} to continue.)")
    elif last < total:
        footer = f"(Showing lines {offset}-{last} of {total}. Use offset={last + 1} to continue.)"
    else:
        footer = f"(End of file: {total} lines.)"
    body = "\n".join(rows)
    said = ("The file is empty" if not total else f"Lines {offset}–{last} of {total}" if capped or offset > 1
            or last < total else f"All {total} line{'s' * (total != 1)}")
    return ToolResult(title, f"{body}\n\n{footer}" if rows else footer,
                      {"lines": total, "shown": [offset, last] if rows else [], "truncated": capped or last < total,
                       **for_person(said, body)})


def image_type(path: Path, data: bytes) -> str | None:
    """The image's mime type, from its first bytes (a misnamed file is still seen for what it is)."""
    for signature, mime in IMAGE_SIGNATURES:
        if data.startswith(signature):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if path.suffix.lower() in IMAGE_SUFFIXES and not data:
        return IMAGE_SUFFIXES[path.suffix.lower()]
    return None


def binary_reason(path: Path, data: bytes) -> str | None:
    if path.suffix.lower() in BINARY_SUFFIXES:
        return f"{path.suffix} files are not text"
    sample = data[:4096]
    if b"\0" in sample:
        return "it contains NUL bytes"
    if sample:
        control = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13, 27))
        if control / len(sample) > 0.3:
            return "most of it is control characters"
    return None


def _image(data: bytes, mime: str, title: str, name: str) -> ToolResult:
    if len(data) > MAX_IMAGE_BYTES:
        raise ToolError(f"{title} is an image of {len(data):,} bytes, over the {MAX_IMAGE_BYTES:,}-byte limit "
                        "for attachments. Make a smaller copy (for example with Pillow) and read that.")
    url = f"data:{mime};base64,{base64.b64encode(data).decode()}"
    return ToolResult(title, f"Image read successfully: {title} ({mime}, {len(data):,} bytes) is attached.",
                      {"kind": "image", "mime": mime, **for_person(f"An image ({mime}, {len(data):,} bytes)", "")},
                      [Attachment(mime=mime, url=url, filename=name)])


SEARCH_LIMIT = 20_000
"""Files looked at when searching the workspace for a missing file's name."""


def missing_file_message(path: Path, title: str, root: Path, show: Callable[[Path], str] | None = None) -> str:
    """`File not found`, with up to three similarly named files: nearby first, then anywhere in the project;
    each as `show` names it (by default relative to `root`)."""
    near: list[Path] = []
    folder = path.parent
    with open_path(folder) as opened:  # the folder itself, not whatever a link swapped in meanwhile points at
        listed = os.listdir(opened.fd) if opened.kind == "dir" and opened.path == folder else []
    if listed:
        names = {name: folder / name for name in listed}
        lowered = {name.lower(): name for name in names}
        close = difflib.get_close_matches(path.name.lower(), list(lowered), n=3, cutoff=0.6)
        near = [names[lowered[c]] for c in close]
    if len(near) < 3 and (path == root or root in path.parents):
        same: list[Path] = []
        try:
            for i, candidate in enumerate(IgnoreRules(root).walk()):
                if i >= SEARCH_LIMIT:
                    break
                if candidate.name.lower() == path.name.lower() and candidate not in near:
                    same.append(candidate)
        except OSError:  # the project's root is being moved about: no suggestions then
            pass
        near += same[: 3 - len(near)]
    named = [show(p) if show is not None else p.relative_to(root).as_posix() if root in p.parents else str(p)
             for p in near]
    hint = ("\nDid you mean one of these?\n" + "\n".join(f"- {s}" for s in named)) if named else ""
    return f"File not found: {title}{hint}"
