"""The model ids a configuration names, checked against the catalog: a misspelt one is a mistake at its file and line.

`model:`, `small_model:` and each agent's `model:` (in a config file or a markdown agent's frontmatter) can name a
model no provider serves, and then every prompt that uses it fails at the provider, after the run started. When
the id is a known model misspelt (`anthropic/claude-sonet-4-6`) or a known model under the wrong provider
(`anthropic/gpt-5`), the configuration says so where it was written, with the id meant. The registry decides
what counts (`ProviderRegistry.check_model`): only a provider whose models are the catalog's is checked; an
id under a server of one's own (`base_url`), a model the file lists under its provider, a provider the catalog
does not know (a scripted one, one a notebook registers) and a model newer than the catalog are used as written.
"""

from __future__ import annotations

from pathlib import Path

from ..config.layer import KeyPath, dotted
from ..config.load import LoadedConfig
from ..config.schema import ProviderConfig
from ..errors import ConfigError
from .catalog import ids_meant
from .registry import ModelIdError, ProviderRegistry


def model_id_problems(loaded: LoadedConfig, registry: ProviderRegistry, *,
                      listed_by: str | None = None) -> list[ConfigError]:
    """One error per model id of `loaded` that misspells a known one, at the file and line it was written on.

    Args:
        listed_by: what lists the models known here, said after the id meant (`%agent models`).
    """
    config = loaded.config
    named: list[tuple[KeyPath, str | None]] = [(("model",), config.model), (("small_model",), config.small_model)]
    named += [(("agent", name, "model"), agent.model) for name, agent in loaded.agents.items()]
    problems = [_problem(loaded, registry, path, model_id, listed_by) for path, model_id in named if model_id]
    return [p for p in problems if p is not None]


def _problem(loaded: LoadedConfig, registry: ProviderRegistry, path: KeyPath, model_id: str,
             listed_by: str | None) -> ConfigError | None:
    try:
        registry.check_model(model_id)
        return None
    except ModelIdError as exc:
        if exc.key != "model":
            return None  # a provider the catalog does not know: said by the prompt that uses it, if any
    provider_id, _, model = model_id.partition("/")
    settings = loaded.config.provider.get(provider_id, ProviderConfig())
    meant = ids_meant(provider_id, settings.type or provider_id, model)
    if not meant:
        return None
    source, line = loaded.where(*path)
    markdown = source is not None and Path(source).suffix == ".md"  # the file is the agent: its own key alone
    hint = f"{model_id} is not a model {provider_id} offers; did you mean {' or '.join(meant)}?"
    if listed_by:
        hint += f" ({listed_by} lists them)"
    return ConfigError(source, line=line, key=path[-1] if markdown else dotted(path), hint=hint)
