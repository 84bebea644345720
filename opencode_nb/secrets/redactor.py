"""Finding and replacing known secret values in text, whole or streamed: the search every write goes through.

The values come from the registry in `secrets/__init__.py`; the forms searched for, from `forms.py`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from .forms import _GATED_BELOW, _disguised, _fold, _hex, _hex_pair, _Spread, _spreads, _written

MIN_LENGTH = 8
"""Values shorter than this are not redacted: `password` or `true` would hide half of every page."""
_SKIPPED_FIELDS = frozenset({"id", "session_id", "message_id", "parent_id", "call_id", "type", "status", "role"})
"""Ids and tags of stored models: never text anybody wrote, so never searched."""


def label(name: str) -> str:
    """What stands in for a value: it names where the value came from, never any of it."""
    return f"[redacted: {name}]"


class Redactor:
    """Known secret values, prepared once, and the searches every write and every shown text go through.

    Finding is the cost paid on every write, so it is a plain substring search of the lower-cased text for
    each form (CPython's fast search): an alternation of the forms, in `re` or in `regex` (even its string
    lists), measured ten to fifty times slower, so the alternation only runs where something was found.
    The cost grows with the number of forms, so forms that share a piece (a value's hex forms share every
    byte's two digits) are looked for only where that piece is, and spread-out forms are found by slicing
    the text into every second and every third character: one slice for all values and all separators.
    Pieces of a value are looked for only near the ends of a text, where a preview or a tail cuts it, which
    keeps that search as short as one value.
    """

    def __init__(self, values: Mapping[str, str]) -> None:
        forms: dict[str, str] = {}
        written: set[str] = set()
        searched: dict[str, list[str]] = {"": []}
        spreads: dict[int, list[_Spread]] = {}
        for value, name in values.items():
            if len(value) < MIN_LENGTH:
                continue
            own = [form for form in map(_fold, _written(value)) if len(form) >= MIN_LENGTH]
            written.update(own)
            for needs, kind in (("", [*own, *_disguised(value)]), (_hex_pair(value), _hex(value))):
                for form in map(_fold, kind):
                    if form not in forms:
                        forms[form] = name
                        searched.setdefault(needs, []).append(form)
            for spread in _spreads(value, name):
                spreads.setdefault(spread.period, []).append(spread)
        self.values: dict[str, str] = {v.lower(): n for v, n in values.items() if len(v) >= MIN_LENGTH}
        """Lower-cased value → the name its label shows."""
        self._forms = forms
        """Lower-cased form → the name its label shows."""
        self._searched = [(needs, group) for needs, group in searched.items() if group]
        """The forms, by a piece they all hold ("": none); in a short text a group is looked for only where its
        piece is."""
        self._spreads = [(period, tuple(slice(phase, None, period) for phase in range(period)),
                          min(s.size for s in group), [(s.rows[0][1], s.rows[0][0], s.size, s.needs, s) for s in group])
                         for period, group in spreads.items()]
        """Spread-out forms by period, with the slices that read them and the shortest text that can hold one;
        each with what is searched for, its offset in a period, its size and the piece it needs."""
        ordered = sorted(forms, key=len, reverse=True)
        self._shortest = min(map(len, forms), default=0)
        self._longest = max(map(len, written), default=0)
        """The longest form pieces are looked for in: how far from either end they are looked for."""
        self._smallest_piece = min(map(_enough, written), default=0)
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if forms else None
        """Every form, longest first, run on the folded text."""
        self._heads: dict[str, list[str]] = {}
        """The first MIN_LENGTH characters of each written form → the forms starting so: where a cut-off piece
        begins."""
        self._tails: dict[str, list[str]] = {}
        """Likewise the last MIN_LENGTH characters: where a piece cut off at its start ends."""
        self._short_prefixes: set[str] = set()
        """Every prefix shorter than MIN_LENGTH: what the end of a stream may have to hold back."""
        for form in sorted(written, key=len, reverse=True):
            self._heads.setdefault(form[:MIN_LENGTH], []).append(form)
            self._tails.setdefault(form[-MIN_LENGTH:], []).append(form)
            self._short_prefixes.update(form[:k] for k in range(1, MIN_LENGTH))

    def __bool__(self) -> bool:
        return bool(self._forms)

    def found(self, text: str) -> bool:
        """Whether a whole known value, in any of its forms, is in `text`."""
        if len(text) < self._shortest or not self._forms:
            return False
        folded = _fold(text)
        return self._has_form(folded) or bool(self._spread_spans(folded))

    def redact(self, text: str, *, pieces: bool = True) -> str:
        """`text` with every known value replaced by its label and, with `pieces`, every piece of one at least
        half its length that a cut left at either end of the text."""
        if len(text) < MIN_LENGTH or not self._forms:
            return text
        spans = self._spans(text)
        if spans:
            text = _replaced(text, spans)
        return self._redact_pieces(text) if pieces else text

    def last_match_end(self, text: str) -> int:
        """Where the last whole value in `text` ends; 0 when there is none."""
        if len(text) < self._shortest or not self._forms:
            return 0
        return max((end for _, end, _ in self._spans(text)), default=0)

    def _has_form(self, folded: str) -> bool:
        gated = len(folded) < _GATED_BELOW
        for needs, group in self._searched:
            if gated and needs not in folded:
                continue
            for form in group:
                if form in folded:
                    return True
        return False

    def _spans(self, text: str) -> list[tuple[int, int, str]]:
        """Where whole values stand in `text`, in any form, as (start, end, name); spans may overlap."""
        folded = _fold(text)
        spans = []
        if self._has_form(folded):
            assert self._pattern is not None
            spans = [(m.start(), m.end(), self._forms[m.group()]) for m in self._pattern.finditer(folded)]
        spans.extend(self._spread_spans(folded))
        return spans

    def _spread_spans(self, folded: str) -> list[tuple[int, int, str]]:
        """Spread-out forms in `folded`. Each period's slices are joined (a value never holds `\\0`, so none is
        found across two), which makes one search per value and period whatever the text's length."""
        spans = []
        gated = len(folded) < _GATED_BELOW
        for period, slices, shortest, spreads in self._spreads:
            if len(folded) < shortest:
                continue
            lanes = ""
            for chars, offset, size, needs, spread in spreads:
                if len(folded) < size or (gated and needs not in folded):
                    continue
                lanes = lanes or "\0".join(map(folded.__getitem__, slices))
                at = lanes.find(chars)
                while at >= 0:
                    phase, index = _lane_position(at, len(folded), period)
                    start = phase + index * period - offset
                    if start >= 0 and spread.fits(folded, start):
                        spans.append((start, start + size, spread.name))
                    at = lanes.find(chars, at + 1)
        return spans

    def _piece_spans(self, text: str) -> list[tuple[int, int, str]]:
        """Pieces of values at least half their length, within one value's length of either end."""
        window = self._longest
        head, tail = _fold(text[:window]), _fold(text[-window:])
        offset = len(text) - len(tail)
        spans = []
        for chunk, forms in self._tails.items():  # a piece cut off at its start, near the text's start
            at = head.find(chunk)
            while at >= 0:
                end = at + MIN_LENGTH
                for form in forms:
                    size = _common_suffix(head, end, form)
                    if size >= _enough(form):
                        spans.append((end - size, end, self._forms[form]))
                        break
                at = head.find(chunk, at + 1)
        for chunk, forms in self._heads.items():  # a piece cut off at its end, near the text's end
            at = tail.find(chunk)
            while at >= 0:
                for form in forms:
                    size = _common_prefix(tail, at, form)
                    if size >= _enough(form):
                        spans.append((offset + at, offset + at + size, self._forms[form]))
                        break
                at = tail.find(chunk, at + 1)
        return spans

    def _redact_pieces(self, text: str) -> str:
        if len(text) < MIN_LENGTH:
            return text
        spans = self._piece_spans(text)
        return _replaced(text, spans) if spans else text

    def open_prefix(self, text: str) -> int:
        """Where the end of `text` may be the start of a value still being written: the position to hold back
        from, or `len(text)` when nothing needs holding back."""
        if not self._forms or not text:
            return len(text)
        start = max(0, len(text) - self._longest + 1)
        lowered = _fold(text[start:])
        best = len(lowered)
        for chunk, forms in self._heads.items():
            at = lowered.find(chunk)
            while 0 <= at < best:
                rest = lowered[at:]
                if any(len(rest) < len(form) and form.startswith(rest) for form in forms):
                    best = at
                    break
                at = lowered.find(chunk, at + 1)
        for size in range(min(MIN_LENGTH - 1, len(lowered)), 0, -1):
            if len(lowered) - size < best and lowered[-size:] in self._short_prefixes:
                best = len(lowered) - size
                break
        return start + best

    def redact_value(self, value: Any) -> Any:
        """`value` (text, a mapping, a list, a pydantic model) with its texts redacted; the very same object
        when nothing in it is secret, so the common case copies nothing."""
        if not self._forms:
            return value
        texts: list[str] = []
        _collect(value, texts, self._shortest)
        if not texts:
            return value
        if not self.found("\0".join(texts)) and not any(
                len(t) >= self._smallest_piece and self._piece_spans(t) for t in texts):
            return value
        return self._walk(value)

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            changed = {k: self._walk(v) for k, v in value.items()}
            return value if all(changed[k] is value[k] for k in value) else changed
        if isinstance(value, list | tuple):
            items = [self._walk(v) for v in value]
            return value if all(a is b for a, b in zip(items, value, strict=True)) else type(value)(items)
        if isinstance(value, BaseModel):
            updates = {}
            for name in type(value).model_fields:
                if name not in _SKIPPED_FIELDS:
                    old = getattr(value, name)
                    new = self._walk(old)
                    if new is not old:
                        updates[name] = new
            return value.model_copy(update=updates) if updates else value
        return value

    def redact_json(self, data: str) -> str:
        """A stored row's JSON with its texts redacted. Re-serialised, and only when a value was found: a label
        put straight into JSON text could land inside an escape sequence."""
        if not self.found(data):
            return data
        return json.dumps(self._walk(json.loads(data)), ensure_ascii=False, separators=(",", ":"))


