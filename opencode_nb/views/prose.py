"""Text the kernel prints for a person (help, listings, notices, errors) as HTML that the page wraps between words.

JupyterLab styles every `pre` of an output with `word-break: break-all`, so plain text breaks wherever the
line reaches the edge ("agen / t"). The text is also written for a terminal: lines broken by hand near 110
columns, explanations in a second column under their usage. In a narrower notebook such a line is wrapped
once more by the page and the hand-made break follows a few words later, leaving a ragged column.

So the HTML twin undoes the hand-made breaks and leaves the wrapping to the page. A line continues the one
above it when that line is long enough to have been broken by hand (`HAND_WRAPPED`) and the line is indented
as its paragraph's text is: at the column where the explanation of a two-column line starts, or at the left
margin under a line that starts there. Each block keeps its hanging indent (`padding-left` with a negative
`text-indent`, in `ch` of the monospace font), so a wrapped explanation still sits in its column. Lines
indented otherwise (a YAML example, a list of problems) and short lines stay as they were. The plain-text
twin is the text unchanged, for terminals and for a notebook read without its HTML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .markdown import escape
from .render import MONO, WRAP
from .shorten import LONGEST_WORD

HAND_WRAPPED = 70
"""A line at least this long may have been broken by hand; a shorter one ends where its writer meant it to."""

LIST_MARK = re.compile(r"[-*•·✓✗▸▶?#>|]\s|\d+[.)]\s")
"""How an item of a list starts: such a line begins an item of its own, whatever the line above it."""

SECOND_COLUMN = re.compile(r"\S {2,}(?=\S)")
"""Two or more spaces inside a line: where the second column of a two-column line (usage, explanation) starts."""

COLUMN_INDENT = 8
"""Lines indented this far or more under a line indented as much are one column, broken by hand; less is a list."""

MAX_HANG = 32
"""The deepest hanging indent kept: a second column further right (a comment after a long key) would leave
its wrapped lines too little room in a narrow notebook."""

WORDS = re.compile(r"\s+|\S+")
"""A line as runs of spaces and words, in order."""

TEXT_STYLE = f"{MONO};white-space:pre-wrap;{WRAP};margin:0"
"""Spaces and line breaks kept as written; lines wrap at the page's edge between words, and inside a word only
when the word alone is wider than the page (a long path)."""

ERROR_STYLE = "background:var(--jp-rendermime-error-background,#fdd);padding:5px 6px"
"""How JupyterLab shows a cell's stderr (its error background, in either theme), for a mistake the kernel shows
as prose instead."""


@dataclass
class _Block:
    """Lines that read as one: the first as written, the rest joined to it, and where wrapped lines start."""

    text: str
    hang: int
    """Column where wrapped lines start: the first line's indent, or its second column's."""
    joins: list[str] = field(default_factory=list)

    def line(self) -> str:
        return " ".join([self.text, *self.joins])


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _text_columns(line: str) -> set[int]:
    """The columns where text of `line` starts: its indent, and its second column when it has one."""
    columns = {_indent(line)}
    columns.update(m.end() for m in SECOND_COLUMN.finditer(line, _indent(line)))
    return columns


def _continues(block: _Block, previous: str, line: str) -> bool:
    """Whether `line` is the rest of `block`'s paragraph, carried onto a new line by hand after `previous`."""
    if not line.strip() or not previous.strip() or len(previous.rstrip()) < HAND_WRAPPED:
        return False
    if LIST_MARK.match(line.lstrip(" ")):
        return False
    indent, first = _indent(line), block.text
    if indent == 0:  # prose at the margin, under prose at the margin: never a row of two columns
        return (_indent(first) == 0 and not SECOND_COLUMN.search(first) and not SECOND_COLUMN.search(line)
                and block.hang == 0)
    if block.joins:
        return indent == block.hang
    # Under the second column of a two-column line, or deep enough to be a column of its own (a list's
    # items are indented by two or four and stay apart).
    return (indent > _indent(first) and indent in _text_columns(first)) or (
        indent == _indent(first) >= COLUMN_INDENT)


def _hang(line: str) -> int:
    """Where the wrapped lines of `line` start: under its second column when it has a near one, else its indent."""
    second = SECOND_COLUMN.search(line, _indent(line))
    return second.end() if second is not None and second.end() <= MAX_HANG else _indent(line)


def blocks(text: str) -> list[tuple[str, int]]:
    """`text` as (line, hanging indent) blocks: hand-made breaks inside a paragraph undone (see the module)."""
    out: list[_Block] = []
    previous = ""
    for line in text.split("\n"):
        if out and _continues(out[-1], previous, line):
            block = out[-1]
            block.hang = _indent(line)
            block.joins.append(line.strip())
        else:
            out.append(_Block(line.rstrip(), hang=_hang(line)))
        previous = line
    return [(b.line(), b.hang) for b in out]


def _kept_whole(line: str) -> str:
    """`line` escaped, its short words with a hyphen (`--stdio`, `allow-readonly`) kept on one line: the page
    may break after any hyphen, and an option cut in two reads as two words."""
    def whole(match: re.Match[str]) -> str:
        word = match[0]
        if "-" not in word or len(word) > LONGEST_WORD:
            return escape(word)
        return f'<span style="white-space:nowrap">{escape(word)}</span>'

    return "".join(whole(m) if not m[0].isspace() else m[0] for m in WORDS.finditer(line))


def prose_html(text: str, style: str = "") -> str:
    """`text` as HTML that wraps between words at any width, keeping its columns and indents; `style` is added to
    the block's own (`ERROR_STYLE`)."""
    rows = []
    for line, hang in blocks(text):
        indent = f' style="padding-left:{hang}ch;text-indent:-{hang}ch"' if hang else ""
        rows.append(f"<div{indent}>{_kept_whole(line) if line else '&#8203;'}</div>")
    block_style = f"{TEXT_STYLE};{style}" if style else TEXT_STYLE
    return f'<div class="ocnb-text" style="{block_style}">{"".join(rows)}</div>'


def prose_bundle(text: str) -> dict[str, str]:
    """What the kernel shows a person as text: HTML that wraps between words, the text itself as its twin."""
    return {"text/html": prose_html(text), "text/plain": text}


def prose_error_bundle(text: str) -> dict[str, str]:
    """A mistake the person made, shown as `prose_bundle` shows text but on the page's error background, as the
    plain stderr text it replaces would be."""
    return {"text/html": prose_html(text, ERROR_STYLE), "text/plain": text}
