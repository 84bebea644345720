"""Running code on a given event loop from any thread.

Widget clicks may arrive on a kernel subshell thread, while futures, bus events and widget state belong
to the kernel's loop. Services and views hand such work over with `run_on`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


def run_on(loop: asyncio.AbstractEventLoop | None, fn: Callable[..., Any], *args: Any) -> None:
    """Call `fn(*args)` now if we are on `loop` (or it is gone), else soon on `loop`, thread-safely."""
    if loop is None or loop.is_closed():
        if loop is None:
            fn(*args)
        return
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        fn(*args)
    else:
        loop.call_soon_threadsafe(fn, *args)
