"""`ws.providers`: model ids to providers, keys from config or the environment, never shown."""

import logging
import subprocess
import sys

import pytest

from opencode_nb.config import Config
from opencode_nb.errors import ConfigError, ProviderError
from opencode_nb.provider import LLMMessage, LLMRequest, ProviderRegistry, Scripted, TextBlock
from opencode_nb.provider.anthropic import AnthropicProvider
from opencode_nb.provider.openai import OpenAIProvider

from .wire_anthropic import anthropic_failure, anthropic_stream


def registry(config=None, env=None):
    return ProviderRegistry(Config.model_validate(config or {}), env or {})


def test_a_missing_key_names_the_variable_and_the_config_key_to_set():
    with pytest.raises(ProviderError, match=r"set ANTHROPIC_API_KEY or provider\.anthropic\.api_key in opencode"
                                            r"\.yaml") as err:
        registry().resolve("anthropic/claude-sonnet-4-5")
    assert (err.value.kind, err.value.retryable) == ("auth", False)
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        registry().resolve("openai/gpt-5")
    with pytest.raises(ProviderError, match=r"set provider\.work\.api_key"):
        registry({"provider": {"work": {"type": "anthropic", "base_url": "http://127.0.0.1:9"}}}).resolve("work/x")


def test_keys_come_from_the_environment_or_config_and_never_show(caplog):
    secret = "sk-ant-very-secret"
    with caplog.at_level(logging.DEBUG):
        reg = registry(env={"ANTHROPIC_API_KEY": secret})
        provider, model = reg.resolve("anthropic/claude-sonnet-4-5")
    assert isinstance(provider, AnthropicProvider) and model.id == "claude-sonnet-4-5"
    assert secret not in repr(provider) + repr(reg) + caplog.text
    provider, _ = registry({"provider": {"openai": {"api_key": "sk-cfg-secret"}}}).resolve("openai/gpt-5")
    assert isinstance(provider, OpenAIProvider) and "sk-cfg-secret" not in repr(provider)


def test_an_env_reference_left_in_config_is_looked_up_here():
    config = {"provider": {"anthropic": {"api_key": "{env:TEAM_KEY}", "base_url": "http://127.0.0.1:9"}}}
    assert isinstance(registry(config, {"TEAM_KEY": "sk-team"}).resolve("anthropic/claude-haiku-4-5")[0],
                      AnthropicProvider)
    with pytest.raises(ProviderError, match=r"set TEAM_KEY or provider\.anthropic\.api_key"):
        registry(config).resolve("anthropic/claude-haiku-4-5")


async def test_a_key_used_on_the_wire_never_appears_in_errors_or_logs(wire, caplog):
    secret = "sk-ant-wire-secret-999"
    reg = registry({"provider": {"anthropic": {"base_url": wire.url}}}, {"ANTHROPIC_API_KEY": secret})
    provider, model = reg.resolve("anthropic/claude-haiku-4-5")
    request = LLMRequest(model=model, messages=[LLMMessage(role="user", content=[TextBlock(text="hi")])])
    wire.queue(anthropic_stream({"text": "ok"}), anthropic_failure(401, "authentication_error", f"bad key {secret}"))
    with caplog.at_level(logging.DEBUG):
        [e async for e in provider.stream(request)]
        with pytest.raises(ProviderError) as err:
            [e async for e in provider.stream(request)]
    assert secret in wire.received[0].headers["authorization"]
    assert secret not in str(err.value) + repr(err.value) + caplog.text
    assert "ANTHROPIC_API_KEY or provider.anthropic.api_key" in str(err.value)


def test_providers_are_built_once_and_lazily():
    reg = registry(env={"OPENAI_API_KEY": "sk-x"})
    first, _ = reg.resolve("openai/gpt-5")
    second, mini = reg.resolve("openai/gpt-5-mini")
    assert first is second and mini.output == 128_000


def test_importing_the_package_does_not_import_the_sdks():
    code = "import sys, opencode_nb, opencode_nb.provider; print('anthropic' in sys.modules, 'openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_an_openai_compatible_provider_needs_a_base_url_but_no_key():
    config = {"provider": {"ollama": {"type": "openai-compatible", "base_url": "http://127.0.0.1:11434/v1",
                                      "models": {"qwen3:8b": {"context": 32768}}}}}
    provider, model = registry(config).resolve("ollama/qwen3:8b")
    assert isinstance(provider, OpenAIProvider) and model.context == 32768 and model.provider_id == "ollama"
    with pytest.raises(ConfigError, match="needs base_url"):
        registry({"provider": {"vllm": {"type": "openai-compatible"}}}).resolve("vllm/x")


def test_a_compatible_server_named_like_an_openai_model_gets_no_openai_prices():
    config = {"provider": {"proxy": {"type": "openai-compatible", "base_url": "http://127.0.0.1:4000/v1"}}}
    assert registry(config).resolve("proxy/gpt-5")[1].cost.input == 0.0


def test_provider_options_reach_every_model_and_model_options_win():
    config = {"provider": {"anthropic": {"api_key": "k", "options": {"thinking": True, "top_k": 5},
                                         "models": {"claude-opus-4-1": {"options": {"top_k": 9}}}}}}
    assert registry(config).resolve("anthropic/claude-opus-4-1")[1].options == {"thinking": True, "top_k": 9}


def test_unknown_providers_and_bad_ids_are_clear_errors():
    reg = registry({"provider": {"ollama": {"type": "openai-compatible", "base_url": "http://127.0.0.1:1/v1"}}})
    reg.register("mine", Scripted([]))
    with pytest.raises(ConfigError, match=r"unknown provider 'mystery'; known: anthropic, mine, ollama, openai"):
        reg.resolve("mystery/model")
    with pytest.raises(ConfigError, match="provider/model"):
        reg.resolve("gpt-5")


def test_a_registered_provider_serves_its_id_even_a_known_one():
    reg = registry()
    scripted = Scripted([])
    reg.register("mine", scripted)
    reg.register("anthropic", scripted)  # offline runs with real model ids and their figures
    assert reg.resolve("mine/anything")[0] is scripted
    provider, model = reg.resolve("anthropic/claude-sonnet-4-5")
    assert provider is scripted and model.context == 200_000


def test_the_scripted_provider_is_built_from_config():
    provider, model = registry({"provider": {"scripted": {"script": [{"text": "hi"}]}}}).resolve("scripted/demo")
    assert isinstance(provider, Scripted) and len(provider.turns) == 1 and model.cost.input == 0


def test_the_model_list_includes_configured_models():
    models = registry({"provider": {"ollama": {"type": "openai-compatible", "base_url": "http://x/v1",
                                               "models": {"qwen3:8b": {}}}}}).models()
    assert {"anthropic/claude-sonnet-4-5", "openai/gpt-5", "ollama/qwen3:8b"} <= set(models)
