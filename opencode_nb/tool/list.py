"""list: a directory as an indented tree."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, ask_external, relative, resolve_path
from .ignore import ignore_spec, walk_files

LIMIT = 100


class ListParams(BaseModel):
    path: str = Field(".", description="Directory to list, relative to the project root or absolute")
    ignore: list[str] = Field(default_factory=list, description="Extra gitignore-style patterns to skip")


class ListTool(Tool[ListParams]):
    id = "list"
    params = ListParams

    async def execute(self, params: ListParams, ctx: ToolContext) -> ToolResult:
        folder = resolve_path(ctx, params.path)
        title = relative(ctx, folder) or "."
        await ctx.ask("list", [title], always=["*"])
        await ask_external(ctx, folder)
        if not folder.is_dir():
            raise ToolError(f"{folder} is not a directory." + (" Use read for files." if folder.exists() else ""))
        files = []
        total = 0
        for path in walk_files(folder, ignore_spec(folder, params.ignore)):
            total += 1
            if len(files) < LIMIT:
                files.append(path.relative_to(folder))
        lines = [f"{folder}/"]
        shown_dirs: set[str] = set()
        for rel in files:
            for depth, part in enumerate(rel.parts[:-1]):
                key = "/".join(rel.parts[: depth + 1])
                if key not in shown_dirs:
                    shown_dirs.add(key)
                    lines.append(f"{'  ' * (depth + 1)}{part}/")
            lines.append(f"{'  ' * len(rel.parts)}{rel.name}")
        if total > LIMIT:
            lines.append(f"\n(Showing the first {LIMIT} of {total} files; list a subdirectory or use glob.)")
        return ToolResult(title, "\n".join(lines), {"count": total, "truncated": total > LIMIT})
