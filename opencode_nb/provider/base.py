"""What a provider is: something that streams normalized events for a neutral request."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from .events import ProviderEvent
from .request import LLMRequest


@runtime_checkable
class Provider(Protocol):
    def stream(self, request: LLMRequest) -> AsyncIterator[ProviderEvent]:
        """Yield events until a `StepFinish`.

        Raises:
            ProviderError: classified once, here: `retryable`, `status`, `retry_after_s`, `kind`.
        """
        ...
