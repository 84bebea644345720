"""glob: files whose path matches a pattern, newest first."""

from __future__ import annotations

import asyncio
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, Field

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, ask_external, inside, relative, resolve_path, workspace_root
from .support.globpattern import glob_matcher, split_absolute
from .support.ignore import IgnoreRules

LIMIT = 100


class GlobParams(BaseModel):
    pattern: str = Field(description='Glob pattern such as "**/*.py", "notebooks/*.ipynb" or "*.{csv,parquet}"')
    path: str | None = Field(None, description="Directory to search in; defaults to the project root")


class GlobTool(Tool[GlobParams]):
    id = "glob"
    params = GlobParams

    async def execute(self, params: GlobParams, ctx: ToolContext) -> ToolResult:
        pattern, base = params.pattern.strip(), params.path or "."
        if not pattern:
            raise ToolError('pattern is empty. Give a glob pattern such as "**/*.py".')
        if pattern.startswith(("/", "~")):
            base, pattern = split_absolute(str(Path(pattern).expanduser()))
        folder = resolve_path(ctx, base)
        await ask_external(ctx, folder, is_dir=True)
        await ctx.ask("glob", [params.pattern], always=["*"], metadata={"path": str(folder)})
        if not folder.is_dir():
            raise ToolError(f"Directory not found: {relative(ctx, folder)}. Give an existing directory as path.")
        root = workspace_root(ctx)
        rules = IgnoreRules(folder, root if inside(folder, root) else None)
        matched = await asyncio.to_thread(find_files, rules, pattern)
        shown = [relative(ctx, p) for p in matched[:LIMIT]]
        text = "\n".join(shown) or f"No files match {params.pattern} in {relative(ctx, folder)}."
        if len(matched) > LIMIT:
            text += (f"\n\n(Showing the {LIMIT} most recently modified of {len(matched)} files. Use a more specific "
                     "pattern or path to see the others.)")
        return ToolResult(relative(ctx, folder), text, {"count": len(matched), "path": str(folder)})


def find_files(rules: IgnoreRules, pattern: str) -> list[Path]:
    """Files under `rules.top` matching `pattern`, newest first (then by path, for a stable order)."""
    matches = glob_matcher(pattern)
    found: list[tuple[float, str, Path]] = []
    for path in rules.walk():
        if matches(PurePosixPath(path.relative_to(rules.top).as_posix())):
            try:
                mtime = path.stat().st_mtime
            except OSError:
                continue
            found.append((-mtime, str(path), path))
    found.sort()
    return [path for _, _, path in found]
