"""`{name}` in a prompt: the value of a variable of the notebook.

Only fields that name an existing variable are filled in (`{df}`, `{df.shape}`, `{rows[0]}`, `{x:.2f}`,
`{y!r}`); `{{` and `}}` are literal braces. Any other braces are left as typed, so code pasted into a
prompt survives, except a lone identifier that names nothing, which is almost certainly a typo and is
reported.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from typing import Any

from ...errors import OpencodeNbError

MAX_VALUE_CHARS = 20_000
"""A variable longer than this is cut, with a note: a DataFrame's str can be megabytes."""

_FIELD = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
_NAME = re.compile(r"[A-Za-z_]\w*")


class InterpolationError(OpencodeNbError):
    pass


def interpolate(text: str, namespace: Mapping[str, Any]) -> str:
    formatter = string.Formatter()

    def fill(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        field = match.group(1)
        head = _NAME.match(field.strip())
        if head is None or (head.end() < len(field.strip()) and field.strip()[head.end()] not in ".[!:"):
            return token
        name = head.group(0)
        if name not in namespace:
            if field.strip() == name:
                raise InterpolationError(
                    f"The prompt refers to {{{name}}}, but the notebook has no variable {name!r}. "
                    f"Define it first, or write {{{{{name}}}}} for literal braces.")
            return token
        try:
            value = formatter.vformat("{" + field + "}", (), namespace)
        except Exception as exc:
            raise InterpolationError(f"Could not fill in {token} in the prompt: {exc}. "
                                     "Write {{ and }} for literal braces.") from None
        if len(value) > MAX_VALUE_CHARS:
            value = value[:MAX_VALUE_CHARS] + f"\n… ({len(value) - MAX_VALUE_CHARS:,} more characters cut)"
        return value

    return _FIELD.sub(fill, text)
