"""A model id that a configuration file misspells (`anthropic/claude-sonet-4-6`) is an error at its file and line,
with the id meant; an id under a provider whose models are not the catalog's (a server of one's own, a provider the
file defines with its models) is used as written."""

from __future__ import annotations

import json

import pytest

from opencode_nb.provider.configured import model_id_problems
from opencode_nb.provider.registry import ProviderRegistry


def problems(project, **env: str) -> list[str]:
    loaded = project.load(**env)
    return [str(p) for p in model_id_problems(loaded, ProviderRegistry(loaded.config, {}))]


def test_a_misspelt_model_is_an_error_at_its_line_with_the_id_meant(project):
    path = project.write("repo/opencode.yaml", "model: anthropic/claude-sonet-4-6\n")
    assert problems(project) == [f"{path}:1 model: anthropic/claude-sonet-4-6 is not a model anthropic offers; "
                                 "did you mean anthropic/claude-sonnet-4-6?"]


def test_a_misspelt_small_model_and_an_agents_model_are_errors_at_their_lines(project):
    path = project.write("repo/opencode.yaml", "small_model: anthropic/claude-haku-4-5\nagent:\n  explore:\n"
                                               "    model: openai/gpt-5-mnii\n")
    assert problems(project) == [
        f"{path}:1 small_model: anthropic/claude-haku-4-5 is not a model anthropic offers; did you mean "
        "anthropic/claude-haiku-4-5?",
        f"{path}:4 agent.explore.model: openai/gpt-5-mnii is not a model openai offers; did you mean "
        "openai/gpt-5-mini?"]


def test_a_markdown_agents_model_is_named_by_its_own_file_and_line(project):
    path = project.write("repo/.opencode/agent/reviewer.md", "---\ndescription: Reviews\nmodel: openai/gtp-5\n---\n"
                                                             "Review.\n")
    assert problems(project) == [f"{path}:3 model: openai/gtp-5 is not a model openai offers; did you mean "
                                 "openai/gpt-5?"]


def test_a_model_under_the_wrong_provider_names_the_one_that_offers_it(project):
    path = project.write("repo/opencode.json", json.dumps({"model": "anthropic/gpt-5"}, indent=1))
    assert problems(project) == [f"{path}:2 model: anthropic/gpt-5 is not a model anthropic offers; did you mean "
                                 "openai/gpt-5?"]


@pytest.mark.parametrize("text", [
    "model: anthropic/claude-opus-4-7\n",  # newer than the catalog: another model, not a typo
    "model: work/claude-sonet-4-6\nprovider:\n  work: {type: anthropic, models: {claude-sonet-4-6: {}}}\n",
    "model: anthropic/claude-sonet-4-6\nprovider:\n  anthropic: {base_url: 'http://proxy.local/v1'}\n",
    "model: local/claude-sonet-4-6\nprovider:\n  local: {type: openai-compatible, base_url: 'http://localhost:1/v1'}\n",
    "model: mine/claude-sonet-4-6\n",  # a provider the catalog does not know (one a notebook registers)
    "model: scripted/demo-typo\n",
])
def test_an_id_whose_provider_serves_its_own_models_is_not_refused(project, text):
    project.write("repo/opencode.yaml", text)
    assert problems(project) == []
