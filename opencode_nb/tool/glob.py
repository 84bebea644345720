"""glob: files whose path matches a pattern, newest first.

The folder is opened once and walked through that descriptor without following links (`files/ignore`),
as ripgrep's file listing does: a link, or a folder swapped for one mid-walk, never lists what is outside.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, Field

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, for_person, inside, shown, workspace_root
from .files.access import open_checked
from .files.globpattern import glob_matcher, split_absolute
from .files.ignore import IgnoreRules
from .files.textfile import open_error

LIMIT = 100


class GlobParams(BaseModel):
    pattern: str = Field(description='Glob pattern such as "**/*.py", "notebooks/*.ipynb" or "*.{csv,parquet}"')
    path: str | None = Field(None, description="Directory to search in; defaults to the working directory")


class GlobTool(Tool[GlobParams]):
    id = "glob"
    params = GlobParams

    async def execute(self, params: GlobParams, ctx: ToolContext) -> ToolResult:
        pattern, base = params.pattern.strip(), params.path or "."
        if not pattern:
            raise ToolError('pattern is empty. Give a glob pattern such as "**/*.py".')
        if pattern.startswith(("/", "~")):
            base, pattern = split_absolute(str(Path(pattern).expanduser()))
        matches = glob_matcher(pattern)  # a malformed pattern is the model's to fix, before anything is looked at
        with await open_checked(ctx, base, folders=True, reads=False) as opened:
            folder = opened.path
            await ctx.ask("glob", [params.pattern], always=["*"], metadata={"path": str(folder)})
            if opened.kind == "error":
                raise ToolError(open_error(opened, shown(ctx, folder)))
            if opened.kind != "dir":
                raise ToolError(f"Directory not found: {shown(ctx, folder)}. Give an existing directory as path.")
            root = workspace_root(ctx)
            rules = IgnoreRules(folder, root if inside(folder, root) else None)
            matched = await asyncio.to_thread(find_files, rules, matches, opened.fd)
        names = [shown(ctx, p) for p in matched[:LIMIT]]
        text = "\n".join(names) or f"No files match {params.pattern} in {shown(ctx, folder)}."
        count = f"{len(matched)} file{'s' * (len(matched) != 1)} match"
        said = f"{count}; showing the {LIMIT} most recently modified" if len(matched) > LIMIT else count
        person = for_person(said if matched else text.removesuffix("."), "\n".join(names))
        if len(matched) > LIMIT:
            text += (f"\n\n(Showing the {LIMIT} most recently modified of {len(matched)} files. Use a more specific "
                     "pattern or path to see the others.)")
        return ToolResult(shown(ctx, folder), text, {"count": len(matched), "path": str(folder), **person})


def find_files(rules: IgnoreRules, matches: Callable[[PurePosixPath], bool], top_fd: int | None = None) -> list[Path]:
    """Files under `rules.top` that `matches`, newest first (then by path, for a stable order).

    Times are the files' own (`lstat`): a walk yields no links, and a name swapped for one meanwhile must
    not lend it the time of a file outside the project.
    """
    found: list[tuple[float, str, Path]] = []
    for path in rules.walk(top_fd):
        if matches(PurePosixPath(path.relative_to(rules.top).as_posix())):
            try:
                mtime = path.lstat().st_mtime
            except OSError:
                continue
            found.append((-mtime, str(path), path))
    found.sort()
    return [path for _, _, path in found]
