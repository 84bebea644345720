"""Settling a future from a callback that may come late.

A thread, a file descriptor or the front end can answer after the waiter gave up (it was cancelled, timed out
or the kernel stopped it), and `set_result` on a done future raises inside the event loop's callback, where
nobody catches it. These two are what every such callback schedules.
"""

from __future__ import annotations

import asyncio
from typing import TypeVar

T = TypeVar("T")


def settle(future: asyncio.Future[T], value: T) -> None:
    if not future.done():
        future.set_result(value)


def fail(future: asyncio.Future[T], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)
