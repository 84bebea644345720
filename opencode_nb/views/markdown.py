"""Model text to HTML.

Model output is untrusted: raw HTML in it is escaped, never rendered, so a reply cannot inject script or
styles into the notebook. Rendering happens in the kernel because both the live view and the saved
transcript need the same HTML, and a saved notebook must read well without any front-end code of ours.
"""

from __future__ import annotations

import html
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def _renderer() -> Any:
    import mistune

    return mistune.create_markdown(escape=True, plugins=["table", "strikethrough", "task_lists"])


def markdown_html(text: str) -> str:
    """Markdown to HTML with any HTML in `text` escaped."""
    if not text:
        return ""
    return str(_renderer()(text))


def escape(text: str) -> str:
    return html.escape(text, quote=True)
