"""glob: files whose path matches a pattern, newest first."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, ask_external, relative, resolve_path
from .ignore import ignore_spec

LIMIT = 100


class GlobParams(BaseModel):
    pattern: str = Field(description="Glob pattern such as **/*.py or notebooks/*.ipynb")
    path: str | None = Field(None, description="Directory to search in; defaults to the project root")


class GlobTool(Tool[GlobParams]):
    id = "glob"
    params = GlobParams

    async def execute(self, params: GlobParams, ctx: ToolContext) -> ToolResult:
        await ctx.ask("glob", [params.pattern], always=["*"])
        folder = resolve_path(ctx, params.path or ".")
        await ask_external(ctx, folder)
        if not folder.is_dir():
            raise ToolError(f"{folder} is not a directory.")
        spec = ignore_spec(folder)
        pattern = params.pattern if "/" in params.pattern else f"**/{params.pattern}"
        matched = [p for p in folder.glob(pattern) if p.is_file()
                   and not spec.match_file(p.relative_to(folder).as_posix())]
        matched.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        shown = matched[:LIMIT]
        body = "\n".join(str(p) for p in shown) or "No files found."
        if len(matched) > LIMIT:
            body += f"\n\n(Showing {LIMIT} of {len(matched)} files, newest first; narrow the pattern.)"
        return ToolResult(relative(ctx, folder) or ".", body, {"count": len(matched)})
