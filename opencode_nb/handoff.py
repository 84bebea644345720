"""Running code on a given event loop from any thread.

Widget clicks may arrive on a kernel subshell thread, while futures, bus events and widget state belong
to the kernel's loop. Services and views hand such work over with `run_on`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


def run_on(loop: asyncio.AbstractEventLoop | None, fn: Callable[..., Any], *args: Any) -> None:
    """Call `fn(*args)` on `loop`: now when we are on it (or no loop was ever known), else soon, from any
    thread. Work for a loop that has closed is dropped: nothing waits on it any more."""
    if loop is None or _running() is loop:
        fn(*args)
    elif not loop.is_closed():
        loop.call_soon_threadsafe(fn, *args)


def _running() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
