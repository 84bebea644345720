"""variables: the person's kernel variables, as a table or one at a time in detail.

The model names a value as Python would (`df`, `df.price`, `df["price"]`, `data["train"]`, `items[-1]`), and
the name is resolved by walking its syntax tree, never by `eval`: only a name, attributes and subscripts with
constant keys are read, and the whole tree is checked before anything is looked up, so
`df.drop(columns="a", inplace=True)` is refused without `df` even being read. An attribute is read as Python
reads it (a property runs): naming it is asking for it.

The work runs on the event loop's thread, not a worker thread: the person's objects are not thread-safe, and
the python tool may fork the kernel, which must not happen while another thread is inside pandas. It is short
by construction: `support/describe` bounds every scan by a time budget, and starts no compute.
"""

from __future__ import annotations

import ast
import difflib
import itertools
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, Field

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, for_person
from .support.describe.common import clip, kind_of, qualified, short_repr
from .support.describe.listing import list_namespace
from .support.describe.values import describe

ALLOWED = ('a variable name, optionally followed by attributes and constant subscripts: `df`, `df.price`, '
           '`df["price"]`, `data["train"]`, `items[3]`, `items[-1]`')

NO_KERNEL = ("There is no live kernel in this session, so there are no variables to look at: variables exist "
             "only when the agent runs in a Jupyter notebook (`%load_ext opencode_nb`, then `%%agent`). Look at "
             "data files with read, glob and grep instead.")

REFUSED = {"Call": "a call", "Slice": "a slice", "BinOp": "an operator", "UnaryOp": "an operator",
           "Compare": "a comparison", "BoolOp": "an operator", "Lambda": "a lambda", "Starred": "a starred value",
           "NamedExpr": "an assignment", "Constant": "a literal", "Tuple": "a tuple", "List": "a list",
           "Dict": "a dict", "JoinedStr": "an f-string", "IfExp": "a conditional", "Await": "an await"}
"""What the refusal calls each construct the model may try; anything else is called an expression."""


class VariablesParams(BaseModel):
    name: str | None = Field(None, max_length=500, description=(
        'A variable to describe in detail, written as in Python: `df`, `df.price`, `df["price"]`, `data["train"]`, '
        "`items[3]`. Leave it out to list every variable of the kernel."))


class VariablesTool(Tool[VariablesParams]):
    id = "variables"
    params = VariablesParams

    async def execute(self, params: VariablesParams, ctx: ToolContext) -> ToolResult:
        name = (params.name or "").strip()
        await ctx.ask("variables", [name or "*"], always=["*"])
        if ctx.kernel is None:
            raise ToolError(NO_KERNEL)
        namespace = ctx.kernel.user_ns
        if not name:
            listing = list_namespace(namespace)
            title = f"{listing.total} variable{'' if listing.total == 1 else 's'}"
            return ToolResult(title, listing.text, {"count": listing.total, **for_person(f"Listed {title}")})
        value = resolve(namespace, name)
        kind = kind_of(value) or qualified(type(value))
        return ToolResult(name, describe(value, name), {"name": name, "type": kind,
                                                        **for_person(f"Described {name} ({kind})")})


def resolve(namespace: Mapping[str, Any], expression: str) -> Any:
    """The value `expression` names in `namespace`, read without evaluating any code.

    Raises:
        ToolError: the expression is more than names, attributes and constant subscripts (nothing has been
            read then), or a step of it does not exist; the message lists close matches.
    """
    root, steps = _path(expression.strip())
    if root not in namespace:
        candidates = [n for n in namespace if isinstance(n, str) and not n.startswith("_")]
        raise ToolError(f"No variable named `{root}` in the kernel.{_suggest(root, candidates)} "
                        "Call variables without a name to list the variables.")
    value, label = namespace[root], root
    for step in steps:
        value = _attribute(value, label, step) if isinstance(step, str) else _item(value, label, step[0])
        label += f".{step}" if isinstance(step, str) else f"[{step[0]!r}]"
    return value


