"""What the variables of one line can hold, as far as the line itself says.

Two questions need it. Arithmetic (`(( i < n ))`, `$((n * 2))`, `[[ $n -gt 1 ]]`) evaluates a variable's
value as an expression, and an expression can hold an array subscript bash expands, running commands:
`y='a[$(rm x)]'; (( y ))` removes x. So arithmetic is harmless only on variables the line gives integers.
And a path built from a variable (`d=../other; touch $d/x`) points where the line's own assignments say.

Every way a line can set a variable is taken into account: `x=…`, `declare x=…`, `for x in …`, arithmetic
(`(( i++ ))`), and the builtins that assign to names they are given (`read x`, `printf -v x`, `mapfile x`).
A line that could set any variable at all (`eval`, `source`, `declare -n`) leaves nothing known.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .words import text_of, words

INTEGER = re.compile(r"-?(?:0[xX][0-9a-fA-F]+|\d+(?:#[0-9A-Za-z@_]+)?)")
"""A literal bash arithmetic reads as a number (`42`, `0x1f`, `2#101`): it cannot hide a command."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNING_BUILTINS = frozenset({"read", "mapfile", "readarray", "getopts", "printf", "wait", "unset",
                                 "export", "readonly", "declare", "typeset", "local"})
_ANY_VARIABLE = frozenset({"eval", "source", ".", "let"})
_ARITHMETIC = frozenset({"compound_statement", "c_style_for_statement", "arithmetic_expansion"})

UNKNOWN = None
"""A value only known when the line runs."""

SOME_INTEGER = "<integer>"
"""A value known to be a whole number, though not which (`n=$((n+1))`, `((i++))`)."""


@dataclass
class Variables:
    """The values each variable is given in a line: literal strings, SOME_INTEGER, or UNKNOWN."""

    sites: dict[str, list[str | None]] = field(default_factory=dict)
    anything: bool = False
    """The line can set any variable (eval, source, declare -n): nothing is known."""
    env: Mapping[str, str] = field(default_factory=lambda: os.environ)

    def integer(self, name: str) -> bool:
        """Whether `name` can only hold an integer when arithmetic reads it (so it hides no code)."""
        if self.anything or not _NAME.fullmatch(name):
            return False  # `$1`, `$@`: whatever the line or its caller passed
        values = self.sites.get(name, [])
        outside = self.env.get(name)
        if outside is not None and not INTEGER.fullmatch(outside.strip() or "0"):
            return False
        return all(v is not None and (v == SOME_INTEGER or INTEGER.fullmatch(v.strip() or "0")) for v in values)

    def values(self, name: str) -> list[str] | None:
        """What `name` may hold where it is used, if the line assigns it only literal values; else None.

        A variable the line does not assign comes from the environment: unknown here, as the rules treat
        every path built from the environment (`$HOME/x`).
        """
        if self.anything or name not in self.sites:
            return None
        values = self.sites[name]
        if any(v is None or v == SOME_INTEGER for v in values):
            return None
        out = [v for v in values if v is not None]
        outside = self.env.get(name)
        return out + ([outside] if outside is not None else [])

    def _set(self, name: str, value: str | None) -> None:
        self.sites.setdefault(name, []).append(value)


def collect(root: Any, source: bytes, env: Mapping[str, str] | None = None) -> Variables:
    found = Variables(env=os.environ if env is None else env)
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        kind = node.type
        if kind == "variable_assignment":
            _assignment(found, node, source)
        elif kind == "for_statement":
            _for(found, node, source)
        elif kind in _ARITHMETIC:
            _arithmetic(found, node, source)
        elif kind == "expansion" and any(c.type in (":=", "=") for c in node.children):
            name = next((c for c in node.named_children if c.type == "variable_name"), None)
            if name is not None:
                found._set(text_of(source, name), UNKNOWN)
        elif kind in ("command", "declaration_command", "unset_command"):
            _command(found, node, source)
    return found


def _assignment(found: Variables, node: Any, source: bytes) -> None:
    target = node.child_by_field_name("name")
    if target is None:
        return
    if target.type == "subscript":
        target = target.child_by_field_name("name") or target
        found._set(text_of(source, target), UNKNOWN)
        return
    name = text_of(source, target)
    if any(c.type == "+=" for c in node.children):
        found._set(name, UNKNOWN)
        return
    value = node.child_by_field_name("value")
    if value is None:
        found._set(name, "")
        return
    if value.type in ("number", "arithmetic_expansion"):
        found._set(name, SOME_INTEGER)
        return
    parts = words(value, source)
    found._set(name, parts[0].value if len(parts) == 1 and not parts[0].glob else UNKNOWN)


def _for(found: Variables, node: Any, source: bytes) -> None:
    variable = node.child_by_field_name("variable")
    if variable is None:
        return
    name = text_of(source, variable)
    items = node.children_by_field_name("value")
    if not items:
        found._set(name, UNKNOWN)  # `for x; do` walks the positional parameters
    for item in items:
        for word in words(item, source):
            # A glob item gives file names matching it: for paths, the pattern stands for them.
            found._set(name, word.value)


def _arithmetic(found: Variables, node: Any, source: bytes) -> None:
    stack = [node]
    while stack:
        current = stack.pop()
        stack.extend(current.children)
        operators = [c for c in current.children if not c.is_named]
        assigns = any(text_of(source, c) in ("=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|=",
                                             "++", "--") for c in operators)
        if assigns and current.type in ("binary_expression", "postfix_expression", "unary_expression",
                                        "variable_assignment"):
            target = current.named_children[0] if current.named_children else None
            if target is not None and target.type in ("variable_name", "word") and \
                    _NAME.fullmatch(text_of(source, target)):
                found._set(text_of(source, target), SOME_INTEGER)


def _command(found: Variables, node: Any, source: bytes) -> None:
    if node.type == "unset_command":
        return
    if node.type == "declaration_command":
        flags = "".join(text_of(source, c)[1:] for c in node.named_children
                        if c.type == "word" and text_of(source, c).startswith("-"))
        if "n" in flags:
            found.anything = True
        return
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return
    name = words(name_node, source)[0].value
    if name is None:
        return
    name = name.rsplit("/", 1)[-1]
    if name in _ANY_VARIABLE:
        found.anything = True
        return
    if name not in _ASSIGNING_BUILTINS:
        return
    arguments = [w for a in node.children_by_field_name("argument") for w in words(a, source)]
    if name in ("printf", "wait"):  # they assign only to the name after -v / -p
        flag = "-v" if name == "printf" else "-p"
        arguments = [arguments[i + 1] for i in range(len(arguments) - 1) if arguments[i].value == flag]
    for word in arguments:
        value = word.value
        if value is None:
            found.anything = True  # `read "$name"` assigns a variable chosen at run time
            return
        head = value.split("[", 1)[0].split("=", 1)[0]
        if _NAME.fullmatch(head):
            found._set(head, UNKNOWN)
