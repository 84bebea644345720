"""A person with no API key is told every other way to a working model, and the local-server way works as shown."""

import re
import subprocess
from pathlib import Path

import pytest

from opencode_nb import Workspace
from opencode_nb.config import Config
from opencode_nb.errors import ProviderError
from opencode_nb.kernel.magics.subcommands import HELP
from opencode_nb.provider import ProviderRegistry
from opencode_nb.provider.registry import LOCAL_SERVER_YAML, OFFLINE_MODEL

from .wire_openai import openai_stream

README = Path(__file__).resolve().parents[2] / "README.md"


def registry(config=None, env=None):
    return ProviderRegistry(Config.model_validate(config or {}), env or {})


def test_no_anthropic_key_names_openai_a_local_server_and_the_offline_demo():
    with pytest.raises(ProviderError) as err:
        registry().resolve("anthropic/claude-sonnet-4-6")
    message = str(err.value)
    assert message.startswith("No API key for anthropic: set ANTHROPIC_API_KEY")
    assert "OpenAI: set OPENAI_API_KEY and use --model openai/gpt-5" in message
    assert "Ollama, llama.cpp, vLLM" in message and LOCAL_SERVER_YAML.splitlines()[2].strip() in message
    assert f"--model {OFFLINE_MODEL}" in message and OFFLINE_MODEL == "scripted/demo"


def test_no_openai_key_names_anthropic_instead():
    with pytest.raises(ProviderError) as err:
        registry().resolve("openai/gpt-5")
    assert "Anthropic: set ANTHROPIC_API_KEY" in str(err.value) and "OpenAI: set" not in str(err.value)


def test_a_provider_of_ones_own_is_not_told_about_the_others():
    with pytest.raises(ProviderError) as err:
        registry({"provider": {"work": {"type": "anthropic"}}}).resolve("work/x")
    assert "Other ways in" not in str(err.value)


def test_the_status_of_each_provider_says_what_it_still_needs():
    reg = registry({"provider": {"local": {"type": "openai-compatible", "base_url": "http://localhost:11434/v1"}}},
                   {"OPENAI_API_KEY": "sk-x"})
    assert reg.status("anthropic") == "no key: set ANTHROPIC_API_KEY"
    assert reg.status("openai") == "key from OPENAI_API_KEY"
    assert reg.status("local") == "server at http://localhost:11434/v1"
    assert reg.status("scripted") == "offline, no key needed"
    assert reg.status("nowhere") == "unknown provider"


def test_the_readme_and_help_show_the_same_three_line_local_server_config():
    blocks = re.findall(r"```yaml\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert LOCAL_SERVER_YAML + "\n" in blocks and len(LOCAL_SERVER_YAML.splitlines()) == 3
    assert all(f"    {line}" in HELP for line in LOCAL_SERVER_YAML.splitlines())
    assert "ripgrep" in HELP and "chromium" in HELP


async def test_exactly_that_config_routes_prompts_to_a_local_openai_compatible_server(wire, tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "opencode.yaml").write_text(LOCAL_SERVER_YAML.replace("http://localhost:11434", wire.url))
    wire.queue(openai_stream("Hello from the local model."))
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}  # no key anywhere
    ws = Workspace(tmp_path, {"small_model": "scripted/demo"}, data_dir=tmp_path / "data", env=env)
    try:
        result = await ws.prompt(ws.sessions.create().id, "say hello")
    finally:
        await ws.aclose()
    assert result.error is None and result.text == "Hello from the local model."
    [request] = [r for r in wire.received if r.path == "/v1/chat/completions"]
    assert request.body["model"] == "llama3.2"