def _path(expression: str) -> tuple[str, list[str | tuple[str | int]]]:
    """The root name and the steps after it: an attribute name, or a one-element tuple holding a key."""
    try:
        node = ast.parse(expression, mode="eval").body
    except (SyntaxError, ValueError):  # ValueError: a null byte, before Python 3.12
        raise ToolError(f"`{expression}` is not a name the variables tool can look up. Give {ALLOWED}.") from None
    steps: list[str | tuple[str | int]] = []
    while not isinstance(node, ast.Name):
        if isinstance(node, ast.Attribute):
            steps.append(node.attr)
        elif isinstance(node, ast.Subscript) and (key := _constant_key(node.slice)) is not None:
            steps.append((key,))
        else:
            if isinstance(node, ast.Subscript):
                node = node.slice
            what = REFUSED.get(type(node).__name__, "an expression")
            raise ToolError(f"`{expression}` contains {what}, which the variables tool does not evaluate; nothing was "
                            f"run. Give {ALLOWED}. To compute something from a variable, use the python tool.")
        node = node.value
    return node.id, steps[::-1]


def _constant_key(node: ast.expr) -> str | int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int)) and not isinstance(node.value, bool):
        return node.value
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) is int):
        return -node.operand.value
    return None


def _attribute(value: Any, label: str, name: str) -> Any:
    try:
        return getattr(value, name)
    except AttributeError:
        public = [n for n in _safe_dir(value) if not n.startswith("_")]
        raise ToolError(f"`{label}` ({qualified(type(value))}) has no attribute `{name}`."
                        f"{_suggest(name, public)}") from None
    except Exception as exc:
        raise ToolError(f"Reading `{label}.{name}` raised {type(exc).__name__}: {clip(str(exc), 200)}") from None


def _item(value: Any, label: str, key: str | int) -> Any:
    keys = _keys(value)
    # Asked of the mapping itself (a defaultdict must not grow a key) or of the frame's columns (a MultiIndex
    # knows its top level).
    if keys is not None and key not in (value if isinstance(value, Mapping) else value.columns):
        what = "column" if kind_of(value) else "key"
        shown = ", ".join(short_repr(k, 40) for k in keys[:10]) + (", …" if len(keys) > 10 else "")
        hint = _suggest(str(key), [str(k) for k in keys]) or (f" Its {what}s include: {shown}." if keys else "")
        raise ToolError(f"`{label}` has no {what} {key!r}.{hint}")
    try:
        return value[key]
    except IndexError:
        raise ToolError(f"`{label}[{key}]` is out of range: `{label}` has {_length(value)} items.") from None
    except KeyError:
        raise ToolError(f"`{label}` has no key {key!r}.") from None
    except TypeError:
        raise ToolError(f"`{label}` ({qualified(type(value))}) cannot be indexed with {key!r}.") from None
    except Exception as exc:
        raise ToolError(f"Reading `{label}[{key!r}]` raised {type(exc).__name__}: {clip(str(exc), 200)}") \
            from None


def _keys(value: Any) -> list[Any] | None:
    """The keys or column names a subscript of `value` chooses from, read without scanning any data."""
    kind = kind_of(value) or ""
    if kind.endswith("DataFrame"):
        return list(value.columns)
    if isinstance(value, Mapping):
        return list(itertools.islice(value.keys(), 10_000))
    return None


def _length(value: Any) -> str:
    try:
        return f"{len(value):,}"
    except Exception:
        return "fewer"


def _safe_dir(value: Any) -> list[str]:
    try:
        return dir(value)
    except Exception:
        return []


def _suggest(word: str, candidates: Iterable[str]) -> str:
    """' Close matches: a, b.' (case does not count), or nothing when none is close."""
    lowered: dict[str, str] = {}
    for candidate in candidates:
        lowered.setdefault(candidate.lower(), candidate)
    matches = difflib.get_close_matches(word.lower(), list(lowered), n=5, cutoff=0.6)
    return f" Close matches: {', '.join(lowered[m] for m in matches)}." if matches else ""
