"""Python highlighted in the theme's own editor colours, so code reads in light and dark themes alike.

Saved outputs keep no stylesheet, so the colours are inline. A fixed palette is readable on one background
only (dark blue keywords vanish on a dark page), while every JupyterLab theme defines its editor's colour
for each kind of token (`--jp-mirror-editor-*`), chosen for that theme's background. Some of those miss
WCAG AA on their own theme (JupyterLab Dark's comments are 3.5:1), so each goes through `tone`, a third of
the way toward the theme's text colour, as every other coloured text of ours does. Outside JupyterLab the
fallbacks are the light theme's. Names and anything unlisted take the text colour around them.
"""

from __future__ import annotations

from functools import cache

from pygments.lexers import PythonLexer
from pygments.token import Comment, Error, Keyword, Name, Number, Operator, Punctuation, String, _TokenType

from .colors import tone
from .markdown import escape

KINDS: tuple[tuple[_TokenType, str, str], ...] = (
    (Comment, "comment", "#408080"),
    (String, "string", "#ba2121"),
    (Number, "number", "#080"),
    (Operator.Word, "keyword", "green"),
    (Keyword, "keyword", "green"),
    (Operator, "operator", "#7800c2"),
    (Name.Builtin, "builtin", "green"),
    (Name.Function, "def", "#00f"),
    (Name.Class, "def", "#00f"),
    (Name.Decorator, "meta", "#a2f"),
    (Punctuation, "punctuation", "#05a"),
    (Error, "error", "red"),
)
"""Token kind, the editor's variable for it and its light-theme value; the first kind a token is in wins."""


@cache
def colour(token: _TokenType) -> str | None:
    """The CSS colour of a token, or None for text that keeps the surrounding colour.

    Cached: a listing has thousands of tokens but Pygments only a few dozen token types.
    """
    for kind, name, fallback in KINDS:
        if token in kind:
            return tone(f"var(--jp-mirror-editor-{name}-color,{fallback})")
    return None


_LEXER = PythonLexer(stripnl=False, ensurenl=False)
"""Built once: a lexer keeps no state between `get_tokens` calls."""


def python_html(code: str) -> str:
    """`code` as escaped HTML with inline colours (no enclosing element)."""
    spans: list[str] = []
    for token, text in _LEXER.get_tokens(code):
        css = colour(token)
        spans.append(f'<span style="color:{css}">{escape(text)}</span>' if css and text.strip() else escape(text))
    return "".join(spans)
