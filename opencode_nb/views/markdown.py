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

import cmarkgfm


def markdown_html(text: str) -> str:
    """GitHub-flavoured markdown (tables, strikethrough, task lists, autolinks) to HTML, raw HTML dropped."""
    if not text:
        return ""
    return cmarkgfm.github_flavored_markdown_to_html(text)


def escape(text: str) -> str:
    return html.escape(text, quote=True)
