"""Agent files as their authors write them: an unknown key that would have restricted an agent fails closed.

A key dropped as unknown used to leave the agent with every tool its author meant to take away. Now such an
agent is refused (named by file, line and the spelling meant) and does not run; OpenCode V2's `permissions:`
list and `disabled:` are read as they are meant; a harmless unknown key still only warns.
"""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path

import pytest

from opencode_nb import Workspace
from opencode_nb.errors import ConfigError, ConfigWarning, NotFoundError
from opencode_nb.permission.rules import evaluate
from opencode_nb.provider import Scripted

REVIEWER = ("---\ndescription: Reviews code and changes nothing.\nmode: primary\n{keys}\n---\n"
            "Review what you are shown.\n")

RESTRICTING = {
    "V1 mapping under V2's name": ("permissions:\n  bash: deny\n  edit: deny", "permissions",
                                   "did you mean `permission:`"),
    "misspelt permission": ("permisions:\n  bash: deny", "permisions", "did you mean `permission:`"),
    "singular tool": ("tool:\n  bash: false", "tool", "`tools:` with true or false"),
    "Claude Code's allowed-tools": ("allowed-tools: Read, Grep", "allowed-tools", "has no counterpart"),
    "Claude Code's disallowedTools": ("disallowedTools: Bash, Write", "disallowedTools", "did you mean `permission:`"),
    "Claude Code's permissionMode": ("permissionMode: plan", "permissionMode", "did you mean `permission:`"),
    "misspelt disable": ("disble: true", "disble", "did you mean `disable: true`"),
    "read-only wish": ("readonly: true", "readonly", "did you mean `permission:`"),
}


def project(tmp_path: Path, keys: str, name: str = "reviewer") -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True, exist_ok=True)
    path = root / ".opencode" / "agent" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(REVIEWER.format(keys=keys))
    return path


def workspace(tmp_path: Path, config: dict | None = None) -> Workspace:
    return Workspace(tmp_path / "proj", {"model": "scripted/demo", **(config or {})}, data_dir=tmp_path / "data",
                     env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home")})


@pytest.mark.parametrize("case", list(RESTRICTING), ids=list(RESTRICTING))
def test_a_key_that_looks_like_a_restriction_refuses_the_agent_naming_file_line_and_spelling(tmp_path, case):
    keys, key, spelling = RESTRICTING[case]
    path = project(tmp_path, keys)
    with pytest.warns(ConfigWarning) as caught, workspace(tmp_path) as ws:
        assert "reviewer" not in ws.agents
        assert "build" in ws.agents  # only what the broken file defined is lost
        message = ws.agents.refused["reviewer"]
        assert message.startswith(f"{path}:4 {key}: "), message
        assert spelling in message and "the agent is refused" in message
        assert any(message in w for w in ws.warnings)
        with pytest.raises(NotFoundError, match="its definition was refused"):
            ws.agents.get("reviewer")
    assert any(message == str(w.message) for w in caught)


def test_a_harmless_unknown_key_only_warns_and_the_agent_loads(tmp_path):
    path = project(tmp_path, "colour: green\nauthor: the data team\npermission:\n  bash: deny")
    with pytest.warns(ConfigWarning, match=f"{path}:4: unknown key agent.reviewer.colour"), \
            workspace(tmp_path) as ws:
        agent = ws.agents.get("reviewer")
        assert evaluate("bash", "ls", agent.permission).action == "deny"
        assert ws.agents.refused == {}


def test_the_same_keys_under_agent_in_a_config_file_refuse_that_agent(tmp_path):
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "opencode.yaml").write_text("agent:\n  reviewer:\n    mode: primary\n    permisions:\n      edit: deny\n")
    with pytest.warns(ConfigWarning), workspace(tmp_path) as ws:
        assert "reviewer" not in ws.agents
        assert ws.agents.refused["reviewer"].startswith(f"{root / 'opencode.yaml'}:4 agent.reviewer.permisions: ")


def test_a_refused_agent_stays_refused_whatever_a_later_file_says_of_it(tmp_path):
    project(tmp_path, "permisions:\n  edit: deny")
    with pytest.warns(ConfigWarning), workspace(tmp_path, {"agent": {"reviewer": {"disable": False}}}) as ws:
        assert "reviewer" not in ws.agents


