"""Fitting a call to the installed SDK: what its method does not take is left out, with one warning."""

from __future__ import annotations

import warnings

import pytest

from opencode_nb.errors import ConfigWarning
from opencode_nb.provider import LLMMessage, LLMRequest, TextBlock, model_info, sdk_fit
from opencode_nb.provider.anthropic import AnthropicProvider

from .wire_anthropic import anthropic_stream


def create(*, model: str, max_tokens: int, stream: bool = False) -> None:
    """A request method of the SDKs' shape: keyword arguments only."""


def test_keys_the_method_does_not_take_are_left_out_and_warned_of_once_per_sdk_and_key(monkeypatch):
    monkeypatch.setattr(sdk_fit, "_warned", set())
    accepted = sdk_fit.accepted_parameters(create)
    assert accepted == {"model", "max_tokens", "stream"}
    body = {"model": "m", "max_tokens": 5, "temperature": 0.2}
    with pytest.warns(ConfigWarning, match=r"the installed SDK \(fake 1\.0\) takes no `temperature`"):
        assert sdk_fit.fit_to_sdk(body, accepted, "fake 1.0") == {"model": "m", "max_tokens": 5}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sdk_fit.fit_to_sdk(body, accepted, "fake 1.0") == {"model": "m", "max_tokens": 5}
    assert sdk_fit.fit_to_sdk(body, None, "fake 1.0") is body  # a method taking **kwargs takes everything


def test_a_method_taking_any_keyword_is_not_fitted():
    def anything(**kwargs: object) -> None: ...

    assert sdk_fit.accepted_parameters(anything) is None


async def test_an_agent_temperature_never_crashes_the_installed_anthropic_sdk(wire, monkeypatch):
    """The venv's SDK, whichever it is: the call goes through, with temperature sent only where it is taken."""
    import anthropic

    monkeypatch.setattr(sdk_fit, "_warned", set())
    wire.queue(anthropic_stream({"text": "ok"}))
    provider = AnthropicProvider(api_key="sk-ant-test", base_url=wire.url)
    request = LLMRequest(model=model_info("anthropic", "claude-sonnet-4-6"), temperature=0.4, top_p=0.8,
                         messages=[LLMMessage(role="user", content=[TextBlock(text="hi")])])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        events = [e async for e in provider.stream(request)]
    assert events[-1].type == "finish"
    takes = sdk_fit.accepted_parameters(anthropic.AsyncAnthropic(api_key="x").messages.create)
    if takes is not None and "temperature" not in takes:
        assert "temperature" not in wire.last.body
        assert any("takes no `temperature`" in str(w.message) for w in caught)
    else:
        assert wire.last.body["temperature"] == 0.4
