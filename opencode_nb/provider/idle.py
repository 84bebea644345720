"""Giving up on a model that has gone silent.

The SDKs' own timeout (600 s, per read) is a bound on a dead server, not on a stuck stream: a model that
stops sending mid-answer keeps the person waiting ten minutes. Here every wait for the stream's next event,
and the wait for the response itself, is bounded by `idle_timeout_s` (`provider.<id>.idle_timeout_s`,
default `DEFAULT_IDLE_TIMEOUT_S`). Time the consumer spends between events does not count: only silence
from the provider does. Running out is a retryable `connection` error, so the loop's retry policy decides.

The timeout cancels the pending read; the cancellation unwinds the SDK's iterator, and the provider's
`async with` around the stream then closes the connection.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from ..errors import ProviderError

T = TypeVar("T")

DEFAULT_IDLE_TIMEOUT_S = 120.0
"""Silence long enough to mean a stuck stream: models pause while thinking, but not for two minutes."""


def silence(provider: str, provider_id: str, idle_s: float) -> ProviderError:
    return ProviderError(
        f"{provider} sent nothing for {idle_s:g} s, so the response was given up; "
        f"provider.{provider_id}.idle_timeout_s sets how long to wait",
        retryable=True, kind="connection",
    )


async def first(response: Awaitable[T], idle_s: float, on_silence: Callable[[], ProviderError]) -> T:
    """Await `response` (the SDK's response headers, or the stream's next event), giving up after `idle_s`."""
    try:
        async with asyncio.timeout(idle_s) as scope:
            return await response
    except TimeoutError:
        if scope.expired():
            raise on_silence() from None
        raise  # the source's own timeout, not ours


async def bounded(
    events: AsyncIterator[T], idle_s: float, on_silence: Callable[[], ProviderError]
) -> AsyncIterator[T]:
    """`events`, failing with `on_silence` when the next one takes longer than `idle_s` to arrive."""
    while True:
        try:
            event = await first(anext(events), idle_s, on_silence)
        except StopAsyncIteration:
            return
        yield event  # outside the timeout: the consumer's time is not the provider's silence