def test_refusing_the_default_agent_falls_back_to_another_primary_and_naming_it_says_why(tmp_path):
    project(tmp_path, "permisions:\n  edit: deny", name="build")
    with pytest.warns(ConfigWarning), workspace(tmp_path) as ws:
        assert "build" not in ws.agents and ws.agents.default.name == "plan"
    with pytest.raises(ConfigError, match="'build' was refused"), pytest.warns(ConfigWarning):
        workspace(tmp_path, {"default_agent": "build"})


def test_a_top_level_key_that_looks_like_a_restriction_stops_the_configuration(tmp_path):
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "opencode.yaml").write_text("model: scripted/demo\ntools:\n  bash: false\n")
    with pytest.raises(ConfigError, match=r"opencode.yaml:2 tools: is not a key here; ignoring it would give every "
                                          r"agent"):
        workspace(tmp_path)


def test_opencode_v2_permissions_list_is_honoured_after_permission(tmp_path):
    project(tmp_path, 'permission:\n  bash: allow\npermissions:\n  - {action: shell, resource: "*", effect: deny}\n'
                      '  - {action: shell, resource: "git status *", effect: allow}\n'
                      '  - {action: subagent, resource: "*", effect: deny}\n'
                      '  - {action: edit, resource: "*", effect: ask}')
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConfigWarning)
        with workspace(tmp_path, {"permissions": [{"action": "webfetch", "resource": "*", "effect": "deny"}]}) as ws:
            rules = ws.agents.get("reviewer").permission
            assert evaluate("bash", "rm -rf x", rules).action == "deny"
            assert evaluate("bash", "git status -s", rules).action == "allow"
            assert evaluate("task", "general", rules).action == "deny"
            assert evaluate("edit", "a.py", rules).action == "ask"
            assert evaluate("webfetch", "https://example.org", ws.agents.get("build").permission).action == "deny"


def test_a_bad_rule_in_the_list_is_an_error_at_its_line(tmp_path):
    path = project(tmp_path, "permissions:\n  - {action: shell, resource: '*', effect: block}")
    with pytest.raises(ConfigError, match=rf"{path}:5 agent.reviewer.permissions.0.effect: 'block' is not one of"):
        workspace(tmp_path)


def test_opencode_v2_disabled_removes_the_agent(tmp_path):
    project(tmp_path, "disabled: true")
    with workspace(tmp_path) as ws:
        assert "reviewer" not in ws.agents and ws.agents.refused == {}


# ------------------------------------------------------------------------------------------------- by effect


async def _try_to_write(tmp_path: Path) -> tuple[Path, BaseException | None]:
    project(tmp_path, "permisions:\n  edit: deny\n  bash: deny")
    target = tmp_path / "proj" / "changed.txt"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        ws = workspace(tmp_path)
    with ws:
        model = Scripted([{"tool_calls": [{"name": "write", "input": {"path": "changed.txt", "content": "x"}}]},
                          {"tool_calls": [{"name": "bash", "input": {"command": "echo y > ran.txt"}}]},
                          {"text": "Done."}])
        ws.providers.register("scripted", model)
        session = ws.sessions.create()
        try:
            await asyncio.wait_for(ws.prompt(session.id, "Tidy the code.", agent="reviewer"), 60)
        except NotFoundError as exc:
            return target, exc
    return target, None


async def test_the_refused_agent_cannot_write_or_run_anything(tmp_path):
    target, error = await _try_to_write(tmp_path)
    assert isinstance(error, NotFoundError) and "refused" in str(error)
    assert not target.exists() and not (target.parent / "ran.txt").exists()


async def test_control_with_the_check_taken_away_the_same_file_gives_the_agent_write_and_bash(tmp_path, monkeypatch):
    """What the refusal prevents: dropped as unknown, the misspelt rules leave the agent every tool."""
    import opencode_nb.config.load as load

    monkeypatch.setattr(load, "restricting_problems", lambda layer: ({}, []))
    target, error = await _try_to_write(tmp_path)
    assert error is None
    assert target.read_text() == "x"
    assert (target.parent / "ran.txt").exists()


def test_the_readme_agent_file_loads_as_written(tmp_path):
    import re

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Agents\n", 1)[1].split("\n## ", 1)[0]
    [text] = re.findall(r"```yaml\n(.*?)```", section, re.S)
    project(tmp_path, "")
    (tmp_path / "proj" / ".opencode" / "agent" / "reviewer.md").write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConfigWarning)
        with workspace(tmp_path) as ws:
            rules = ws.agents.get("reviewer").permission
            assert evaluate("edit", "a.py", rules).action == "deny"
            assert evaluate("bash", "rm x", rules).action == "ask"
            assert evaluate("bash", "git diff HEAD", rules).action == "allow"
