"""Time-ordered identifiers.

An id is `<prefix>_` + 12 hex digits of (milliseconds · 4096 + a per-millisecond counter) + 14 random
base62 characters. Ids of one prefix therefore sort as strings in creation order, which the store and the
loop rely on to order messages and parts without a separate sequence column.
"""

from __future__ import annotations

import os
import threading
import time

_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_lock = threading.Lock()
_last = 0

PREFIXES = {
    "session": "ses",
    "message": "msg",
    "part": "prt",
    "permission": "per",
    "question": "que",
    "tool": "tool",
    "run": "run",
}


NOT_STARTED = "~"
"""The floor of a run that has not started: `~` sorts after every id, so "messages since it" are none, and a
floor equal to it says the run never got as far as its first message."""


def ascending(kind: str) -> str:
    """A new id for `kind` (one of PREFIXES) that sorts after every id made before it in this process."""
    global _last
    with _lock:
        now = int(time.time() * 1000) * 4096
        _last = now if now > _last else _last + 1
        stamp = _last
    rand = "".join(_ALPHABET[b % 62] for b in os.urandom(14))
    return f"{PREFIXES[kind]}_{stamp:012x}{rand}"
