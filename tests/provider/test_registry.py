import logging

import pytest

from opencode_nb.config import Config
from opencode_nb.errors import ConfigError, ProviderError
from opencode_nb.provider import ProviderRegistry, Scripted
from opencode_nb.provider.anthropic import AnthropicProvider
from opencode_nb.provider.openai import OpenAIProvider


def registry(config=None, env=None):
    return ProviderRegistry(Config.model_validate(config or {}), env or {})


def test_a_missing_key_names_the_variable_to_set():
    with pytest.raises(ProviderError, match=r"set ANTHROPIC_API_KEY or provider\.anthropic\.api_key"):
        registry().resolve("anthropic/claude-sonnet-4-5")
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        registry().resolve("openai/gpt-5")


def test_keys_come_from_the_environment_or_config_and_never_show(caplog):
    secret = "sk-ant-very-secret"
    with caplog.at_level(logging.DEBUG):
        provider, model = registry(env={"ANTHROPIC_API_KEY": secret}).resolve("anthropic/claude-sonnet-4-5")
    assert isinstance(provider, AnthropicProvider) and model.id == "claude-sonnet-4-5"
    assert secret not in repr(provider) and secret not in caplog.text
    provider, _ = registry({"provider": {"openai": {"api_key": "sk-cfg"}}}).resolve("openai/gpt-5")
    assert isinstance(provider, OpenAIProvider) and "sk-cfg" not in repr(provider)


def test_an_openai_compatible_provider_needs_a_base_url_but_no_key():
    config = {"provider": {"ollama": {"type": "openai-compatible", "base_url": "http://127.0.0.1:11434/v1",
                                      "models": {"qwen3:8b": {"context": 32768}}}}}
    provider, model = registry(config).resolve("ollama/qwen3:8b")
    assert isinstance(provider, OpenAIProvider) and model.context == 32768
    with pytest.raises(ConfigError, match="needs base_url"):
        registry({"provider": {"vllm": {"type": "openai-compatible"}}}).resolve("vllm/x")


def test_unknown_providers_and_bad_ids_are_clear_errors():
    with pytest.raises(ConfigError, match="unknown provider 'mystery'"):
        registry().resolve("mystery/model")
    with pytest.raises(ConfigError, match="provider/model"):
        registry().resolve("gpt-5")


def test_a_registered_provider_serves_its_id():
    reg = registry()
    scripted = Scripted([])
    reg.register("mine", scripted)
    assert reg.resolve("mine/anything")[0] is scripted


def test_the_scripted_provider_is_built_from_config():
    provider, _ = registry({"provider": {"scripted": {"script": [{"text": "hi"}]}}}).resolve("scripted/demo")
    assert isinstance(provider, Scripted) and len(provider.turns) == 1
