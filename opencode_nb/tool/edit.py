"""edit: replace one exact piece of a file with another; the person sees the diff before it is written.

Models copy text from `read` output imperfectly: trailing spaces dropped, a block quoted at the wrong
indentation, spacing changed inside a line. When the exact text is not found, tolerant matchers are tried
from the strictest to the loosest; the first that finds anything decides, and it must find exactly one
place (or `replace_all` must be set), so a fallback never guesses between candidates:

1. line-trimmed: whole lines equal once trailing whitespace is trimmed;
2. indentation-flexible: a block equal once each side's common indentation is removed; the new text is
   re-indented to where the block really sits;
3. whitespace-normalized: the same words with any whitespace between them, even inside a line.

A CRLF file is matched as if it had LF endings and keeps its CRLF endings.

The file is opened once (`files/textfile.changing`): a path outside the project asks
`external_directory` before the file is even opened, so no answer ("not found", "could not find
old_string") says anything about it until that is allowed. A change under `.git` also asks `git_internals`,
one to a file that steers the agents `agent_config`, one through a hard link `external_directory`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, Field

from ..diagnostics.service import Diagnostics
from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, for_person, relative, shown
from .files.access import ask_agent_config, ask_git_internals, ask_hard_link
from .files.textfile import changing, diff_counts, read_text, require_file, unified_diff, write_text
from .support.checks import checked_file


class EditParams(BaseModel):
    path: str = Field(description="Path of the file to change, relative to the working directory or absolute")
    old_string: str = Field(description="The exact text to replace, copied from the file (empty to create a file)")
    new_string: str = Field(description="The text to put in its place (must differ from old_string)")
    replace_all: bool = Field(False, description="Replace every occurrence of old_string, not just one unique match")


class EditTool(Tool[EditParams]):
    id = "edit"
    params = EditParams

    def __init__(self, diagnostics: Diagnostics | None = None) -> None:
        self.diagnostics = diagnostics
        """Formats and checks the edited file (`opencode_nb.diagnostics`); None: neither."""

    async def execute(self, params: EditParams, ctx: ToolContext) -> ToolResult:
        if params.old_string == params.new_string:
            raise ToolError("old_string and new_string are identical: there is nothing to change. Put the "
                            "replacement text in new_string.")
        async with changing(ctx, params.path) as opened:
            path = opened.path
            title, pattern = shown(ctx, path), relative(ctx, path)
            require_file(opened, title, missing_ok=params.old_string == "")
            old = read_text(opened, title)
            if params.old_string == "":
                if old.strip():
                    raise ToolError(f"old_string is empty but {title} already exists and is not empty. Give the "
                                    "exact text to replace, or use write to replace the whole file on purpose.")
                new, how = params.new_string, "created"
            else:
                new, how = apply_edit(old, params.old_string, params.new_string, params.replace_all, title)
            diff = unified_diff(title, old, new)
            await ctx.ask("edit", [pattern], always=["*"], metadata={"path": str(path), "diff": diff})
            await ask_git_internals(ctx, path, pattern, diff)
            await ask_agent_config(ctx, path, title, diff)
            await ask_hard_link(ctx, opened, title)
            await write_text(opened, new, title)
        after = await checked_file(self.diagnostics, ctx, path, new, title)
        if after.content is not None:  # formatted: the diff is of what the file now holds
            diff = unified_diff(title, old, after.content)
        added, removed = diff_counts(diff)
        note = "" if how in ("exact", "created") else f" (old_string matched after ignoring {MATCHER_NOTES[how]})"
        verb = "Created" if how == "created" else "Edited"
        return ToolResult(title, f"{verb} {title}: +{added} -{removed} lines.{note}{after.for_model()}",
                          {"path": str(path), "diff": diff, "additions": added, "deletions": removed, "match": how,
                           **after.metadata(), **for_person(f"{verb} {title}: +{added} −{removed} lines", "")})


def apply_edit(content: str, old: str, new: str, replace_all: bool = False, title: str = "the file") -> tuple[str, str]:
    """The content after the edit, and which matcher found `old` (`exact` or a fallback's name).

    Raises:
        ToolError: `old` is not found, or found in several places without `replace_all`.
    """
    crlf = "\r\n" in content
    if crlf:
        content, old, new = (s.replace("\r\n", "\n") for s in (content, old, new))
    count = content.count(old)
    if count == 1 or (count > 1 and replace_all):
        result, how = content.replace(old, new), "exact"
    elif count > 1:
        raise ToolError(_ambiguous(count, title))
    else:
        result, how = _fallback(content, old, new, replace_all, title)
    return (result.replace("\n", "\r\n") if crlf else result), how


def _fallback(content: str, old: str, new: str, replace_all: bool, title: str) -> tuple[str, str]:
    for name, find in MATCHERS:
        spans = find(content, old)
        if not spans:
            continue
        if len(spans) > 1 and not replace_all:
            raise ToolError(_ambiguous(len(spans), title, f" (ignoring {MATCHER_NOTES[name]})"))
        for span in sorted(spans, key=lambda s: s.start, reverse=True):
            content = content[:span.start] + span.replacement(new) + content[span.end:]
        return content, name
    hint = ""
    if all(_NUMBERED.match(line) for line in old.splitlines() if line.strip()):
        hint = " old_string seems to include the line numbers of read's output: leave them out."
    raise ToolError(f"Could not find old_string in {title}. It must match the file's text exactly, including "
                    f"whitespace and indentation.{hint} Read the file again (it may have changed) and copy the "
                    "text to replace from it.")


def _ambiguous(count: int, title: str, how: str = "") -> str:
    return (f"old_string matches {count} places in {title}{how}. Add more surrounding lines to old_string so "
            "that it matches exactly one, or set replace_all to change every occurrence.")


_NUMBERED = re.compile(r"^\s*\d+\t")


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    indent_from: str = ""
    indent_to: str = ""

    def replacement(self, new: str) -> str:
        """`new`, moved from old_string's indentation to the indentation found in the file."""
        if self.indent_from == self.indent_to:
            return new
        lines = []
        for line in new.split("\n"):
            if line.strip() and line.startswith(self.indent_from):
                line = self.indent_to + line[len(self.indent_from):]
            lines.append(line)
        return "\n".join(lines)


def _line_windows(content: str, old: str, same: Callable[[list[str], list[str]], bool]) -> list[Span]:
    """Spans of whole-line windows of `content` that `same` says equal `old`'s lines."""
    wanted = old.strip("\n").split("\n")
    if not any(line.strip() for line in wanted):
        return []
    lines = content.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    found: list[Span] = []
    size = len(wanted)
    i = 0
    while i + size <= len(lines):
        window = lines[i:i + size]
        if same(window, wanted):
            end = starts[i + size] - 1  # the end of the window's last line, before its newline
            if old.endswith("\n") and end < len(content):
                end += 1
            found.append(Span(starts[i], end, _indent(wanted), _indent(window)))
            i += size  # matches do not overlap
        else:
            i += 1
    return found


def _trimmed(window: list[str], wanted: list[str]) -> bool:
    return [w.rstrip() for w in window] == [w.rstrip() for w in wanted]


def _dedented(window: list[str], wanted: list[str]) -> bool:
    a, b = _indent(window), _indent(wanted)
    return [w[len(a):].rstrip() for w in window] == [w[len(b):].rstrip() for w in wanted]


def _words(content: str, old: str) -> list[Span]:
    tokens = old.split()
    if not tokens:
        return []
    pattern = re.compile(r"\s+".join(re.escape(t) for t in tokens))
    return [Span(m.start(), m.end()) for m in pattern.finditer(content)]


def _indent(lines: list[str]) -> str:
    widths = [line[: len(line) - len(line.lstrip())] for line in lines if line.strip()]
    return min(widths, key=len) if widths else ""


MATCHERS: list[tuple[str, Callable[[str, str], list[Span]]]] = [
    ("line-trimmed", lambda content, old: _line_windows(content, old, _trimmed)),
    ("indentation-flexible", lambda content, old: _line_windows(content, old, _dedented)),
    ("whitespace-normalized", _words),
]
MATCHER_NOTES = {
    "line-trimmed": "trailing whitespace",
    "indentation-flexible": "indentation; new_string was re-indented to match",
    "whitespace-normalized": "differences in whitespace",
}
