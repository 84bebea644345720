"""When to try a failed model call again, and after how long."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ProviderError


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    """Retries after the first failure; then the error is recorded on the message and the run stops."""
    base_s: float = 2.0
    factor: float = 2.0
    cap_s: float = 60.0
    """No wait is ever longer, whatever a server's retry-after says: the person is watching."""

    def delay(self, attempt: int, error: ProviderError) -> float:
        """Seconds to wait before retry number `attempt` (1-based)."""
        if error.retry_after_s is not None and error.retry_after_s >= 0:
            return min(error.retry_after_s, self.cap_s)
        return min(self.base_s * self.factor ** (attempt - 1), self.cap_s)
