"""write: create or replace a whole file."""

from __future__ import annotations

import difflib

from pydantic import BaseModel, Field

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, ask_external, relative, resolve_path


class WriteParams(BaseModel):
    path: str = Field(description="Path of the file to write, relative to the project root or absolute")
    content: str = Field(description="The complete new content of the file")


class WriteTool(Tool[WriteParams]):
    id = "write"
    params = WriteParams

    async def execute(self, params: WriteParams, ctx: ToolContext) -> ToolResult:
        path = resolve_path(ctx, params.path)
        title = relative(ctx, path)
        if path.is_dir():
            raise ToolError(f"{title} is a directory; give the path of a file.")
        old = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        diff = unified_diff(title, old, params.content)
        await ctx.ask("edit", [title], always=["*"], metadata={"path": str(path), "diff": diff})
        await ask_external(ctx, path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(params.content, encoding="utf-8")
        verb = "Updated" if old else "Created"
        return ToolResult(title, f"{verb} {title} ({len(params.content.splitlines())} lines).", {"diff": diff})


def unified_diff(name: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))
