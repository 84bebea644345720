"""What we know of common models: context window, output limit and list prices (USD per million tokens).

Unknown models get conservative defaults rather than an error, so any OpenAI-compatible server works and a
model newer than this table (`claude-opus-4-7`) is used as asked. Only an id that is a known one misspelt
(`claude-sonet-4-6`: the same numbers, a word one slip away) is caught, by `misspelt`, so a typo does not
start a run that the API then refuses. Config `provider.<id>.models.<model>` overrides any figure.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..config.schema import ModelConfig


class Cost(BaseModel):
    """US dollars per million tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0


class ModelInfo(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str
    """The model id as the provider's API knows it."""
    provider_id: str
    name: str = ""
    context: int = 128_000
    """Context window in tokens; unknown models get this conservative figure."""
    output: int = 8_192
    """Maximum output tokens per request."""
    cost: Cost = Field(default_factory=Cost)
    reasoning: bool = False
    """The model thinks before answering (OpenAI: takes `max_completion_tokens`, no temperature)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Request options for every call to this model (e.g. `thinking`, `reasoning_effort`)."""

    @property
    def full_id(self) -> str:
        return f"{self.provider_id}/{self.id}"


def _m(
    context: int, output: int, inp: float, out: float, read: float, write: float, reasoning: bool = False
) -> dict[str, Any]:
    return {"context": context, "output": output, "reasoning": reasoning,
            "cost": {"input": inp, "output": out, "cache_read": read, "cache_write": write}}


KNOWN: dict[str, dict[str, dict[str, Any]]] = {
    "anthropic": {
        "claude-sonnet-4-6": _m(200_000, 64_000, 3.0, 15.0, 0.30, 3.75, True),
        "claude-opus-4-6": _m(200_000, 64_000, 5.0, 25.0, 0.50, 6.25, True),
        "claude-opus-4-5": _m(200_000, 64_000, 5.0, 25.0, 0.50, 6.25, True),
        "claude-sonnet-4-5": _m(200_000, 64_000, 3.0, 15.0, 0.30, 3.75, True),
        "claude-opus-4-1": _m(200_000, 32_000, 15.0, 75.0, 1.50, 18.75, True),
        "claude-haiku-4-5": _m(200_000, 64_000, 1.0, 5.0, 0.10, 1.25, True),
        "claude-sonnet-4-0": _m(200_000, 64_000, 3.0, 15.0, 0.30, 3.75, True),
        "claude-3-7-sonnet-latest": _m(200_000, 64_000, 3.0, 15.0, 0.30, 3.75, True),
        "claude-3-5-haiku-latest": _m(200_000, 8_192, 0.80, 4.0, 0.08, 1.0),
    },
    "openai": {
        "gpt-5": _m(400_000, 128_000, 1.25, 10.0, 0.125, 0.0, True),
        "gpt-5-mini": _m(400_000, 128_000, 0.25, 2.0, 0.025, 0.0, True),
        "gpt-5-nano": _m(400_000, 128_000, 0.05, 0.40, 0.005, 0.0, True),
        "gpt-4.1": _m(1_047_576, 32_768, 2.0, 8.0, 0.50, 0.0),
        "gpt-4.1-mini": _m(1_047_576, 32_768, 0.40, 1.60, 0.10, 0.0),
        "gpt-4o": _m(128_000, 16_384, 2.50, 10.0, 1.25, 0.0),
        "gpt-4o-mini": _m(128_000, 16_384, 0.15, 0.60, 0.075, 0.0),
        "o3": _m(200_000, 100_000, 2.0, 8.0, 0.50, 0.0, True),
        "o4-mini": _m(200_000, 100_000, 1.10, 4.40, 0.275, 0.0, True),
    },
    "scripted": {"demo": _m(200_000, 8_192, 0.0, 0.0, 0.0, 0.0)},
}
ALIASES = {"claude-sonnet-4": "claude-sonnet-4-0", "claude-3-7-sonnet": "claude-3-7-sonnet-latest",
           "claude-3-5-haiku": "claude-3-5-haiku-latest", "claude-opus-4-1-latest": "claude-opus-4-1"}
SNAPSHOT = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")
"""A dated snapshot (`claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`) has its family's figures."""


SEPARATORS = re.compile(r"[-._:\s]")
WORD_SLIP = 0.65
"""How alike (difflib's ratio) a word of an id and the catalog's word in its place must be to read as a typo."""


def misspelt(family: str, model_id: str) -> str | None:
    """The catalog's model that `model_id` (under a provider of type `family`) is a misspelling of, or None.

    A misspelling differs from a known id only in case or separators (`claude-sonnet-4.6`, `GPT-5`), or only in
    its words, each one slip from the known word (`claude-sonet-4-6`); an id whose numbers differ (`gpt-5.1`,
    `claude-opus-4-7`) or that adds a word (`gpt-5-pro`) is another model, not a typo. A dated snapshot keeps
    its date: `claude-sonet-4-5-20250929` is `claude-sonnet-4-5-20250929` misspelt.
    """
    table = KNOWN.get(family, {})
    date = SNAPSHOT.search(model_id)
    base = model_id[:date.start()] if date else model_id
    if not base or base in table or base in ALIASES:
        return None
    for known in (*table, *ALIASES):
        if _is_slip(base, known):
            return known + (date.group(0) if date else "")
    return None


def _is_slip(typed: str, known: str) -> bool:
    if SEPARATORS.sub("", typed.lower()) == SEPARATORS.sub("", known):
        return True
    typed_words, known_words = SEPARATORS.split(typed.lower()), SEPARATORS.split(known)
    if len(typed_words) != len(known_words):
        return False
    differing = [(a, b) for a, b in zip(typed_words, known_words, strict=True) if a != b]
    return bool(differing) and all(
        not any(c.isdigit() for c in a + b) and difflib.SequenceMatcher(None, a, b).ratio() >= WORD_SLIP
        for a, b in differing)


def families_knowing(model_id: str) -> list[str]:
    """The providers whose table holds `model_id` as it is, or as a misspelling of one of theirs, for an id
    written without its provider (`gpt-5` is `openai/gpt-5`) or under the wrong one."""
    return [family for family, table in KNOWN.items() if model_id in table or misspelt(family, model_id)]


def ids_meant(provider_id: str, family: str, model_id: str) -> list[str]:
    """The full ids `provider_id/model_id` was meant as, under a provider of type `family`: the catalog's model it
    misspells (`anthropic/claude-sonnet-4-6`), else the other providers whose table holds it (`anthropic/gpt-5`
    is `openai/gpt-5`); none for an id that is no misspelling (a model newer than the catalog)."""
    typo = misspelt(family, model_id)
    if typo:
        return [f"{provider_id}/{typo}"]
    return [f"{other}/{misspelt(other, model_id) or model_id}" for other in families_knowing(model_id)
            if other != family]


def _known(table: dict[str, dict[str, Any]], model_id: str) -> dict[str, Any]:
    for candidate in (model_id, SNAPSHOT.sub("", model_id)):
        found = table.get(candidate) or table.get(ALIASES.get(candidate, ""))
        if found is not None:
            return found
    return {}


def model_info(provider_id: str, model_id: str, family: str | None = None,
               override: ModelConfig | None = None) -> ModelInfo:
    """Catalog figures for a model (looked up under its provider type `family`), with config on top."""
    base = {"name": model_id, **_known(KNOWN.get(family or provider_id, {}), model_id)}
    if override is not None:
        data = override.model_dump(exclude_none=True, exclude_unset=True)  # an explicit 0 counts
        if "cost" in data:
            base["cost"] = {**base.get("cost", {}), **data.pop("cost")}
        base.update(data)
    return ModelInfo(id=model_id, provider_id=provider_id, **base)


def cost(usage: Any, model: ModelInfo) -> float:
    """Dollars for one response.

    `usage.input` excludes cached tokens and `usage.output` excludes reasoning (each provider subtracts
    them where its API counts them inside the totals), so every token is priced exactly once.
    """
    c = model.cost
    return (usage.input * c.input + (usage.output + usage.reasoning) * c.output
            + usage.cache_read * c.cache_read + usage.cache_write * c.cache_write) / 1_000_000
