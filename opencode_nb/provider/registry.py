"""`ws.providers`: turning a `provider/model` id into a provider and what we know of the model.

Providers are built on first use, so a workspace that never talks to Anthropic never imports its SDK.
API keys come from config (`provider.<id>.api_key`, usually `{env:...}`) or the provider's usual
environment variable; they are handed to the SDK client and never stored here, logged or shown.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from pathlib import Path

from ..config.managed import Managed, model_refusal
from ..config.schema import Config, ProviderConfig
from ..errors import ConfigError, ProviderError
from ..secrets import ENV_REFERENCE
from .base import Provider
from .catalog import KNOWN, ModelInfo, families_knowing, ids_meant, misspelt, model_info
from .idle import DEFAULT_IDLE_TIMEOUT_S

KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
TYPES = ("anthropic", "openai", "openai-compatible", "scripted")
KEYED_WAYS = {"anthropic": "Anthropic: set ANTHROPIC_API_KEY and use --model anthropic/claude-sonnet-4-6",
              "openai": "OpenAI: set OPENAI_API_KEY and use --model openai/gpt-5"}
OFFLINE_MODEL = "scripted/demo"
"""The model that needs no key and no network: the built-in demo."""
LOCAL_SERVER_YAML = """\
model: local/llama3.2
provider:
  local: {type: openai-compatible, base_url: "http://localhost:11434/v1"}"""
"""The smallest opencode.yaml for a local OpenAI-compatible server (Ollama here; llama.cpp and vLLM serve the
same API, at their own port). No key is needed; the part after `local/` is the server's model name."""


CHECKED_FAMILIES = ("anthropic", "openai")
"""Provider types whose own API refuses a model it does not serve, so a misspelt id is caught before a run
starts. A scripted model's name is only a label, and an OpenAI-compatible server serves whatever it has."""
EXAMPLE_ID = "anthropic/claude-sonnet-4-6"


class ModelIdError(ConfigError):
    """A model id that cannot be served as written: not `provider/model`, an unknown provider, or a known
    model misspelt. Its message is about the id alone, since the id may come from a command-line option,
    `%config` or a file: whoever knows where it came from puts that in front (`--model: ...`)."""

    def __init__(self, model_id: str, hint: str, *, key: str = "model") -> None:
        super().__init__(None, key=key, hint=hint)
        self.model_id = model_id
        self.args = (hint,)


