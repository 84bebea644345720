"""The forms a secret value takes in text: how ordinary code writes it out, and how a probe disguises it.

`Redactor` searches for every one of them; they live apart because what counts as a form changes for other
reasons (a new encoding a probe used) than how the search is made fast.
"""

from __future__ import annotations

import base64
import codecs
import json
import math
import urllib.parse
from collections.abc import Iterator
from typing import NamedTuple

_URL_SAFE = str.maketrans("+/", "-_")


def _written(value: str) -> Iterator[str]:
    """How ordinary code writes a value out: as it is, JSON-escaped, URL-encoded, and inside base64 (standard
    or URL-safe) at each of the three alignments: only the characters that depend on the value alone, so it
    is found within longer data. These are what previews and tails cut, so pieces of them are hidden too."""
    yield value
    yield json.dumps(value, ensure_ascii=False)[1:-1]
    yield urllib.parse.quote(value)
    yield urllib.parse.quote(value, safe="")
    raw = value.encode()
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode()
        inner = encoded[math.ceil(8 * shift / 6): 8 * (shift + len(raw)) // 6]
        yield inner
        yield inner.translate(_URL_SAFE)


def _disguised(value: str) -> Iterator[str]:
    """How a probe disguises a value to slip it past a plain search: reversed and in rot13. Only whole ones
    are hidden, as for hex: looking for pieces of every form would double the cost of every write."""
    yield value[::-1]
    yield codecs.encode(value, "rot13")


def _hex(value: str) -> Iterator[str]:
    """A value in hex, bare or with `\\x` before each byte (in upper case too, as every form is found in any
    case); with any other single character around each byte it is a `_Spread`."""
    raw = value.encode()
    yield raw.hex()
    yield "".join(f"\\x{byte:02x}" for byte in raw)


_GATED_BELOW = 1024
"""Texts shorter than this are searched for the piece a group of forms shares before the forms themselves.
Over a longer text that costs more than it spares: a two-character search cannot skip ahead as a long one
does (counted in instructions: a sixth fewer on a 300-character row, as many at 1,000, a tenth more at 4,000)."""


def _hex_pair(value: str) -> str:
    """Two hex digits that every hex form of `value` holds as they are: one byte's, with a letter in it where
    there is one (rarer than two digits in the numbers a notebook prints). In a short text each hex form is
    looked for only where this pair is, which spares three searches in the many rows without it."""
    pairs = [f"{byte:02x}" for byte in value.encode()]
    return next((pair for pair in pairs if not pair.isdigit()), pairs[0])


class _Spread(NamedTuple):
    """A form spread out: its characters stand every `period` characters, whatever stands between them."""

    period: int
    rows: tuple[tuple[int, str], ...]
    """(offset within a period, the characters at that offset, one per period); the first row is searched for,
    the others are checked where it was found."""
    name: str
    needs: str = ""
    """A piece every occurrence holds as it is, looked for first in a short text: finding it costs less than
    slicing the text."""

    @property
    def size(self) -> int:
        return self.period * (len(self.rows[0][1]) - 1) + max(offset for offset, _ in self.rows) + 1

    def fits(self, folded: str, start: int) -> bool:
        return all(folded[start + offset: start + offset + self.period * (len(chars) - 1) + 1: self.period] == chars
                   for offset, chars in self.rows[1:])


def _spreads(value: str, name: str) -> Iterator[_Spread]:
    """A value spelled out with one character after each of its own (`s k - a n t`, `s-k---a-n-t`), and its hex
    with one after or before each byte (`73:6b:2d`, `73 6B 2D`, `%73%6b%2d`). Which character does not matter:
    a probe picks its own, and reading every other (or every third) character finds them all at once, where
    searching each separator's form would cost one search per separator."""
    yield _Spread(2, ((0, _fold(value)),), name)
    digits = value.encode().hex()
    # the low digits are searched for: they vary more than the high ones, so a search stops less often
    yield _Spread(3, ((1, digits[1::2]), (0, digits[::2])), name, _hex_pair(value))


def _fold(text: str) -> str:
    """`text` lower-cased one character for one, so positions in it are positions in `text`: only `İ` lowers to
    two, and it never stands in a value's forms."""
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else text.replace("\u0130", "i").lower()
