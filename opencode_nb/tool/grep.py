"""grep: lines matching a regular expression, grouped by file.

ripgrep is used when it is installed (fast, and it reads .gitignore itself); otherwise a pure-Python
search over the same set of files gives the same answer, more slowly.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path

from pydantic import BaseModel, Field

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, ask_external, resolve_path
from .ignore import ALWAYS_IGNORED, ignore_spec, walk_files

LIMIT = 100
MAX_LINE = 300
MAX_FILE_BYTES = 5 * 1024 * 1024

Match = tuple[Path, int, str]


class GrepParams(BaseModel):
    pattern: str = Field(description="Regular expression to search file contents for")
    path: str | None = Field(None, description="Directory (or file) to search; defaults to the project root")
    include: str | None = Field(None, description='Only search files matching this glob, e.g. "*.py" or "*.{ts,tsx}"')


class GrepTool(Tool[GrepParams]):
    id = "grep"
    params = GrepParams

    async def execute(self, params: GrepParams, ctx: ToolContext) -> ToolResult:
        await ctx.ask("grep", [params.pattern], always=["*"])
        target = resolve_path(ctx, params.path or ".")
        await ask_external(ctx, target)
        if not target.exists():
            raise ToolError(f"{target} does not exist.")
        try:
            regex = re.compile(params.pattern)
        except re.error as exc:
            raise ToolError(f"Invalid regular expression {params.pattern!r}: {exc}.") from None
        rg = shutil.which("rg")
        if rg:
            matches = await search_rg(rg, params.pattern, target, params.include)
        else:
            matches = await asyncio.to_thread(lambda: list(search_python(regex, target, params.include)))
        return ToolResult(params.pattern, format_matches(matches), {"matches": len(matches), "engine":
                                                                    "rg" if rg else "python"})


def _included(path: Path, include: str | None) -> bool:
    if not include:
        return True
    options = _expand_braces(include)
    return any(fnmatch(path.name, o) or fnmatch(path.as_posix(), o) for o in options)


def _expand_braces(pattern: str) -> list[str]:
    match = re.search(r"\{([^{}]*)\}", pattern)
    if not match:
        return [pattern]
    return [o for alt in match.group(1).split(",")
            for o in _expand_braces(pattern[: match.start()] + alt + pattern[match.end():])]


def search_python(regex: re.Pattern[str], target: Path, include: str | None) -> Iterator[Match]:
    files = [target] if target.is_file() else walk_files(target, ignore_spec(target))
    for path in files:
        if not _included(path, include):
            continue
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if regex.search(line):
                yield path, number, line


async def search_rg(rg: str, pattern: str, target: Path, include: str | None) -> list[Match]:
    # Same files as the fallback: .gitignore even outside a git checkout, hidden files, the usual skips.
    args = [rg, "--json", "--no-messages", "--hidden", "--no-require-git", "--max-filesize", f"{MAX_FILE_BYTES}"]
    for skipped in ALWAYS_IGNORED:
        args += ["--glob", "!" + skipped.rstrip("/")]
    if include:
        args += ["--glob", include]
    args += ["--", pattern, str(target)]
    proc = await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await proc.communicate()
    except BaseException:
        proc.kill()
        await proc.wait()
        raise
    if proc.returncode not in (0, 1):
        raise ToolError(f"rg failed: {err.decode(errors='replace').strip()}")
    found: list[Match] = []
    for raw in out.splitlines():
        item = json.loads(raw)
        if item.get("type") == "match":
            data = item["data"]
            text = data["lines"].get("text", "")
            found.append((Path(data["path"]["text"]), data["line_number"], text.rstrip("\n")))
    found.sort(key=lambda m: (str(m[0]), m[1]))
    return found


def format_matches(matches: list[Match]) -> str:
    if not matches:
        return "No matches found."
    out: list[str] = []
    current: Path | None = None
    for path, number, line in matches[:LIMIT]:
        if path != current:
            out.append(f"{'' if current is None else chr(10)}{path}:")
            current = path
        text = line.strip()
        out.append(f"  {number}: {text if len(text) <= MAX_LINE else text[:MAX_LINE] + '…'}")
    if len(matches) > LIMIT:
        out.append(f"\n(Showing {LIMIT} of {len(matches)} matches; narrow the pattern, path or include.)")
    return "\n".join(out)