_SCALARS = frozenset({int, float, bool, type(None)})


def _collect(value: Any, into: list[str], shortest: int) -> None:
    """The texts in `value` at least `shortest` long (shorter ones cannot hold a value): a walk that costs a
    few microseconds for a part, since every write of a run makes one."""
    kind = type(value)
    if kind is str:
        if len(value) >= shortest:
            into.append(value)
    elif kind in _SCALARS:
        return
    elif kind is dict:
        for item in value.values():
            _collect(item, into, shortest)
    elif kind is list or kind is tuple:
        for item in value:
            _collect(item, into, shortest)
    elif isinstance(value, BaseModel):
        for name, item in value.__dict__.items():
            if name not in _SKIPPED_FIELDS and item is not None:
                _collect(item, into, shortest)


def _enough(form: str) -> int:
    """The shortest piece of `form` worth hiding: half of it, since less leaves too much to guess."""
    return max(MIN_LENGTH, (len(form) + 1) // 2)


def _common_prefix(text: str, start: int, form: str) -> int:
    size, limit = 0, min(len(form), len(text) - start)
    while size < limit and text[start + size] == form[size]:
        size += 1
    return size


def _common_suffix(text: str, end: int, form: str) -> int:
    size, limit = 0, min(len(form), end)
    while size < limit and text[end - 1 - size] == form[-1 - size]:
        size += 1
    return size


def _lane_position(at: int, size: int, period: int) -> tuple[int, int]:
    """Which slice of a text `size` long (every `period`-th character from 0, 1, ...; joined by one character)
    position `at` of the joined slices falls in, and where in it."""
    for phase in range(period):
        length = (size - phase + period - 1) // period
        if at < length:
            return phase, at
        at -= length + 1
    raise ValueError(at)


def _replaced(text: str, spans: list[tuple[int, int, str]]) -> str:
    """`text` with each span replaced by its label; where spans overlap, the first label stands for both."""
    out, at = [], 0
    for start, end, name in sorted(spans):
        if start >= at:
            out.append(text[at:start] + label(name))
        at = max(at, end)
    return "".join(out) + text[at:]


class Stream:
    """A streamed text as it may be shown: known values replaced, and its end held back while it could still
    be the start of one. What is shown only ever grows, so it can still be published delta by delta.

    Each delta costs a search of itself plus the held-back end (shorter than one value), never of the whole
    text, so a long answer streamed in thousands of deltas stays cheap; while nothing was replaced, what is
    shown is the written text itself, not a copy.
    """

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.size = 0
        """How much has been written, held-back end included."""
        self.shown_size = 0
        self._held = ""
        self._shown: str | None = None
        """What is shown, once it differs from the written text (None before: the written text minus its held end)."""

    def follows(self, text: str, delta: str) -> bool:
        """Whether `text` is what was fed so far plus `delta` (parts being streamed only grow at their end)."""
        return len(text) == self.size + len(delta) and text.endswith(delta)

    def feed(self, text: str, delta: str) -> str:
        """Take `delta`, with `text` everything written so far (ending with it); returns what may be shown."""
        self.size = len(text)
        pending = self._held + delta
        redactor = self.redactor
        matched_to = redactor.last_match_end(pending)
        cut = matched_to + redactor.open_prefix(pending[matched_to:])
        settled, self._held = pending[:cut], pending[cut:]
        shown = redactor.redact(settled, pieces=False) if matched_to else settled
        if self._shown is None and shown is settled:
            out = text[:len(text) - len(self._held)] if self._held else text
        else:
            if self._shown is None:
                self._shown = text[:len(text) - len(pending)]
            self._shown += shown
            out = self._shown
        self.shown_size = len(out)
        return out
