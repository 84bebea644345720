"""Model text to HTML.

cmark-gfm (GitHub's own renderer) turns markdown into HTML about twenty times faster than pure-Python
parsers, which matters because the live view re-renders the paragraph being written several times a
second. Model output is untrusted: its safe defaults drop raw HTML instead of passing it through (as
GitHub does), so a reply cannot put script or styles into the notebook. Rendering happens in the kernel
because both the live view and the saved transcript need the same HTML, and a saved notebook must read
well without any front-end code of ours.
"""

from __future__ import annotations

import html
import re

import cmarkgfm


def markdown_html(text: str) -> str:
    """GitHub-flavoured markdown (tables, strikethrough, task lists, autolinks) to HTML, raw HTML dropped."""
    if not text:
        return ""
    return cmarkgfm.github_flavored_markdown_to_html(text)


CELL = re.compile(r'<(th|td)(?: align="(left|center|right)")?>')
"""A table cell as cmark-gfm writes it, with the column's alignment when the markdown gave one."""
CELL_STYLE = "border:1px solid var(--jp-border-color2,#ccc);padding:2px 8px;text-align:{align}"
WRAP = "overflow-wrap:break-word;word-break:normal"


def markdown_block_html(text: str) -> str:
    """Markdown written to be read as such (a subagent's answer, a plan, a fetched page) as a block of HTML:
    tables as tables with borders, long text wrapping between words.

    The borders are inline: a widget's HTML gets none of JupyterLab's rendered-markdown styles, and a table
    without them reads as a run of words.
    """
    body = markdown_html(text).replace("<table>", '<table style="border-collapse:collapse;margin:4px 0">')
    body = CELL.sub(lambda m: f'<{m[1]} style="{CELL_STYLE.format(align=m[2] or "left")}">', body)
    return f'<div class="ocnb-markdown" style="{WRAP};overflow-x:auto">{body}</div>'


def escape(text: str) -> str:
    return html.escape(text, quote=True)
