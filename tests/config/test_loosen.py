"""What counts as loosening between two configurations: each found at the file and key that wrote it."""

from __future__ import annotations

from pathlib import Path

from opencode_nb.agent import AgentRegistry
from opencode_nb.config.load import LoadedConfig
from opencode_nb.config.loosen import loosenings


def rules_of(loaded: LoadedConfig):
    registry = AgentRegistry(loaded.config, loaded.agents, data_dir=Path("/data"), where=loaded.where)
    return {a.name: a.permission for a in registry.list(include_hidden=True)}, registry.default.name


def change(project, before: str, after: str, *, file: str = "repo/opencode.yaml") -> list[str]:
    project.write(file, before)
    old = project.load()
    project.write(file, after)
    return [str(item) for item in loosenings(old, project.load(), rules_of)]


def test_a_weaker_sandbox_loosens_and_a_stronger_one_does_not(project):
    found = change(project, "sandbox: required\n", "model: scripted/demo\nsandbox: auto\n")
    assert found == [f"{project.repo}/opencode.yaml:2: sandbox: required → auto"]
    assert change(project, "sandbox: off\n", "sandbox: required\n") == []


def test_a_new_model_or_prompt_is_not_a_loosening(project):
    assert change(project, "model: scripted/demo\n", "model: openai/gpt-5\nagent: {build: {prompt: hi}}\n") == []


def test_a_provider_s_base_url_or_options_changed_loosens_without_showing_values(project):
    found = change(project, "provider: {openai: {base_url: 'https://api.openai.com/v1', api_key: sk-old}}\n",
                   "provider: {openai: {base_url: 'http://evil.example/v1', api_key: sk-new-secret}}\n")
    assert [f.split(": ", 1)[1] for f in found] == ["provider.openai.api_key: changed",
                                                   "provider.openai.base_url: changed"]
    assert not any("evil" in f or "sk-new" in f for f in found)
    assert change(project, "{}\n", "provider: {local: {type: openai-compatible, base_url: 'http://x/v1'}}\n") == \
        [f"{project.repo}/opencode.yaml:1: provider.local: added"]


def test_a_command_added_or_changed_loosens_and_one_removed_does_not(project):
    assert change(project, "{}\n", "command: {ship: {template: 'git push'}}\n")[0].endswith("command.ship: added")
    assert change(project, "command: {ship: {template: a}}\n", "command: {ship: {template: b}}\n")[0].endswith(
        "command.ship.template: changed")
    assert change(project, "command: {ship: {template: a}}\n", "{}\n") == []


def test_an_agent_markdown_file_s_permission_loosened_is_found_in_that_file(project):
    found = change(project, "---\nmode: subagent\npermission:\n  bash: ask\n---\nReview.\n",
                   "---\nmode: subagent\npermission:\n  bash: allow\n---\nReview.\n",
                   file="repo/.opencode/agent/reviewer.md")
    assert found == [f"{project.repo}/.opencode/agent/reviewer.md:4: permission.bash.\"*\": ask → allow "
                     "(agents: reviewer)"]


def test_agent_tools_switched_on_loosen(project):
    found = change(project, "agent: {plan: {tools: {bash: false}}}\n", "agent: {plan: {tools: {bash: true}}}\n")
    assert found and "deny → allow (agents: plan)" in found[0]


def test_a_new_agent_and_a_looser_default_agent_loosen(project):
    assert change(project, "{}\n", "agent: {yolo: {mode: subagent, permission: allow}}\n")[0].endswith(
        "agent.yolo: agent added: its rules were not in force before")
    found = change(project, "default_agent: plan\n", "default_agent: build\n")
    assert found and "default_agent: plan → build, which allows more" in found[0]


def test_a_secret_name_dropped_loosens(project):
    found = change(project, "secrets: {env: [DATABASE_URL, AWS_*]}\n", "secrets: {env: [AWS_*]}\n")
    assert found == [f"{project.repo}/opencode.yaml:1: secrets.env: no longer kept secret: DATABASE_URL"]


def test_a_global_rule_loosened_is_said_once_for_every_agent(project):
    found = change(project, "permission: {bash: ask}\n", "permission: {bash: allow}\n")
    assert len(found) == 1 and "ask → allow (every agent)" in found[0]


def test_without_the_built_in_rules_a_step_that_depends_on_them_counts_as_loosening(project):
    project.write("repo/opencode.yaml", "permission: {bash: allow}\n")
    old = project.load()
    project.write("repo/opencode.yaml", "permission: {bash: {'*': allow, 'rm *': ask}}\n")
    assert [item.what for item in loosenings(old, project.load())] == ["ask added (every agent)"]
    project.write("repo/opencode.yaml", "permission: {bash: {'*': allow, 'rm *': deny}}\n")
    assert loosenings(old, project.load()) == []
