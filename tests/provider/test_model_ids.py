"""A model id that cannot be served as written is refused before a run, with the id meant: a known model
misspelt, a bare model name, a provider misspelt. A model the catalog does not know at all (newer than it, or
a server's own) is used as asked."""

from __future__ import annotations

import pytest

from opencode_nb.config.schema import Config
from opencode_nb.errors import ConfigError
from opencode_nb.provider.catalog import misspelt
from opencode_nb.provider.registry import ModelIdError, ProviderRegistry


def registry(config: dict | None = None) -> ProviderRegistry:
    return ProviderRegistry(Config.model_validate(config or {}), env={"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"})


@pytest.mark.parametrize(("family", "typed", "meant"), [
    ("anthropic", "claude-sonet-4-6", "claude-sonnet-4-6"),
    ("anthropic", "claud-haiku-4-5", "claude-haiku-4-5"),
    ("anthropic", "claude-sonnet-4.6", "claude-sonnet-4-6"),
    ("anthropic", "claude-sonet-4-5-20250929", "claude-sonnet-4-5-20250929"),
    ("openai", "GPT-5", "gpt-5"), ("openai", "gpt5", "gpt-5"), ("openai", "gtp-5", "gpt-5"),
    ("openai", "gpt-5-mino", "gpt-5-mini"),
])
def test_a_known_model_misspelt_is_recognised(family, typed, meant):
    assert misspelt(family, typed) == meant


@pytest.mark.parametrize(("family", "model"), [
    ("anthropic", "claude-opus-4-7"), ("anthropic", "claude-sonnet-4-6"), ("anthropic", "claude-sonnet-4-5-20250929"),
    ("openai", "gpt-5.1"), ("openai", "gpt-5-pro"), ("openai", "gpt-5-codex"), ("openai", "o3-pro"),
    ("openai", "gpt-4.1-nano"),
])
def test_a_newer_or_another_model_is_not_taken_for_a_typo(family, model):
    assert misspelt(family, model) is None
    registry().check_model(f"{family}/{model}")


def test_a_misspelt_model_id_is_refused_with_the_id_meant_and_how_to_use_it_anyway():
    with pytest.raises(ModelIdError) as refused:
        registry().resolve("anthropic/claude-sonet-4-6")
    assert str(refused.value) == (
        "'anthropic/claude-sonet-4-6' is not a model the catalog knows: did you mean anthropic/claude-sonnet-4-6? "
        "(To use the id as written, name it under provider.anthropic.models in opencode.yaml.)")
    assert isinstance(refused.value, ConfigError) and refused.value.key == "model"
    declared = registry({"provider": {"anthropic": {"models": {"claude-sonet-4-6": {}}}}})
    assert declared.resolve("anthropic/claude-sonet-4-6")[1].id == "claude-sonet-4-6"


def test_a_bare_model_name_is_suggested_with_its_provider():
    with pytest.raises(ModelIdError) as refused:
        registry().check_model("gpt-5")
    assert str(refused.value) == "'gpt-5' is not a model id (provider/model): did you mean openai/gpt-5?"
    with pytest.raises(ModelIdError, match="did you mean anthropic/claude-sonnet-4-6"):
        registry().check_model("claude-sonet-4-6")
    with pytest.raises(ModelIdError, match=r"'sonnet' is not a model id \(provider/model\): e\.g\. anthropic/"):
        registry().check_model("sonnet")


def test_a_known_model_under_the_wrong_provider_names_its_own():
    with pytest.raises(ModelIdError, match="did you mean openai/gpt-5"):
        registry().check_model("anthropic/gpt-5")


def test_a_misspelt_provider_is_named_and_no_message_says_config():
    with pytest.raises(ModelIdError) as refused:
        registry().check_model("antropic/claude-sonnet-4-6")
    assert str(refused.value).startswith("unknown provider 'antropic' (did you mean anthropic?); known: anthropic")
    for bad in ("gpt-5", "anthropic/claude-sonet-4-6", "antropic/x"):
        with pytest.raises(ModelIdError) as refused:
            registry().check_model(bad)
        assert not str(refused.value).startswith("config"), "the id may come from an option, not a file"


def test_a_server_of_ones_own_serves_any_name():
    proxy = registry({"provider": {"openai": {"base_url": "http://127.0.0.1:1/v1"}}})
    proxy.check_model("openai/claude-sonet-4-6")
    registry().check_model("scripted/demos")
