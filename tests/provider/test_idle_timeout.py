"""A model that goes silent is given up after the idle timeout, through the real SDKs and the wire server."""

import time

import pytest

from opencode_nb.errors import ProviderError
from opencode_nb.provider import LLMMessage, LLMRequest, TextBlock, TextDelta, model_info
from opencode_nb.provider.anthropic import AnthropicProvider
from opencode_nb.provider.idle import DEFAULT_IDLE_TIMEOUT_S
from opencode_nb.provider.openai import OpenAIProvider
from opencode_nb.provider.registry import ProviderRegistry

from .wire_anthropic import anthropic_stream
from .wire_openai import openai_stream
from .wire_server import Hang, Stream

KEY = "sk-test-idle-123"


def request(provider: str) -> LLMRequest:
    model = model_info("anthropic", "claude-sonnet-4-6") if provider == "anthropic" else model_info("openai", "gpt-5")
    return LLMRequest(model=model, messages=[LLMMessage(role="user", content=[TextBlock(text="hi")])])


def make(provider: str, wire, idle_timeout_s: float):
    if provider == "anthropic":
        return AnthropicProvider(api_key=KEY, base_url=wire.url, idle_timeout_s=idle_timeout_s)
    return OpenAIProvider(api_key=KEY, base_url=f"{wire.url}/v1", idle_timeout_s=idle_timeout_s)


def stalled(provider: str, after: int) -> Stream:
    whole = anthropic_stream({"text": "Hello there, then silence"}) if provider == "anthropic" else \
        openai_stream("Hello there, then silence")
    return Stream(whole.events, stall_after=after, stall_s=30)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_stream_that_goes_silent_mid_answer_ends_as_a_retryable_error(wire, provider):
    wire.queue(stalled(provider, after=5))
    got = []
    started = time.monotonic()
    with pytest.raises(ProviderError) as err:
        async for event in make(provider, wire, 0.3).stream(request(provider)):
            got.append(event)
    assert time.monotonic() - started < 5  # not the SDK's 600 s, nor the server's 30 s stall
    assert err.value.retryable and err.value.kind == "connection"
    assert "sent nothing for 0.3 s" in str(err.value) and f"provider.{provider}.idle_timeout_s" in str(err.value)
    assert any(isinstance(e, TextDelta) for e in got)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_silence_before_the_first_event_counts_too(wire, provider):
    wire.queue(stalled(provider, after=0))
    with pytest.raises(ProviderError) as err:
        [e async for e in make(provider, wire, 0.3).stream(request(provider))]
    assert err.value.retryable and "sent nothing" in str(err.value)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_server_that_never_starts_its_response_is_given_up_too(wire, provider):
    wire.queue(Hang())
    started = time.monotonic()
    with pytest.raises(ProviderError) as err:
        [e async for e in make(provider, wire, 0.3).stream(request(provider))]
    assert time.monotonic() - started < 5
    assert err.value.retryable and "sent nothing for 0.3 s" in str(err.value)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_slow_but_steady_stream_is_not_cut(wire, provider):
    slow = anthropic_stream({"text": "steady"}) if provider == "anthropic" else openai_stream("steady")
    wire.queue(Stream(slow.events, delay_s=0.1))
    events = [e async for e in make(provider, wire, 0.5).stream(request(provider))]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "steady"


async def test_time_the_consumer_spends_between_events_is_not_silence(wire):
    import asyncio

    wire.queue(anthropic_stream({"text": "one two three"}))
    texts = []
    async for event in make("anthropic", wire, 0.2).stream(request("anthropic")):
        await asyncio.sleep(0.3)  # a busy consumer, longer than the timeout each time
        if isinstance(event, TextDelta):
            texts.append(event.text)
    assert "".join(texts) == "one two three"


def test_the_registry_passes_the_configured_timeout_and_defaults_to_120_s():
    from opencode_nb.config.schema import Config

    config = Config.model_validate({"provider": {
        "anthropic": {"api_key": KEY, "idle_timeout_s": 7.5},
        "openai": {"api_key": KEY},
        "local": {"type": "openai-compatible", "base_url": "http://127.0.0.1:9/v1", "idle_timeout_s": 300},
    }})
    registry = ProviderRegistry(config, env={})
    assert registry.resolve("anthropic/claude-sonnet-4-6")[0].idle_timeout_s == 7.5
    assert registry.resolve("openai/gpt-5")[0].idle_timeout_s == DEFAULT_IDLE_TIMEOUT_S == 120
    assert registry.resolve("local/llama")[0].idle_timeout_s == 300
