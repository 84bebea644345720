"""Turning whatever an SDK raised into one `ProviderError` the loop can act on."""

from __future__ import annotations

import email.utils
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..errors import ProviderError

OVERFLOW_HINTS = ("prompt is too long", "context length", "context_length_exceeded", "maximum context",
                  "too many tokens", "input is too long")


def classify(exc: BaseException, provider: str) -> ProviderError:
    """Kinds: rate_limit, overloaded, server, connection (retryable); auth, bad_request, context_overflow."""
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    error_type = _error_type(body)
    message = _message(exc, body)
    retry_after = _retry_after(getattr(exc, "response", None))
    if error_type == "overloaded_error" or status == 529:
        return ProviderError(f"{provider} is overloaded: {message}", retryable=True, status=status or 529,
                             retry_after_s=retry_after, kind="overloaded")
    if status == 429 or error_type in ("rate_limit_error", "rate_limit_exceeded"):
        return ProviderError(f"{provider} rate limit: {message}", retryable=True, status=429,
                             retry_after_s=retry_after, kind="rate_limit")
    if status in (401, 403) or error_type in ("authentication_error", "permission_error"):
        return ProviderError(f"{provider} refused the API key ({status}): {message}. Check the key in your "
                             "environment or provider.<id>.api_key.", status=status, kind="auth")
    if any(h in message.lower() for h in OVERFLOW_HINTS):
        return ProviderError(f"{provider}: the request is larger than the model's context: {message}",
                             status=status, kind="context_overflow")
    if status is not None and (status >= 500 or status in (408, 409) or (status == 200 and error_type)):
        return ProviderError(f"{provider} server error ({status}): {message}", retryable=True, status=status,
                             retry_after_s=retry_after, kind="server")
    if status is not None:
        return ProviderError(f"{provider} rejected the request ({status}): {message}", status=status,
                             kind="bad_request")
    if _is_transport(exc):
        return ProviderError(f"{provider} connection failed: {message}", retryable=True, kind="connection")
    return ProviderError(f"{provider} failed: {type(exc).__name__}: {message}", kind="provider")


def _is_transport(exc: BaseException) -> bool:
    """Connection-level failures, wrapped by the SDK or (a dropped Anthropic stream) raw from its HTTP library."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    module = type(exc).__module__
    return bool(names & {"APIConnectionError", "APITimeoutError", "TransportError", "TimeoutException",
                         "ConnectionError", "IncompleteRead"}) or module.startswith(("httpx", "httpcore", "h11"))


def _error_type(body: Any) -> str | None:
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return error.get("type") or error.get("code")
    return None


def _message(exc: BaseException, body: Any) -> str:
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(getattr(exc, "message", None) or exc) or type(exc).__name__


def _retry_after(response: Any) -> float | None:
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    if headers.get("retry-after-ms"):
        try:
            return float(headers["retry-after-ms"]) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


class MessageCache:
    """Remembers the wire form of each neutral message by identity.

    The loop hands the same `LLMMessage` objects step after step, so only the newest ones are converted.
    """

    def __init__(self, convert: Callable[[Any], Any], size: int = 4096) -> None:
        self._convert = convert
        self._size = size
        self._items: OrderedDict[int, tuple[Any, Any]] = OrderedDict()

    def __call__(self, message: Any) -> Any:
        key = id(message)
        hit = self._items.get(key)
        if hit is not None and hit[0] is message:
            self._items.move_to_end(key)
            return hit[1]
        converted = self._convert(message)
        self._items[key] = (message, converted)
        if len(self._items) > self._size:
            self._items.popitem(last=False)
        return converted
