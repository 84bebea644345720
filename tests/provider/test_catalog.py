import pytest

from opencode_nb.config import ModelConfig
from opencode_nb.errors import ProviderError
from opencode_nb.provider import Usage, cost, model_info
from opencode_nb.provider.retry import RetryPolicy


def test_known_models_carry_their_limits_and_prices():
    sonnet = model_info("anthropic", "claude-sonnet-4-5")
    assert (sonnet.context, sonnet.output, sonnet.cost.input, sonnet.cost.output) == (200_000, 64_000, 3.0, 15.0)
    assert model_info("openai", "gpt-5").context == 400_000


def test_unknown_models_get_conservative_defaults():
    info = model_info("ollama", "qwen3:8b")
    assert (info.context, info.output, info.cost.input) == (128_000, 8_192, 0.0)


def test_config_overrides_single_figures():
    info = model_info("anthropic", "claude-sonnet-4-5", override=ModelConfig(context=1_000_000,
                                                                               cost={"input": 6.0}))
    assert info.context == 1_000_000 and info.cost.input == 6.0 and info.cost.output == 15.0


def test_cost_prices_cache_reads_and_writes_separately():
    sonnet = model_info("anthropic", "claude-sonnet-4-5")
    usage = Usage(input=1_000_000, output=100_000, cache_read=2_000_000, cache_write=1_000_000)
    assert cost(usage, sonnet) == pytest.approx(3.0 + 1.5 + 0.6 + 3.75)


def test_retry_delays_grow_exponentially_and_honour_retry_after_up_to_a_cap():
    policy = RetryPolicy(base_s=1, factor=2, cap_s=30)
    plain = ProviderError("x", retryable=True)
    assert [policy.delay(n, plain) for n in (1, 2, 3, 6)] == [1, 2, 4, 30]
    assert policy.delay(1, ProviderError("x", retryable=True, retry_after_s=7)) == 7
    assert policy.delay(1, ProviderError("x", retryable=True, retry_after_s=3600)) == 30
