"""What a shell word becomes once the shell has removed its quotes: the text a rule should be matched against.

A rule is about what runs, not how it is spelled. `"rm"`, `r''m`, `\\rm`, `$'rm'` and `$'\\x72m'` all run rm,
and `git {push,origin}` runs `git push origin`, so a word's value is worked out the way bash does it: quotes
and escapes removed, ANSI-C escapes decoded, braces expanded. Two things are not worked out, because they
are only known when the line runs: expansions (`$x`, `${x:-y}`, `$(...)`, backticks, `$((...))`) make the
word's value unknown (None), and unquoted glob characters (`r?`, `/bin/r[m]`) are noted, since the shell
replaces such a word with whatever file names match at that moment.

Each character is kept with whether it was quoted, because only unquoted `{`, `,`, `*`, `?` and `[` mean
anything to the shell.
"""

from __future__ import annotations

import itertools
import re
import shlex
from dataclasses import dataclass
from typing import Any

Chars = list[tuple[str, bool]]
"""A word's characters after quote removal, each with whether it was quoted (or escaped)."""

Piece = tuple[str, str, bool]
"""Part of a word: ("text", literal, quoted) or ("var", name, quoted)."""

MAX_BRACE_WORDS = 256
"""A word whose braces expand to more words than this is treated as unknown rather than expanded."""

_LITERAL = frozenset({"word", "number"})
_EXPANSIONS = frozenset({"simple_expansion", "expansion", "command_substitution", "arithmetic_expansion",
                         "process_substitution"})
_DOUBLE_QUOTE_ESCAPES = frozenset('$`"\\')
_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
                "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


@dataclass(frozen=True)
class Word:
    """One word of a command line as the program will receive it (`a{b,c}` gives two)."""

    text: str
    """The word as written, quotes and all (for a brace expansion, the whole written word)."""
    value: str | None
    """After brace expansion and quote removal; None when an expansion decides it."""
    glob: bool = False
    """An unquoted `*`, `?` or `[...]`: the shell replaces the word with matching file names, if any."""
    tilde: bool = False
    """Starts with an unquoted `~`: the shell puts a home directory there."""
    kind: str = "word"
    """The grammar's node type (`process_substitution` matters: the word names a pipe to a command)."""
    pieces: tuple[Piece, ...] | None = None
    """For a word of literal text and plain variables (`$d/x`), its parts, to work out what it can be."""

    @property
    def shown(self) -> str:
        """What a pattern shows for it: the value when known, quoted only where the shell would need it (one
        spelling for `"rm"`, `r''m` and `rm`), else the text as written."""
        return shlex.quote(self.value) if self.value is not None else self.text


def text_of(source: bytes, node: Any) -> str:
    return source[node.start_byte:node.end_byte].decode(errors="replace")


def words(node: Any, source: bytes) -> list[Word]:
    """The words a grammar node becomes: one, several after brace expansion, or one unknown word."""
    text = text_of(source, node)
    chars = _chars(node, source)
    if chars is None:
        pieces = template(node, source)
        return [Word(text, None, kind=node.type, pieces=tuple(pieces) if pieces is not None else None)]
    tilde = bool(chars) and chars[0] == ("~", False)
    expanded = brace_expand(chars)
    if expanded is None:
        return [Word(text, None, tilde=tilde, kind=node.type)]
    return [Word(text, "".join(c for c, _ in w), _has_glob(w), tilde and i == 0, node.type)
            for i, w in enumerate(expanded)]


def literal(value: str) -> Word:
    """A word whose value is known outright (text a wrapper hands to the program it runs)."""
    return Word(value, value)


def _chars(node: Any, source: bytes) -> Chars | None:
    kind = node.type
    if kind == "command_name":
        return _chars(node.named_children[0], source) if node.named_children else []
    if kind in _LITERAL:
        return _unescape_unquoted(text_of(source, node))
    if kind == "raw_string":
        return [(c, True) for c in text_of(source, node)[1:-1]]
    if kind == "ansi_c_string":
        decoded = decode_ansi_c(text_of(source, node)[2:-1])
        return None if decoded is None else [(c, True) for c in decoded]
    if kind == "translated_string":
        return _chars(node.named_children[0], source) if node.named_children else []
    if kind == "string":
        out: Chars = []
        for child in node.children:
            if child.type == '"':
                continue
            if child.type != "string_content":
                return None
            out.extend((c, True) for c in _unescape_double_quoted(text_of(source, child)))
        return out
    if kind in ("concatenation", "brace_expression"):
        out = []
        for child in node.children:
            if not child.is_named:  # `{`, `..`, `}` of a brace sequence
                out.extend((c, False) for c in text_of(source, child))
                continue
            part = _chars(child, source)
            if part is None:
                return None
            out.extend(part)
        return out
    return None  # expansions, and anything this module does not know: unknown, never guessed


def _unescape_unquoted(text: str) -> Chars:
    out: Chars = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":  # a backslash-newline joins lines and leaves nothing
                out.append((text[i + 1], True))
            i += 2
            continue
        out.append((text[i], False))
        i += 1
    return out


