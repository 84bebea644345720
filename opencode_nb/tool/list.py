"""list: a directory as an indented tree, without build and cache folders or what .gitignore ignores.

The folder is opened once and walked through that descriptor without following links (`files/ignore`),
so neither a link inside nor a folder swapped for one mid-walk shows what is outside the project.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel, Field

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, for_person, inside, relative, shown, workspace_root
from .files.access import open_checked
from .files.ignore import IgnoreRules
from .files.safeopen import Opened
from .files.textfile import open_error

LIMIT = 100
"""Files shown; a bigger tree is better explored folder by folder or with glob."""


class ListParams(BaseModel):
    path: str = Field(".", description="Directory to list, relative to the working directory or absolute")
    ignore: list[str] = Field(default_factory=list,
                              description='Extra gitignore-style patterns to skip, e.g. ["*.csv", "data/"]')


class ListTool(Tool[ListParams]):
    id = "list"
    params = ListParams

    async def execute(self, params: ListParams, ctx: ToolContext) -> ToolResult:
        with await open_checked(ctx, params.path, folders=True, reads=False) as opened:
            folder = opened.path
            title = shown(ctx, folder)
            await ctx.ask("list", [relative(ctx, folder)], always=["*"], metadata={"path": str(folder)})
            require_folder(opened, title)
            root = workspace_root(ctx)
            rules = IgnoreRules(folder, root if inside(folder, root) else None, params.ignore)
            files, total = await asyncio.to_thread(_collect, rules, opened.fd)
        text = f"{folder}/\n" + tree(files)
        count = f"{total} file{'s' * (total != 1)}"
        person = for_person(f"{count}; showing the first {LIMIT}" if total > LIMIT else count, text.rstrip("\n"))
        if total > LIMIT:
            text += (f"\n\n(Showing the first {LIMIT} of {total} files. List a subfolder, or use glob to find files "
                     "by name.)")
        elif not files:
            text += "  (no files)"
        return ToolResult(title, text.rstrip("\n"), {"count": total, "shown": len(files), **person})


def require_folder(opened: Opened, title: str) -> None:
    """Raise what the model reads when the path it gave is not a folder (asked only once it may know)."""
    if opened.kind == "dir":
        return
    if opened.kind == "missing":
        raise ToolError(f"Directory not found: {title}. List its parent folder to see what is there.")
    if opened.kind in ("file", "other"):
        raise ToolError(f"{title} is a file, not a directory. Use the read tool to see its content.")
    raise ToolError(open_error(opened, title))


def _collect(rules: IgnoreRules, top_fd: int | None) -> tuple[list[Path], int]:
    files: list[Path] = []
    total = 0
    for path in rules.walk(top_fd):
        total += 1
        if len(files) < LIMIT:
            files.append(path.relative_to(rules.top))
    return files, total


def tree(files: list[Path]) -> str:
    """Files as an indented tree: each folder once, its files under it, two spaces per level."""
    lines: list[str] = []
    shown: set[tuple[str, ...]] = set()
    for rel in files:
        for depth in range(1, len(rel.parts)):
            key = rel.parts[:depth]
            if key not in shown:
                shown.add(key)
                lines.append(f"{'  ' * depth}{key[-1]}/")
        lines.append(f"{'  ' * len(rel.parts)}{rel.name}")
    return "\n".join(lines)
