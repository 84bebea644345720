"""How the session store turns a model into row text and row text back into models.

Text that UTF-8 cannot encode (surrogates, from a model's `\\ud83d` escapes) is stored with split pairs
joined and lone halves as U+FFFD instead of failing the write. Known secret values are redacted here, where
every row is made, so nothing stored holds a key (see `secrets`).
"""

from __future__ import annotations

import gc
import json
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager

from pydantic import BaseModel, TypeAdapter
from pydantic_core import PydanticSerializationError

from ... import secrets
from ..events import Todo

log = logging.getLogger("opencode_nb.session.store")
"""One logger for every module of the store, named as it was before the store was split into modules, so
a filter or level set on it still reaches every warning the store gives."""

todos_adapter = TypeAdapter(list[Todo])
"""A session's todo list is one row, the whole list as a JSON array."""

_UNPAIRED = re.compile("[\ud800-\udfff]")


def row_json(model: BaseModel) -> str:
    """The row text of a model; an unpaired surrogate, which UTF-8 cannot encode, becomes U+FFFD. Known secret
    values are redacted here, where every row is made, so nothing stored holds a key (see `secrets`)."""
    try:
        text = model.model_dump_json()
    except PydanticSerializationError:
        # surrogates, which UTF-8 cannot encode: the rare slow path (the usual one must stay one call)
        text = row_text(json.dumps(model.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":")))
    return secrets.active().redact_json(text)


def row_text(value: str) -> str:
    """Split surrogate pairs joined into their character, lone halves replaced by U+FFFD."""
    if _UNPAIRED.search(value) is None:
        return value
    return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large history is built.

    Validating ten thousand parts allocates hundreds of thousands of objects, none of them garbage; the
    collector's sweeps over them made the median load of a 10k-part session nearly twice as slow.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def first_line(exc: Exception) -> str:
    """The gist of a validation error, for a warning that must stay one line."""
    text = str(exc)
    lines = text.splitlines()
    # pydantic puts the count on the first line and the field and problem on the next two
    return " ".join(line.strip() for line in lines[:3]) if lines else text
