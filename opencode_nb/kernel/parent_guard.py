"""Keeps each request's replies addressed to it when a comm message straddles the end of a cell.

ipykernel 7.4 dispatches `comm_*` messages concurrently while a cell holds the shell (our attached
`%%agent` cells rely on it: a click answers an ask while the cell awaits). Its dispatcher notes the shell's
parent request when the comm arrives and sets it back when the comm is handled. If the cell ended and the
next one started in between, that "set back" re-addresses the next cell to the finished one: its idle status
goes out under the old request's id, so the front end keeps the cell at `[*]` with no execution count, and a
Run All never ends. A front end sends comm messages at exactly those moments (a widget's reply, the
extension asking what a finished run can undo), so this happens to people, not only in tests.

`guard` wraps the kernel's `set_parent`: on each shell thread it remembers the request it runs now; a parent
set back to an earlier request of that thread (never a new one, never a comm's own) becomes the current
one. The wrapper changes nothing when the dispatcher behaves.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

COMMS = frozenset({"comm_open", "comm_msg", "comm_close"})
REMEMBERED = 256
"""Earlier requests per shell thread recognised as stale (a comm is handled within a few cells of its
arrival)."""


class _Thread:
    """The requests one shell thread (the main shell or a subshell) ran, newest last."""

    def __init__(self) -> None:
        self.ident: Any = None
        self.parent: dict[str, Any] = {}
        self.earlier: deque[str] = deque(maxlen=REMEMBERED)


def guard(kernel: Any) -> bool:
    """Wrap `kernel.set_parent` once; False when the kernel has none (a terminal IPython)."""
    original = getattr(kernel, "set_parent", None)
    if original is None or getattr(original, "_ocnb_guarded", False):
        return False
    threads: dict[int, _Thread] = {}

    def set_parent(ident: Any, parent: dict[str, Any], channel: str = "shell") -> None:
        if channel == "shell":
            ident, parent = _current(threads.setdefault(threading.get_ident(), _Thread()), ident, parent)
        original(ident, parent, channel)

    set_parent._ocnb_guarded = True  # type: ignore[attr-defined]
    kernel.set_parent = set_parent
    return True


def _current(thread: _Thread, ident: Any, parent: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    header = parent.get("header") or {}
    msg_id = header.get("msg_id")
    if not msg_id or header.get("msg_type") in COMMS:
        return ident, parent
    now = (thread.parent.get("header") or {}).get("msg_id")
    if msg_id == now:
        return ident, parent
    if msg_id in thread.earlier:
        return thread.ident, thread.parent  # set back to a request that has ended: keep the running one
    if now:
        thread.earlier.append(now)
    thread.ident, thread.parent = ident, parent
    return ident, parent
