"""write: create a file, or replace one whole; the person sees the diff before it is written.

The file is opened once and everything (the outside-the-project check, the diff, the write) uses what was
opened (`files/textfile.changing`); a write into `.git` also asks `git_internals`, one to a file that steers
the agents `agent_config`, one through a hard link `external_directory` (`files/access`).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..diagnostics.service import Diagnostics
from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, for_person, relative, shown
from .files.access import ask_agent_config, ask_git_internals, ask_hard_link
from .files.textfile import changing, diff_counts, read_text, require_file, unified_diff, write_text
from .support.checks import checked_file


class WriteParams(BaseModel):
    path: str = Field(description="Path of the file to write, relative to the working directory or absolute")
    content: str = Field(description="The complete new content of the file")


class WriteTool(Tool[WriteParams]):
    id = "write"
    params = WriteParams

    def __init__(self, diagnostics: Diagnostics | None = None) -> None:
        self.diagnostics = diagnostics
        """Formats and checks what was written (`opencode_nb.diagnostics`); None: neither."""

    async def execute(self, params: WriteParams, ctx: ToolContext) -> ToolResult:
        async with changing(ctx, params.path) as opened:
            path = opened.path
            title, pattern = shown(ctx, path), relative(ctx, path)
            require_file(opened, title, missing_ok=True)
            existed = opened.kind == "file"
            try:
                old = read_text(opened, title)
                diff = unified_diff(title, old, params.content)
            except ToolError:  # not text: it is replaced whole, there is no line diff to show
                old, diff = "", f"(the non-text file {title} is replaced by {len(params.content)} characters of text)\n"
            await ctx.ask("edit", [pattern], always=["*"], metadata={"path": str(path), "diff": diff})
            await ask_git_internals(ctx, path, pattern, diff)
            await ask_agent_config(ctx, path, title, diff)
            await ask_hard_link(ctx, opened, title)
            await write_text(opened, params.content, title)
        after = await checked_file(self.diagnostics, ctx, path, params.content, title)
        if after.content is not None:  # formatted: the diff is of what the file now holds
            diff = unified_diff(title, old, after.content)
        added, removed = diff_counts(diff)
        lines = len((after.content or params.content).splitlines())
        if not existed:
            text = f"Created {title} ({lines} line{'s' if lines != 1 else ''})."
        elif old == params.content:
            text = f"{title} already had exactly this content; nothing changed."
        else:
            text = f"Wrote {title} ({lines} lines): +{added} -{removed} lines compared with before."
        return ToolResult(title, text + after.for_model(), {
            "path": str(path), "diff": diff, "additions": added, "deletions": removed, "created": not existed,
            **after.metadata(), **for_person(text.rstrip("."), "")})