class ProviderRegistry:
    def __init__(self, config: Config, env: Mapping[str, str] | None = None, *, base_dir: Path | None = None,
                 managed: Managed | None = None) -> None:
        """
        Args:
            config: the validated configuration (`provider.<id>` sections are read from it).
            env: where default API keys are looked up; the process environment when None.
            base_dir: the project root, against which a scripted provider's script path is resolved.
            managed: the administrator's policy, whose provider, model and base URL lists refuse the others.
        """
        self.config = config
        self.managed = managed
        self._env = os.environ if env is None else env
        self.base_dir = base_dir
        self._providers: dict[str, Provider] = {}
        self._infos: dict[str, ModelInfo] = {}
        """Figures per model id: the config cannot change, so they are worked out once (each step asks)."""

    def __repr__(self) -> str:
        return f"ProviderRegistry(providers={sorted(self._providers)})"

    def register(self, provider_id: str, provider: Provider) -> None:
        """Use `provider` for every `provider_id/...` model (e.g. a `Scripted` in a notebook or test)."""
        self._providers[provider_id] = provider
        self._infos.clear()

    def check_model_id(self, model_id: str) -> tuple[str, str]:
        """(provider, model) of a `provider/model` id.

        Raises:
            ModelIdError: not of that form; names the id meant where the catalog knows it (`gpt-5` is
                `openai/gpt-5`).
        """
        provider_id, sep, model = model_id.partition("/")
        if not sep or not provider_id or not model:
            bare = model or provider_id
            meant = [f"{family}/{misspelt(family, bare) or bare}" for family in families_knowing(bare)]
            guess = f"did you mean {' or '.join(meant)}?" if meant else f"e.g. {EXAMPLE_ID}"
            raise ModelIdError(model_id, f"{model_id!r} is not a model id (provider/model): {guess}")
        return provider_id, model

    def check_model(self, model_id: str) -> tuple[str, str]:
        """(provider, model) of an id this registry can serve, checked without building a provider.

        Raises:
            ModelIdError: a malformed id, an unknown provider, or a known model misspelt (`claude-sonet-4-6`,
                `anthropic/gpt-5`): the message names the id meant. A model the catalog does not know
                at all is not an error (it may be newer than the catalog).
        """
        provider_id, model = self.check_model_id(model_id)
        settings = self.config.provider.get(provider_id, ProviderConfig())
        kind = self._kind(provider_id, settings)
        if kind not in CHECKED_FAMILIES or settings.base_url or model in settings.models:
            return provider_id, model  # a server of one's own (a proxy, a gateway) may serve other names
        meant = ids_meant(provider_id, kind, model)
        if meant:
            raise ModelIdError(model_id, f"{model_id!r} is not a model the catalog knows: did you mean "
                               f"{' or '.join(meant)}? (To use the id as written, name it under "
                               f"provider.{provider_id}.models in opencode.yaml.)")
        return provider_id, model

    def resolve(self, model_id: str) -> tuple[Provider, ModelInfo]:
        """The provider serving `provider/model` (built on first use) and the model's figures.

        Raises:
            ModelIdError: a malformed id, an unknown provider id or a known model misspelt (`check_model`).
            ConfigError: an incomplete provider section.
            ProviderError: no API key (kind `auth`); the message names the variable and the config key.
        """
        info = self._infos.get(model_id)
        provider_id, model = self.check_model(model_id) if info is None else self.check_model_id(model_id)
        settings = self.config.provider.get(provider_id, ProviderConfig())
        refusal = model_refusal(self.managed, model_id, settings.base_url)
        if refusal is not None:
            raise ModelIdError(model_id, refusal)
        kind = self._kind(provider_id, settings)
        if info is None:
            family = None if kind in ("openai-compatible", "registered") else kind
            info = model_info(provider_id, model, family=family, override=settings.models.get(model))
            if settings.options:
                info = info.model_copy(update={"options": {**settings.options, **info.options}})
            self._infos[model_id] = info
        provider = self._providers.get(provider_id)
        if provider is None:
            provider = self._build(provider_id, kind, settings)
            self._providers[provider_id] = provider
        return provider, info

    def models(self) -> list[str]:
        """Model ids we know figures for, plus configured ones, for `%agent models` and the CLI."""
        out = [f"{p}/{m}" for p, table in KNOWN.items() for m in table]
        for provider_id, settings in self.config.provider.items():
            out += [f"{provider_id}/{m}" for m in settings.models if f"{provider_id}/{m}" not in out]
        return out

    def _kind(self, provider_id: str, settings: ProviderConfig) -> str:
        if settings.type:
            return settings.type
        if provider_id in TYPES:
            return provider_id
        if provider_id in self._providers:
            return "registered"
        known = sorted({*self.config.provider, *self._providers, *KEY_ENV, "scripted"})
        meant = difflib.get_close_matches(provider_id, known, n=1, cutoff=0.75)
        guess = f" (did you mean {meant[0]}?)" if meant else ""
        raise ModelIdError(provider_id, f"unknown provider {provider_id!r}{guess}; known: {', '.join(known)}. For "
                           f"another OpenAI-compatible server set provider.{provider_id}.type: openai-compatible "
                           "and base_url in opencode.yaml", key=f"provider.{provider_id}")

    def _build(self, provider_id: str, kind: str, settings: ProviderConfig) -> Provider:
        if kind == "scripted":
            from .scripted import Scripted

            return Scripted.from_config(settings.script, self.base_dir)
        if kind == "anthropic":
            from .anthropic import AnthropicProvider

            key, hint = self._key(provider_id, "anthropic", settings)
            return AnthropicProvider(api_key=key, base_url=settings.base_url, provider_id=provider_id, key_hint=hint,
                                     idle_timeout_s=settings.idle_timeout_s or DEFAULT_IDLE_TIMEOUT_S)
        if kind in ("openai", "openai-compatible"):
            from .openai import OpenAIProvider

            compatible = kind == "openai-compatible"
            if compatible and not settings.base_url:
                raise ConfigError(None, key=f"provider.{provider_id}.base_url",
                                  hint="an openai-compatible provider needs base_url, e.g. http://localhost:11434/v1")
            key, hint = self._key(provider_id, "openai", settings, required=not compatible)
            return OpenAIProvider(api_key=key, base_url=settings.base_url, provider_id=provider_id, key_hint=hint,
                                  idle_timeout_s=settings.idle_timeout_s or DEFAULT_IDLE_TIMEOUT_S)
        raise ConfigError(None, key=f"provider.{provider_id}.type", hint=f"{kind!r} is not one of {', '.join(TYPES)}")

    def _key(
        self, provider_id: str, family: str, settings: ProviderConfig, *, required: bool = True
    ) -> tuple[str | None, str]:
        """The API key, and where a person should look when it is refused."""
        config_key = f"provider.{provider_id}.api_key"
        variable = KEY_ENV[family] if provider_id == family else None
        if settings.api_key:
            ref = ENV_REFERENCE.match(settings.api_key)
            if ref is None:
                return settings.api_key, f"{config_key} in opencode.yaml"
            variable = ref.group(1)  # written in Python, not through the config loader: look it up here
            if self._env.get(variable):
                return self._env[variable], f"{variable} (named by {config_key})"
        elif variable and self._env.get(variable):
            return self._env[variable], f"{variable} or {config_key} in opencode.yaml"
        hint = f"{variable} or {config_key} in opencode.yaml" if variable else f"{config_key} in opencode.yaml"
        if not required:
            return None, hint
        example = f" (e.g. api_key: '{{env:{variable}}}')" if variable else ""
        message = f"No API key for {provider_id}: set {hint}{example}."
        if provider_id in KEY_ENV:  # a first run with no key at all: say what else works
            message += other_ways_in(provider_id)
        raise ProviderError(message, retryable=False, kind="auth")

    def status(self, provider_id: str) -> str:
        """What `provider_id/...` models need before they can answer, for listings: a key, a server, nothing.

        Looks at the configuration and the environment only: no SDK is imported, no client built.
        """
        settings = self.config.provider.get(provider_id, ProviderConfig())
        try:
            kind = self._kind(provider_id, settings)
        except ConfigError:
            return "unknown provider"
        if kind in ("scripted", "registered"):
            return "offline, no key needed"
        if kind == "openai-compatible":
            return f"server at {settings.base_url}" if settings.base_url else "needs base_url"
        try:
            _, where = self._key(provider_id, kind, settings)
        except ProviderError:
            variable = KEY_ENV[kind] if provider_id == kind else f"provider.{provider_id}.api_key"
            return f"no key: set {variable}"
        return f"key from {where.split(' or ')[0].split(' (named')[0]}"


def other_ways_in(missing: str) -> str:
    """The other ways to a working model, for the person who has no key for `missing`."""
    local = "".join(f"      {line}\n" for line in LOCAL_SERVER_YAML.splitlines())
    return ("\nOther ways in:\n"
            + "".join(f"  - {way}\n" for family, way in KEYED_WAYS.items() if family != missing)
            + "  - a local OpenAI-compatible server (Ollama, llama.cpp, vLLM), no key needed: put in opencode.yaml\n"
            + local
            + f"  - offline, the built-in demo model: --model {OFFLINE_MODEL}")
