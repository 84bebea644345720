"""The notebook's defaults as a layer of every agent's rules: under every config file, over OpenCode's defaults,
and never looser than an agent's own built-in rules."""

from __future__ import annotations

from pathlib import Path

from opencode_nb import Workspace
from opencode_nb.agent.builtin import notebook_notice
from opencode_nb.agent.registry import AgentRegistry
from opencode_nb.config.schema import Config
from opencode_nb.permission.rules import evaluate
from opencode_nb.provider.scripted import Scripted


def registry(tmp_path: Path, config: dict | None = None, *, notebook: bool = True) -> AgentRegistry:
    return AgentRegistry(Config.model_validate(config or {}), data_dir=tmp_path, tmp_dir=tmp_path, notebook=notebook)


def decide(agents: AgentRegistry, agent: str, permission: str, pattern: str) -> str:
    return evaluate(permission, pattern, agents.get(agent).permission).action


def test_in_a_notebook_edits_and_commands_that_change_something_ask_and_read_only_commands_run(tmp_path):
    agents = registry(tmp_path)
    for agent in ("build", "general"):
        assert decide(agents, agent, "edit", "notes.md") == "ask"
        assert decide(agents, agent, "bash", "rm data.csv") == "ask"
        assert decide(agents, agent, "bash", "echo x > f") == "ask"
        assert decide(agents, agent, "bash", "git status --short") == "allow"
    assert agents.notebook_defaults_in_force() == ["edit", "bash"]


def test_outside_a_notebook_the_rules_are_opencodes(tmp_path):
    agents = registry(tmp_path, notebook=False)
    assert decide(agents, "build", "edit", "notes.md") == "allow"
    assert decide(agents, "build", "bash", "rm data.csv") == "allow"
    assert decide(agents, "explore", "bash", "rm data.csv") == "allow"
    assert agents.notebook_defaults_in_force() == []


def test_plan_keeps_its_own_rules_and_explore_runs_only_read_only_commands_unasked(tmp_path):
    inside, outside = registry(tmp_path), registry(tmp_path, notebook=False)
    for pattern in ("notes.md", ".opencode/plans/a.md"):
        assert decide(inside, "plan", "edit", pattern) == decide(outside, "plan", "edit", pattern)
    for command in ("ls", "git diff", "rm x", "echo x > f"):
        assert decide(inside, "plan", "bash", command) == decide(outside, "plan", "bash", command)
    assert decide(inside, "explore", "bash", "rm data.csv") == "ask"
    assert decide(inside, "explore", "bash", "grep -r x .") == "allow"
    assert decide(inside, "explore", "edit", "notes.md") == "deny"
    assert decide(inside, "data-explorer", "bash", "ls") == "deny"


def test_the_one_config_line_restores_opencodes_defaults_and_any_config_rule_wins(tmp_path):
    agents = registry(tmp_path, {"permission": {"edit": "allow", "bash": "allow"}})
    assert decide(agents, "build", "edit", "notes.md") == "allow"
    assert decide(agents, "build", "bash", "rm data.csv") == "allow"
    assert agents.notebook_defaults_in_force() == []
    partly = registry(tmp_path, {"permission": {"bash": {"*": "allow", "rm *": "ask"}},
                                 "agent": {"mine": {"mode": "primary"}}})
    assert partly.notebook_defaults_in_force() == ["edit"]
    assert decide(partly, "mine", "edit", "notes.md") == "ask", "an agent of the config's own gets them too"


def test_each_rule_says_where_it_came_from(tmp_path):
    agents = registry(tmp_path)
    origins = {agents.origin(r) for r in agents.get("plan").permission}
    assert {"OpenCode default", "notebook default", "built-in @plan"} <= origins
    [decider] = [r for r in agents.get("build").permission if r.permission == "edit"]
    assert agents.origin(decider) == "notebook default"


def test_the_notice_names_only_what_is_still_in_force_and_the_line_that_turns_it_off():
    assert notebook_notice([]) is None
    both = notebook_notice(["edit", "bash"])
    assert both is not None and "file edits and shell commands ask first" in both
    assert "`permission: {edit: allow, bash: allow}` in opencode.yaml" in both
    edits = notebook_notice(["edit"])
    assert edits is not None and "shell" not in edits and "{edit: allow}" in edits


async def test_the_python_api_keeps_opencodes_defaults(tmp_path):
    (tmp_path / "project").mkdir()
    ws = Workspace(tmp_path / "project", {"model": "scripted/test"}, data_dir=tmp_path / "data", env={})
    ws.providers.register("scripted", Scripted([
        {"tool_calls": [{"name": "write", "input": {"path": "notes.md", "content": "x\n"}}]}, {"text": "Done."}]))
    session = ws.sessions.create(str(ws.directory))
    result = await ws.prompt(session.id, "write notes")
    assert result.unattended == [], "nothing asked: the unattended policy (deny) decided nothing"
    assert (tmp_path / "project" / "notes.md").read_text() == "x\n"
    await ws.aclose()
