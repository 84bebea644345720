"""The namespace as a table: one row a variable, from what each object already knows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from .common import (
    ESTIMATED,
    LABELS,
    LIST_LIMIT,
    ROWS,
    _plain_row,
    kind_of,
    plural,
    table,
    visible,
)


class Listing(NamedTuple):
    text: str
    total: int
    """Variables listed, including any cut from the table."""


def list_namespace(namespace: Mapping[str, Any], *, limit: int = LIST_LIMIT) -> Listing:
    """The table of the person's variables: data (frames, series, arrays) first, then the rest, each by name.

    Data comes first because it is what the model is asked about, and the table is cut after `limit` rows.
    """
    entries = sorted(((kind_of(value) is None, name.lower(), name, value)
                      for name, value in list(namespace.items()) if isinstance(name, str) and visible(name, value)),
                     key=lambda entry: entry[:3])
    if not entries:
        return Listing("No variables are defined in the kernel yet (modules, functions and classes are not listed).",
                       0)
    rows = [[name, *_row(value)] for _, _, name, value in entries[:limit]]
    sampled = "; ~: estimated from a sample of its columns" if any(row[4].startswith(ESTIMATED) for row in rows) else ""
    text = (f"{plural(len(entries), 'variable')} in the kernel, data first, then by name. Memory is shallow (+: object "
            f"columns point to more{sampled}); modules, functions, classes and _private names are not listed.\n\n"
            + table(["name", "type", "shape", "dtypes", "memory", "value"], rows))
    if len(entries) > limit:
        text += (f"\n… and {len(entries) - limit:,} more (the table stops at {limit} rows). "
                 "Call variables with a name to look at any of them.")
    return Listing(text, len(entries))


def _row(value: Any) -> tuple[str, str, str, str, str]:
    kind = kind_of(value)
    label = LABELS.get(kind or "", type(value).__name__)
    try:
        return (label, *ROWS.get(kind or "", _plain_row)(value))
    except Exception as exc:  # a half-built or broken object must not break the table
        return label, "?", "", "", f"(could not be read: {type(exc).__name__})"
