"""Turning whatever an SDK raised into one `ProviderError` the loop can act on.

Kinds, and whether the loop tries again:

    rate_limit        429, with the server's retry-after        retryable
    overloaded        529, `overloaded_error` (also in-stream)  retryable
    server            5xx, 408, 409, transient in-stream errors retryable
    connection        refused, reset, timed out, dropped mid-stream (the Anthropic SDK lets the raw
                      transport error escape), silent past the idle timeout (idle.py)
                                                                retryable
    auth              401/403: names the variable or config key to check
    quota             429 `insufficient_quota`: waiting will not help
    context_overflow  the prompt is larger than the model's context: compact, don't retry
    content_filter    the provider refused the content
    bad_request       any other 4xx
    provider          anything else
"""

from __future__ import annotations

import email.utils
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import ProviderError

OVERFLOW_HINTS = ("prompt is too long", "context length", "context_length_exceeded", "maximum context",
                  "context window", "too many tokens", "input is too long", "request_too_large")
FILTER_TAGS = {"content_filter", "content_policy_violation", "responsibleaipolicyviolation", "refusal"}
TRANSIENT_TAGS = {"api_error", "server_error", "internal_error", "internal_server_error", "timeout",
                  "timeout_error", "service_unavailable"}
TRANSPORT_NAMES = {"APIConnectionError", "APITimeoutError", "TransportError", "TimeoutException",
                   "ConnectionError", "IncompleteRead", "TimeoutError"}


def classify(
    exc: BaseException, provider: str, *, key_hint: str | None = None, secrets: Iterable[str] = ()
) -> ProviderError:
    """One `ProviderError` for any exception an SDK call raised.

    Args:
        exc: what the SDK (or its HTTP library) raised.
        provider: the name shown to the person, e.g. "Anthropic".
        key_hint: where the key comes from, for auth failures (e.g. "ANTHROPIC_API_KEY or ...").
        secrets: strings never to show (the API key), blanked out of the message.
    """
    error = _error(exc)
    status = getattr(exc, "status_code", None)
    in_stream = status == 200  # the Anthropic SDK raises an in-stream `error` event with the stream's status
    status = None if in_stream else status
    message = _redact(_message(exc, error), secrets)
    tags = {str(error.get(k)).lower() for k in ("type", "code") if error.get(k)}
    retry_after = _retry_after(getattr(exc, "response", None))

    def fail(kind: str, text: str, retryable: bool = False, code: int | None = status) -> ProviderError:
        return ProviderError(f"{provider} {text}", retryable=retryable, status=code,
                             retry_after_s=retry_after if retryable else None, kind=kind)

    if status == 529 or tags & {"overloaded_error", "overloaded"} or (in_stream and "overloaded" in message.lower()):
        return fail("overloaded", f"is overloaded: {message}", True, status or 529)
    if "insufficient_quota" in tags:
        return fail("quota", f"quota exhausted: {message}. Check the plan and billing of this key.")
    if status == 429 or tags & {"rate_limit_error", "rate_limit_exceeded", "too_many_requests"}:
        return fail("rate_limit", f"rate limit: {message}", True, 429)
    if status in (401, 403) or tags & {"authentication_error", "permission_error", "invalid_api_key"}:
        what = "refused the API key" if status != 403 else "denied access with this API key"
        check = key_hint or "the provider's API key variable or provider.<id>.api_key"
        return fail("auth", f"{what} ({status or 'in-stream'}): {message}. Check {check}.")
    if status == 413 or any(h in message.lower() for h in OVERFLOW_HINTS) or tags & {"context_length_exceeded"}:
        return fail("context_overflow", f"request is larger than the model's context: {message}")
    if tags & FILTER_TAGS or "content management policy" in message.lower():
        return fail("content_filter", f"content filter refused the request: {message}")
    if status is not None and (status >= 500 or status in (408, 409)):
        return fail("server", f"server error ({status}): {message}", True)
    if status == 404:
        return fail("bad_request", f"does not know this model or endpoint (404): {message}. Check the model id "
                    "and base_url.")
    if status is not None:
        return fail("bad_request", f"rejected the request ({status}): {message}")
    if error and (in_stream or _is_api_error(exc)):
        transient = bool(tags & TRANSIENT_TAGS) or not tags
        return fail("server" if transient else "provider", f"stream error: {message}", transient)
    if _is_transport(exc):
        cause = exc.__cause__ or exc.__context__
        if cause is not None and str(cause) and str(cause) not in message:
            message = _redact(f"{message} ({type(cause).__name__}: {cause})", secrets)
        return fail("connection", f"connection failed: {message}", True)
    return fail("provider", f"failed: {type(exc).__name__}: {message}")


def _is_transport(exc: BaseException) -> bool:
    """Connection-level failures, wrapped by the SDK or raw from its HTTP library (httpx, httpx2, httpcore)."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    module = type(exc).__module__
    return bool(names & TRANSPORT_NAMES) or module.startswith(("httpx", "httpcore", "h11"))


def _is_api_error(exc: BaseException) -> bool:
    return any(cls.__name__ == "APIError" for cls in type(exc).__mro__)


def _error(exc: BaseException) -> dict[str, Any]:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return inner
    return {}


def _message(exc: BaseException, error: dict[str, Any]) -> str:
    if error.get("message"):
        return str(error["message"])
    return str(getattr(exc, "message", None) or exc) or type(exc).__name__


def _redact(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def _retry_after(response: Any) -> float | None:
    """Seconds the server asks us to wait: `retry-after-ms` first, then `retry-after` (seconds or a date)."""
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        if headers.get("retry-after-ms"):
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
    except ValueError:
        pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, parsed.timestamp() - time.time())


class MessageCache:
    """Remembers the wire form of each neutral message by identity.

    The loop hands the same `LLMMessage` objects step after step, so only the newest ones are converted.
    The message itself is kept alongside its wire form, so an id is never reused while cached.
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
