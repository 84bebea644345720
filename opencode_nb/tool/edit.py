"""edit: replace one exact piece of a file with another.

Models copy text from `read` output imperfectly: trailing spaces dropped, tabs turned into spaces,
a block quoted at the wrong indentation. When the exact text is not found, a few tolerant matchers are
tried in order of strictness; each must still find exactly one place, so a fallback never guesses.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from pydantic import BaseModel, Field

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, ask_external, relative, resolve_path
from .write import unified_diff


class EditParams(BaseModel):
    path: str = Field(description="Path of the file to change, relative to the project root or absolute")
    old_string: str = Field(description="The exact text to replace (empty to create a new file)")
    new_string: str = Field(description="The text to put in its place")
    replace_all: bool = Field(False, description="Replace every occurrence instead of requiring exactly one")


class EditTool(Tool[EditParams]):
    id = "edit"
    params = EditParams

    async def execute(self, params: EditParams, ctx: ToolContext) -> ToolResult:
        path = resolve_path(ctx, params.path)
        title = relative(ctx, path)
        if params.old_string == params.new_string:
            raise ToolError("old_string and new_string are the same: there is nothing to change.")
        if params.old_string == "":
            if path.exists() and path.read_text(encoding="utf-8", errors="replace").strip():
                raise ToolError(f"{title} already exists and is not empty: give the text to replace as old_string.")
            old, new = "", params.new_string
        else:
            if not path.is_file():
                raise ToolError(f"File not found: {path}. To create a file, use write (or edit with an empty "
                                "old_string).")
            old = path.read_text(encoding="utf-8")
            new = apply_edit(old, params.old_string, params.new_string, params.replace_all, title)
        diff = unified_diff(title, old, new)
        await ctx.ask("edit", [title], always=["*"], metadata={"path": str(path), "diff": diff})
        await ask_external(ctx, path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(new, encoding="utf-8")
        added = sum(1 for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++"))
        removed = sum(1 for line in diff.splitlines() if line.startswith("-") and not line.startswith("---"))
        return ToolResult(title, f"Edited {title}: +{added} -{removed} lines.", {"diff": diff})


def apply_edit(content: str, old: str, new: str, replace_all: bool, title: str = "the file") -> str:
    count = content.count(old)
    if count == 1 or (count > 1 and replace_all):
        return content.replace(old, new)
    if count > 1:
        raise ToolError(f"old_string occurs {count} times in {title}. Include more surrounding lines to make it "
                        "unique, or set replace_all to change every occurrence.")
    for matcher in (_trimmed_lines, _collapsed_whitespace, _any_indentation):
        spans = _find_blocks(content, old, matcher)
        if len(spans) == 1:
            start, end, indent_from, indent_to = spans[0]
            replacement = _reindent(new, indent_from, indent_to)
            return content[:start] + replacement + content[end:]
        if len(spans) > 1:
            raise ToolError(f"old_string was not found exactly, and {len(spans)} places in {title} match it loosely. "
                            "Read the file again and copy the exact text, with more context lines.")
    raise ToolError(f"old_string was not found in {title}. Read the file again and copy the exact text to "
                    "replace, including whitespace and indentation.")


Matcher = Callable[[list[str], list[str]], bool]


def _trimmed_lines(window: list[str], wanted: list[str]) -> bool:
    return [w.rstrip() for w in window] == [w.rstrip() for w in wanted]


def _collapsed_whitespace(window: list[str], wanted: list[str]) -> bool:
    return [" ".join(w.split()) for w in window] == [" ".join(w.split()) for w in wanted]


def _any_indentation(window: list[str], wanted: list[str]) -> bool:
    return textwrap.dedent("\n".join(window)).splitlines() == textwrap.dedent("\n".join(wanted)).splitlines()


def _find_blocks(content: str, old: str, matcher: Matcher) -> list[tuple[int, int, str, str]]:
    """Character spans of whole-line windows matching `old`, with the indentation of `old` and of the window."""
    wanted = old.strip("\n").splitlines()
    if not wanted:
        return []
    lines = content.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    found = []
    for i in range(len(lines) - len(wanted) + 1):
        window = [line.rstrip("\r\n") for line in lines[i:i + len(wanted)]]
        if matcher(window, wanted):
            end = starts[i + len(wanted)]
            if lines[i + len(wanted) - 1].endswith("\n") and not old.endswith("\n"):
                end -= 1
            found.append((starts[i], end, _indent(wanted), _indent(window)))
    return found


def _indent(lines: list[str]) -> str:
    widths = [line[: len(line) - len(line.lstrip())] for line in lines if line.strip()]
    return min(widths, key=len) if widths else ""


def _reindent(text: str, indent_from: str, indent_to: str) -> str:
    if indent_from == indent_to:
        return text
    out = []
    for line in text.split("\n"):
        if line.startswith(indent_from):
            line = indent_to + line[len(indent_from):]
        out.append(line)
    return "\n".join(out)
