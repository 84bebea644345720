"""write: create a file, or replace one whole; the person sees the diff before it is written."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, ask_external, relative, resolve_path
from .support.textfile import diff_counts, file_lock, read_text, unified_diff, write_text


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
            raise ToolError(f"{title} is a directory. Give the path of a file to write.")
        async with file_lock(path):
            existed = path.is_file()
            try:
                old = read_text(path, title) if existed else ""
                diff = unified_diff(title, old, params.content)
            except ToolError:  # not text: it is replaced whole, there is no line diff to show
                old, diff = "", f"(the non-text file {title} is replaced by {len(params.content)} characters of text)\n"
            await ask_external(ctx, path, is_dir=False)
            await ctx.ask("edit", [title], always=["*"], metadata={"path": str(path), "diff": diff})
            write_text(path, params.content)
        added, removed = diff_counts(diff)
        lines = len(params.content.splitlines())
        if not existed:
            text = f"Created {title} ({lines} line{'s' if lines != 1 else ''})."
        elif old == params.content:
            text = f"{title} already had exactly this content; nothing changed."
        else:
            text = f"Wrote {title} ({lines} lines): +{added} -{removed} lines compared with before."
        return ToolResult(title, text, {"path": str(path), "diff": diff, "additions": added, "deletions": removed,
                                        "created": not existed})