def _unescape_double_quoted(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and (text[i + 1] in _DOUBLE_QUOTE_ESCAPES or text[i + 1] == "\n"):
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def decode_ansi_c(body: str) -> str | None:
    """The text of `$'...'` (without `$'` and `'`): `\\x72m` is `rm`. None for an escape we cannot decode."""
    out = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\" or i + 1 == len(body):
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        if e in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[e])
            i += 2
        elif e in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1:])
            assert m is not None
            out.append(chr(int(m.group(), 8) & 0xFF))
            i += 1 + len(m.group())
        elif e in "xuU":
            size = {"x": 2, "u": 4, "U": 8}[e]
            m = re.match(rf"[0-9a-fA-F]{{1,{size}}}", body[i + 2:])
            if m is None:
                out.append("\\" + e)
                i += 2
                continue
            try:
                out.append(chr(int(m.group(), 16)))
            except ValueError:
                return None
            i += 2 + len(m.group())
        elif e == "c" and i + 2 < len(body):
            out.append(chr(ord(body[i + 2]) & 0x1F))
            i += 3
        else:
            out.append("\\" + e)
            i += 2
    return "".join(out)


def brace_expand(chars: Chars) -> list[Chars] | None:
    """The words `a{b,c}d` and `x{1..3}` expand to, as bash does before anything else; None past the cap."""
    words = [chars]
    done: list[Chars] = []
    while words:
        current = words.pop()
        split = _first_brace(current)
        if split is None:
            done.append(current)
        else:
            prefix, alternatives, suffix = split
            words.extend(prefix + alt + suffix for alt in reversed(alternatives))
        if len(done) + len(words) > MAX_BRACE_WORDS:
            return None
    return done


def _first_brace(chars: Chars) -> tuple[Chars, list[Chars], Chars] | None:
    """The first `{...}` that expands: its prefix, its alternatives and what follows it."""
    start = 0
    while True:
        opening = next((i for i in range(start, len(chars)) if chars[i] == ("{", False)), None)
        if opening is None:
            return None
        depth = 0
        commas = []
        closing = None
        for i in range(opening, len(chars)):
            c, quoted = chars[i]
            if quoted:
                continue
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    closing = i
                    break
            elif c == "," and depth == 1:
                commas.append(i)
        if closing is None:
            return None
        body = chars[opening + 1:closing]
        if commas:
            bounds = [opening, *commas, closing]
            alternatives = [chars[a + 1:b] for a, b in itertools.pairwise(bounds)]
            return chars[:opening], alternatives, chars[closing + 1:]
        sequence = _sequence(body)
        if sequence is not None:
            return chars[:opening], [[(c, True) for c in item] for item in sequence], chars[closing + 1:]
        start = opening + 1


def _sequence(body: Chars) -> list[str] | None:
    if any(quoted for _, quoted in body):
        return None
    m = re.fullmatch(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?", "".join(c for c, _ in body))
    if m is None:
        return None
    first, last, step_text = m.groups()
    step = abs(int(step_text)) if step_text and int(step_text) != 0 else 1
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        a, b = int(first), int(last)
        numbers = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [str(n) for n in numbers][:MAX_BRACE_WORDS + 1]
    if first.isalpha() and last.isalpha():
        a, b = ord(first), ord(last)
        codes = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [chr(n) for n in codes]
    return None


def _has_glob(chars: Chars) -> bool:
    for i, (c, quoted) in enumerate(chars):
        if quoted:
            continue
        if c in "*?":
            return True
        if c == "[" and any(d == "]" and not q for d, q in chars[i + 1:]):
            return True
    return False


def template(node: Any, source: bytes, quoted: bool = False) -> list[Piece] | None:
    """A word as literal text and plain variable references (`$d/x`, `"${d}"/x`); None if anything else
    (a command substitution, `${d:-x}`, `$1`) decides its value."""
    kind = node.type
    if kind == "simple_expansion":
        name = node.named_children[0] if node.named_children else None
        if name is None or name.type != "variable_name" or text_of(source, name).isdigit():
            return None
        return [("var", text_of(source, name), quoted)]
    if kind == "expansion":
        parts = [c for c in node.children if c.type not in ("${", "}")]
        if len(parts) == 1 and parts[0].type == "variable_name" and not text_of(source, parts[0]).isdigit():
            return [("var", text_of(source, parts[0]), quoted)]
        return None
    if kind == "string":
        out: list[Piece] = []
        for child in node.children:
            if child.type == '"':
                continue
            if child.type == "string_content":
                out.append(("text", _unescape_double_quoted(text_of(source, child)), True))
                continue
            part = template(child, source, quoted=True)
            if part is None:
                return None
            out.extend(part)
        return out
    if kind == "concatenation":
        out = []
        for child in node.children:
            part = template(child, source, quoted)
            if part is None:
                return None
            out.extend(part)
        return out
    chars = _chars(node, source)
    if chars is None:
        return None
    return [("text", "".join(c for c, _ in chars), quoted or all(q for _, q in chars))]

