"""grep: lines matching a regular expression, grouped by file, most recently changed files first.

ripgrep is used when it is on PATH (fast, and it reads .gitignore files itself); otherwise a pure-Python
search over the same files gives the same answer, more slowly. Both skip binary files, files over
`MAX_FILE_BYTES`, the always-ignored folders, and what .gitignore files ignore.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, Field

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, ask_external, inside, relative, resolve_path, workspace_root
from .support.globpattern import glob_matcher
from .support.ignore import ALWAYS_IGNORED, IgnoreRules

LIMIT = 100
"""Matches shown; more means the pattern should be narrower."""
MAX_LINE = 300
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_COLLECTED = 5000
"""Matches gathered before sorting; beyond this the count is reported as a lower bound."""

RG_LINE_LIMIT = 4 * MAX_FILE_BYTES
"""One JSON line from rg carries a whole matched line, which in a minified file can be megabytes long."""

Match = tuple[Path, int, str]


class GrepParams(BaseModel):
    pattern: str = Field(description=r"Regular expression to search file contents for, e.g. 'def \w+_loss\('")
    path: str | None = Field(None, description="Directory (or single file) to search; defaults to the project root")
    include: str | None = Field(None, description='Only search files matching this glob, e.g. "*.py" or "*.{py,ipynb}"')


class GrepTool(Tool[GrepParams]):
    id = "grep"
    params = GrepParams

    async def execute(self, params: GrepParams, ctx: ToolContext) -> ToolResult:
        if not params.pattern:
            raise ToolError("pattern is empty. Give a regular expression to search for.")
        target = resolve_path(ctx, params.path or ".")
        await ask_external(ctx, target)
        await ctx.ask("grep", [params.pattern], always=["*"], metadata={"path": str(target)})
        if not target.exists():
            raise ToolError(f"Path not found: {relative(ctx, target)}. Give an existing directory or file as path.")
        root = workspace_root(ctx)
        rules = IgnoreRules(target if target.is_dir() else target.parent, root if inside(target, root) else None)
        rg = shutil.which("rg")
        if rg:
            matches, complete = await search_rg(rg, params.pattern, target, params.include)
        else:
            try:
                regex = re.compile(params.pattern)
            except re.error as exc:
                raise ToolError(f"Invalid regular expression {params.pattern!r}: {exc}. Escape special characters "
                                r"such as ( ) [ ] . with a backslash to match them literally.") from None
            matches, complete = await asyncio.to_thread(collect, search_python(regex, target, params.include, rules))
        text = format_matches(order(matches), lambda p: relative(ctx, p), complete)
        return ToolResult(params.pattern, text, {"matches": len(matches), "complete": complete,
                                                 "engine": "rg" if rg else "python"})


def collect(found: Iterator[Match]) -> tuple[list[Match], bool]:
    matches: list[Match] = []
    for match in found:
        if len(matches) >= MAX_COLLECTED:
            return matches, False
        matches.append(match)
    return matches, True


def search_python(regex: re.Pattern[str], target: Path, include: str | None, rules: IgnoreRules) -> Iterator[Match]:
    included = glob_matcher(include) if include else None
    files = [target] if target.is_file() else rules.walk()
    for path in files:
        if included is not None and not included(PurePosixPath(path.relative_to(rules.top).as_posix())):
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


async def search_rg(rg: str, pattern: str, target: Path, include: str | None) -> tuple[list[Match], bool]:
    # The same files as the fallback: .gitignore even outside a git checkout, hidden files, the usual skips.
    args = [rg, "--json", "--no-messages", "--hidden", "--no-require-git", "--no-ignore-global", "--no-config",
            "--max-filesize", str(MAX_FILE_BYTES)]
    for skipped in ALWAYS_IGNORED:
        args += ["--glob", "!" + skipped.rstrip("/")]
    if include:
        args += ["--glob", include]
    args += ["--regexp", pattern, "--", str(target)]
    proc = await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE, limit=RG_LINE_LIMIT)
    found: list[Match] = []
    complete = True
    try:
        assert proc.stdout is not None and proc.stderr is not None
        async for raw in proc.stdout:
            item = json.loads(raw)
            if item.get("type") != "match":
                continue
            if len(found) >= MAX_COLLECTED:
                complete = False
                proc.kill()
                break
            data = item["data"]
            text = data["lines"].get("text")
            if text is None:  # a line that is not valid UTF-8 comes base64-encoded
                text = "(line is not valid UTF-8)"
            found.append((Path(data["path"]["text"]), data["line_number"], text.rstrip("\r\n")))
        err = await proc.stderr.read()
        code = await proc.wait()
    except BaseException:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()
        raise
    if complete and code not in (0, 1):
        message = err.decode(errors="replace").strip()
        raise ToolError(f"The search failed: {message}. If the regular expression is invalid, escape special "
                        r"characters such as ( ) [ ] . with a backslash to match them literally.")
    return found, complete


def order(matches: list[Match]) -> list[Match]:
    """Files most recently modified first (what was just edited is likely what matters), lines in order."""
    mtimes: dict[Path, float] = {}
    for path, _, _ in matches:
        if path not in mtimes:
            try:
                mtimes[path] = path.stat().st_mtime
            except OSError:
                mtimes[path] = 0.0
    return sorted(matches, key=lambda m: (-mtimes[m[0]], str(m[0]), m[1]))


def format_matches(matches: list[Match], name: Callable[[Path], str] = str, complete: bool = True) -> str:
    if not matches:
        return "No matches found."
    out: list[str] = []
    current: Path | None = None
    for path, number, line in matches[:LIMIT]:
        if path != current:
            if current is not None:
                out.append("")
            out.append(f"{name(path)}:")
            current = path
        text = line.strip()
        out.append(f"  {number}: {text if len(text) <= MAX_LINE else text[:MAX_LINE] + '…'}")
    total = f"{len(matches)}" if complete else f"more than {MAX_COLLECTED}"
    if len(matches) > LIMIT or not complete:
        out.append(f"\n(Showing {LIMIT} of {total} matches. Use a more specific pattern, path or include to see "
                   "the others.)")
    return "\n".join(out)
