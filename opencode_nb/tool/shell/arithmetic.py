"""Arithmetic that can run commands: bash evaluates variable values as expressions, subscripts included.

`y='a[$(rm x)]'; (( y ))` removes x, and so do `[[ $y -eq 1 ]]`, `echo $((y))`, `${arr[y]}`, `${s:y}` and
`arr[y]=1`: to evaluate `y` bash evaluates its value, and the subscript in that value is expanded, command
substitution and all. No command word appears anywhere a rule could see. So arithmetic is harmless only
when everything it reads is a number or a variable the line gives integers (`for ((i = 0; i < 3; i++))`);
anything else (`$1`, `$(cmd)`, a variable from the environment or `read`) may hide a command.
"""

from __future__ import annotations

import itertools
from typing import Any

from .variables import INTEGER, Variables
from .words import text_of

ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
"""Operators of `[[ ]]` that evaluate both sides as arithmetic."""


def hides_code(node: Any, source: bytes, variables: Variables) -> bool:
    """Whether evaluating the arithmetic under `node` could run a command."""
    stack = [node]
    while stack:
        current = stack.pop()
        kind = current.type
        if kind in ("number", "test_operator") or not current.is_named:
            continue
        if kind in ("variable_name", "word"):
            text = text_of(source, current)
            if INTEGER.fullmatch(text) or variables.integer(text):
                continue
            return True
        if kind == "simple_expansion":
            name = current.named_children[0] if current.named_children else None
            if name is None or name.type != "variable_name" or not variables.integer(text_of(source, name)):
                return True
            continue
        if kind == "expansion":
            parts = [c for c in current.children if c.type not in ("${", "}")]
            if len(parts) == 1 and parts[0].type == "variable_name" and variables.integer(
                    text_of(source, parts[0])):
                continue
            return True
        if kind in ("command_substitution", "subscript", "process_substitution"):
            return True
        stack.extend(current.children)
    return False


def test_hides_code(node: Any, source: bytes, variables: Variables) -> bool:
    """Whether a `[[ ]]` or `[ ]` test could run a command: arithmetic comparisons in `[[ ]]`, and `-v`
    of an array element in either."""
    double = any(c.type == "[[" for c in node.children)
    stack = [node]
    while stack:
        current = stack.pop()
        stack.extend(current.children)
        operator = current.child_by_field_name("operator")
        if operator is None or operator.type != "test_operator":
            continue
        op = text_of(source, operator)
        if op == "-v":
            operands = [c for c in current.named_children if c.id != operator.id]
            if any("[" in text_of(source, c) for c in operands):
                return True
        elif double and op in ARITHMETIC_TESTS:
            operands = [c for c in current.named_children if c.id != operator.id]
            if any(hides_code(c, source, variables) for c in operands):
                return True
    return False


def expansion_hides_code(node: Any, source: bytes, variables: Variables) -> bool:
    """Whether a `${...}` expansion could run a command hidden in a value: through arithmetic (a subscript
    `${arr[i]}`, a substring `${s:i:n}`), indirection (`${!name}`) or prompt expansion (`${x@P}`)."""
    children = node.children
    if any(c.type == "!" for c in children[:2]):
        return True
    if any(a.type == "@" and b.type == "P" for a, b in itertools.pairwise(children)):
        return True  # `${x@P}` expands the value as a prompt, command substitutions included
    for child in node.named_children:
        if child.type == "subscript":
            index = child.child_by_field_name("index")
            if index is not None and text_of(source, index) not in ("@", "*") and hides_code(index, source,
                                                                                             variables):
                return True
    if any(c.type == ":" for c in children):
        after = False
        for child in children:
            if child.type == ":":
                after = True
                continue
            if after and child.is_named and hides_code(child, source, variables):
                return True
    return False
