"""Model figures and prices."""

import pytest

from opencode_nb.config import ModelConfig
from opencode_nb.provider import Usage, cost, model_info

ANTHROPIC = ["claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5", "claude-sonnet-4", "claude-3-7-sonnet",
             "claude-3-5-haiku"]
OPENAI = ["gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-4.1", "gpt-4.1-mini", "gpt-4o", "gpt-4o-mini", "o3", "o4-mini"]


@pytest.mark.parametrize(("provider", "model"), [("anthropic", m) for m in ANTHROPIC] + [("openai", m) for m in OPENAI])
def test_every_common_model_has_figures_and_prices(provider, model):
    info = model_info(provider, model)
    assert info.context >= 128_000 and info.output >= 8_192 and info.cost.input > 0 and info.cost.output > 0
    assert info.cost.cache_read < info.cost.input


def test_known_models_carry_their_limits_and_prices():
    sonnet = model_info("anthropic", "claude-sonnet-4-5")
    assert (sonnet.context, sonnet.output, sonnet.cost.input, sonnet.cost.output) == (200_000, 64_000, 3.0, 15.0)
    assert (sonnet.cost.cache_read, sonnet.cost.cache_write, sonnet.reasoning) == (0.30, 3.75, True)
    assert model_info("anthropic", "claude-opus-4-1").cost.output == 75.0
    gpt5 = model_info("openai", "gpt-5")
    assert (gpt5.context, gpt5.output, gpt5.cost.input, gpt5.cost.cache_read) == (400_000, 128_000, 1.25, 0.125)
    assert model_info("openai", "gpt-4.1").context == 1_047_576
    assert not model_info("openai", "gpt-4o").reasoning and model_info("openai", "o3").reasoning


def test_dated_snapshots_and_short_names_find_their_family():
    assert model_info("anthropic", "claude-sonnet-4-5-20250929").cost.input == 3.0
    assert model_info("anthropic", "claude-3-5-haiku-20241022").output == 8_192
    assert model_info("openai", "gpt-4o-2024-08-06").cost.input == 2.5
    assert model_info("anthropic", "claude-sonnet-4").id == "claude-sonnet-4"  # the id sent is the one asked for


def test_unknown_models_get_conservative_defaults():
    info = model_info("ollama", "qwen3:8b")
    assert (info.context, info.output, info.cost.input, info.reasoning) == (128_000, 8_192, 0.0, False)
    assert (info.full_id, info.name) == ("ollama/qwen3:8b", "qwen3:8b")
    assert model_info("openai", "gpt-9-turbo").context == 128_000


def test_config_overrides_single_figures_and_an_explicit_zero_counts():
    info = model_info("anthropic", "claude-sonnet-4-5", override=ModelConfig(
        context=1_000_000, cost={"input": 6.0, "cache_write": 0}, options={"thinking": True}))
    assert info.context == 1_000_000 and info.output == 64_000
    assert (info.cost.input, info.cost.output, info.cost.cache_write) == (6.0, 15.0, 0.0)
    assert info.options == {"thinking": True}


def test_cost_prices_cache_reads_and_writes_separately():
    sonnet = model_info("anthropic", "claude-sonnet-4-5")
    usage = Usage(input=1_000_000, output=100_000, cache_read=2_000_000, cache_write=1_000_000)
    assert cost(usage, sonnet) == pytest.approx(3.0 + 1.5 + 0.6 + 3.75)


def test_openai_cached_and_reasoning_tokens_are_priced_once():
    # 1M prompt tokens of which 600k cached; 100k completion tokens of which 40k reasoning (as the provider reports)
    usage = Usage(input=400_000, cache_read=600_000, output=60_000, reasoning=40_000)
    assert cost(usage, model_info("openai", "gpt-5")) == pytest.approx(0.4 * 1.25 + 0.6 * 0.125 + 0.1 * 10.0)


def test_unknown_models_cost_nothing():
    assert cost(Usage(input=10**6, output=10**6), model_info("ollama", "llama3")) == 0.0
