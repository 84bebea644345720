"""Cutting a line of text to a width for a person to read.

A plain slice leaves half a word with nothing to say that more followed ("To con"), and the reader takes
the fragment for the whole. A cut here ends after the last word that fits and always ends in "…". A run of
text with no space in it longer than `LONGEST_WORD` (a path, a hash, a URL) is not a word: it is cut
inside, since dropping all of it would show less.
"""

from __future__ import annotations

import re

ELLIPSIS = "…"

LONGEST_WORD = 30
"""Longer runs without a space are tokens, not words, and may be cut inside."""

_TRAILING = " \t,;:-–—"
"""Left off before the ellipsis: "first, second…" rather than "first, second,…"."""


def shorten(text: str, width: int) -> str:
    """`text` whole when it fits in `width` characters, else cut between words and ended with "…".

    The result, ellipsis included, is never longer than `width`.

    Raises:
        ValueError: `width` leaves no room for a character and the ellipsis.
    """
    if width < 2:
        raise ValueError(f"width must be at least 2 (one character and the ellipsis), not {width}")
    if len(text) <= width:
        return text
    room = width - len(ELLIPSIS)
    crossing = re.split(r"\s", text[room:], maxsplit=1)[0]  # the part of the word at the cut past the room
    start = room
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    word = text[start : room + len(crossing)]
    # Otherwise at the room itself: the cut already falls between words, or inside a token or the only word.
    before_the_word = bool(crossing) and len(word) <= LONGEST_WORD and bool(text[:start].strip())
    head = text[:start] if before_the_word else text[:room]
    return head.rstrip(_TRAILING) + ELLIPSIS
