"""Streaming a running tool's output to its card: the tail, at most every UPDATE_INTERVAL_S.

Code runs on another thread (live runs) or in another process (forks, workers), and each chunk would
otherwise resend the whole card; this keeps the card current without flooding the front end.
"""

from __future__ import annotations

import asyncio

from ..context import ToolContext

UPDATE_INTERVAL_S = 0.1
PREVIEW_CHARS = 8000
"""How much of the output's tail the card shows while the code runs."""


class OutputStream:
    """`write` may be called from the thread running the code; it hands the text to the loop that made it."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.loop = asyncio.get_running_loop()
        self.text = ""
        self.pending: asyncio.TimerHandle | None = None

    def write(self, chunk: str) -> None:
        self.loop.call_soon_threadsafe(self._add, chunk)

    def _add(self, chunk: str) -> None:
        self.text = (self.text + chunk)[-PREVIEW_CHARS:]
        if self.pending is None:
            self.pending = self.loop.call_later(UPDATE_INTERVAL_S, self._send)

    def _send(self) -> None:
        self.pending = None
        self.ctx.update(None, {"output": self.text})

    def close(self) -> None:
        if self.pending is not None:
            self.pending.cancel()
            self.pending = None
