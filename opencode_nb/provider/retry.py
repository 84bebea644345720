"""When to try a failed model call again, and after how long.

The SDKs' own retries are off (`max_retries=0`), so this is the only policy: exponential backoff, a
server's `retry-after` honoured but capped (the SDKs would sleep for whatever a header says), and a
bounded number of attempts, each one visible to the person as a `retry` status.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ProviderError


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    """Calls in all, the first included; after that many failures the error is recorded and the run stops."""
    base_s: float = 1.0
    """Wait before the first retry when the server names no time."""
    factor: float = 2.0
    cap_s: float = 30.0
    """No wait is ever longer, whatever a server's retry-after says: the person is watching."""

    def should_retry(self, failures: int, error: ProviderError) -> bool:
        """Whether another call is worth making after `failures` failed ones (the last being `error`)."""
        return error.retryable and failures < self.max_attempts

    def delay(self, attempt: int, error: ProviderError) -> float:
        """Seconds to wait before retry number `attempt` (1-based)."""
        if error.retry_after_s is not None and error.retry_after_s >= 0:
            return min(error.retry_after_s, self.cap_s)
        return min(self.base_s * self.factor ** max(attempt - 1, 0), self.cap_s)
