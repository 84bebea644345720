"""Fitting a request to the SDK that is installed, not to the one the code was written against.

The SDKs are dependencies with wide ranges (pyproject.toml), and their request methods take keyword
arguments only: a parameter one version does not have is a `TypeError` before anything is sent. Both
directions happen. anthropic 2.x removed `temperature`, `top_p` and `top_k` from `messages.create` (its types
no longer mention sampling at all, so the API is not taking them through that SDK either), and an agent with
`temperature:` crashed every call; an older SDK lacks parameters added since (openai 1.50 has no
`reasoning_effort`).

So each provider asks the installed method for its parameters once (`inspect.signature`, which sees through
the SDKs' overload decorators) and leaves out of the call what the method does not take, with one warning per
SDK version and parameter in the process (a `ConfigWarning`: what was asked for is in the configuration, and
that is where the person can change it). A parameter is dropped rather than smuggled through `extra_body`:
the SDK that removed it is the best word available on whether the endpoint still takes it, and a rejected
request would cost the whole step. The person who knows their endpoint takes it can send it through
`options.extra_body`, which goes out as written.
"""

from __future__ import annotations

import inspect
import threading
import warnings
from collections.abc import Callable
from typing import Any

from ..errors import ConfigWarning

_warned: set[tuple[str, str]] = set()
_lock = threading.Lock()


def accepted_parameters(method: Callable[..., Any]) -> frozenset[str] | None:
    """The keyword arguments `method` takes, or None when it takes any (`**kwargs`) or cannot be inspected."""
    try:
        parameters = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return None
    return frozenset(name for name in parameters if name != "self")


def fit_to_sdk(body: dict[str, Any], accepted: frozenset[str] | None, sdk: str) -> dict[str, Any]:
    """`body` without the keys the installed SDK's method does not take, each warned of once.

    Args:
        accepted: from `accepted_parameters`; None keeps everything.
        sdk: the SDK and its version as the person reads it, e.g. `anthropic 2.15.0`.
    """
    if accepted is None:
        return body
    dropped = [key for key in body if key not in accepted]
    for key in dropped:
        _warn_once(sdk, key)
    return {key: value for key, value in body.items() if key in accepted} if dropped else body


def _warn_once(sdk: str, key: str) -> None:
    with _lock:
        if (sdk, key) in _warned:
            return
        _warned.add((sdk, key))
    warnings.warn(f"the installed SDK ({sdk}) takes no `{key}`, so it is not sent (from the agent's `{key}` or the "
                  f"model's `options.{key}`); to send it anyway, give it in `options.extra_body`, which goes out as "
                  "written", ConfigWarning, stacklevel=3)


def sdk_label(module: Any) -> str:
    """`anthropic 2.15.0`: the name and version of an imported SDK module."""
    return f"{module.__name__} {getattr(module, '__version__', '(unknown version)')}"
