"""Code in cards is coloured by the theme's own editor colours, so it reads on light and dark pages alike."""

from __future__ import annotations

import html
import re

from opencode_nb.views.colors import tone
from opencode_nb.views.highlight import python_html
from opencode_nb.views.render import code_html

CODE = '''@cache
def clean(df, limit=3):  # drop the gaps
    """Rows we trust."""
    if df is None or not len(df):
        return print("empty <frame> & more")
    return df[df["temp_c"] > limit * 1.5]
'''


def spans(markup: str) -> dict[str, str]:
    """Each coloured piece of text and its colour."""
    return {html.unescape(text): colour for colour, text in re.findall(r'<span style="color:([^"]+)">([^<]*)</span>',
                                                                        markup)}


def test_every_colour_is_the_themes_editor_colour_toned_toward_its_text_colour():
    colours = set(spans(python_html(CODE)).values())
    assert colours, "the code is highlighted"
    for colour in colours:
        editor = re.search(r"var\(--jp-mirror-editor-[a-z0-9-]+-color,[#a-z0-9]+\)", colour)
        assert editor is not None and colour == tone(editor.group(0)), colour


def test_each_kind_of_token_takes_its_own_editor_colour():
    coloured = spans(python_html(CODE))
    kinds = {text: re.search(r"--jp-mirror-editor-([a-z0-9-]+)-color", coloured[text]).group(1)  # type: ignore[union-attr]
             for text in ("def", "None", "not", "clean", "# drop the gaps", "temp_c", "1.5", "print", ">")}
    assert kinds == {"def": "keyword", "None": "keyword", "not": "keyword", "clean": "def",
                     "# drop the gaps": "comment", "temp_c": "string", "1.5": "number", "print": "builtin",
                     ">": "operator"}
    assert "df" not in coloured and "limit" not in coloured, "plain names keep the text colour around them"


def test_the_code_reads_exactly_as_written_once_the_markup_is_taken_away():
    markup = python_html(CODE)
    assert html.unescape(re.sub(r"<[^>]+>", "", markup)) == CODE
    assert "<frame>" not in markup, "text is escaped"


def test_a_card_folds_its_highlighted_code_under_a_summary():
    card = code_html("x = 1\n", summary="code")
    assert card.startswith("<details><summary>code</summary><pre class=\"ocnb-code\"")
    assert "var(--jp-mirror-editor-number-color" in card and 'style="color:#' not in card
