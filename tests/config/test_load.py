import json
from pathlib import Path

import pytest

from opencode_nb.config import ConfigError, ConfigWarning, load_config


@pytest.fixture
def project(tmp_path):
    """A git project with a notebook directory two levels down, and an empty global config dir."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "analysis" / "q3").mkdir(parents=True)
    (tmp_path / "xdg" / "opencode_nb").mkdir(parents=True)
    return tmp_path


def env_for(project, **extra):
    return {"XDG_CONFIG_HOME": str(project / "xdg"), "HOME": str(project), **extra}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def load(project, overrides=None, **extra):
    return load_config(project / "repo" / "analysis" / "q3", overrides, env=env_for(project, **extra))


def test_later_sources_win_key_by_key(project):
    write(project / "xdg/opencode_nb/opencode.yaml",
          "model: anthropic/claude-sonnet-4-5\nsmall_model: openai/gpt-5-mini\n")
    write(project / "repo/opencode.yaml", "model: openai/gpt-5\ndefault_agent: plan\n")
    write(project / "repo/analysis/opencode.json", json.dumps({"default_agent": "build"}))
    write(project / "repo/analysis/q3/.opencode/opencode.yml", "instructions: [STYLE.md]\n")
    loaded = load(project)
    assert loaded.config.model == "openai/gpt-5"
    assert loaded.config.small_model == "openai/gpt-5-mini"
    assert loaded.config.default_agent == "build"
    assert loaded.config.instructions == ["STYLE.md"]
    assert loaded.root == project / "repo"
    assert loaded.sources[1:] == [str(project / p) for p in (
        "xdg/opencode_nb/opencode.yaml", "repo/opencode.yaml", "repo/analysis/opencode.json",
        "repo/analysis/q3/.opencode/opencode.yml")]


def test_the_env_file_and_then_the_workspace_mapping_come_last(project):
    write(project / "repo/opencode.yaml", "model: openai/gpt-5\nsmall_model: openai/gpt-5\n")
    extra = write(project / "elsewhere.yaml", "model: anthropic/claude-opus-4-1\nsmall_model: openai/gpt-4o\n")
    loaded = load(project, {"small_model": "scripted/demo"}, OPENCODE_NB_CONFIG=str(extra))
    assert loaded.config.model == "anthropic/claude-opus-4-1"
    assert loaded.config.small_model == "scripted/demo"


def test_a_missing_env_config_file_is_an_error_naming_it(project):
    with pytest.raises(ConfigError, match="OPENCODE_NB_CONFIG"):
        load(project, OPENCODE_NB_CONFIG=str(project / "nope.yaml"))


def test_without_git_the_directory_itself_is_the_root(tmp_path):
    write(tmp_path / "opencode.yaml", "model: openai/gpt-5\n")
    write(tmp_path / "sub/opencode.yaml", "small_model: openai/gpt-5\n")
    loaded = load_config(tmp_path / "sub", env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert loaded.root == tmp_path / "sub"
    assert loaded.config.model is None  # the parent is outside the project


def test_markdown_agents_and_commands_become_definitions(project):
    write(project / "xdg/opencode_nb/agent/reviewer.md",
          "---\ndescription: Reviews code\nmode: subagent\n---\nYou review code.\n")
    write(project / "repo/.opencode/agents/team/sql.md", "---\nmodel: openai/gpt-5\n---\n\nWrite SQL.\n")
    write(project / "repo/.opencode/command/test.md",
          "---\ndescription: run the tests\nagent: build\nsubtask: true\n---\nRun $ARGUMENTS\n")
    write(project / "repo/.opencode/commands/plain.md", "Just a template.\n")
    loaded = load(project)
    assert loaded.agents["reviewer"].prompt == "You review code."
    assert loaded.agents["reviewer"].mode == "subagent"
    assert loaded.agents["team/sql"].model == "openai/gpt-5"
    assert loaded.commands["test"].template == "Run $ARGUMENTS"
    assert loaded.commands["test"].subtask is True
    assert loaded.commands["plain"].template == "Just a template."


def test_a_project_agent_file_overrides_fields_of_a_global_one(project):
    write(project / "xdg/opencode_nb/agent/reviewer.md", "---\ndescription: global\ntemperature: 0.2\n---\nG\n")
    write(project / "repo/opencode.yaml", "agent:\n  reviewer:\n    description: project\n")
    loaded = load(project)
    assert loaded.agents["reviewer"].description == "project"
    assert loaded.agents["reviewer"].temperature == 0.2
    assert loaded.agents["reviewer"].prompt == "G"


def test_frontmatter_with_an_unquoted_colon_still_loads(project):
    write(project / "repo/.opencode/agent/r.md", "---\ndescription: Reviews code: style and bugs\n---\nx\n")
    assert load(project).agents["r"].description == "Reviews code: style and bugs"


def test_an_unknown_key_is_a_warning_with_a_hint_and_is_ignored(project):
    write(project / "repo/opencode.yaml", "model: openai/gpt-5\nagent:\n  build:\n    temprature: 0.3\nmodle: x\n")
    with pytest.warns(ConfigWarning) as caught:
        loaded = load(project)
    messages = [str(w.message) for w in caught]
    assert any("opencode.yaml:4: unknown key agent.build.temprature (did you mean temperature?)" in m
               for m in messages)
    assert any("unknown key modle (did you mean model?)" in m for m in messages)
    assert loaded.config.model == "openai/gpt-5"
    assert len(loaded.warnings) == 2


def test_an_invalid_permission_action_names_file_line_and_key(project):
    write(project / "repo/opencode.yaml",
          "agent:\n  reviewer:\n    permission:\n      bash:\n        \"ls *\": allow\n        \"rm *\": maybe\n")
    with pytest.raises(ConfigError) as err:
        load(project)
    assert str(err.value) == (
        f"{project}/repo/opencode.yaml:6 agent.reviewer.permission.bash.\"rm *\": "
        "'maybe' is not one of allow, ask, deny")


def test_an_invalid_value_in_json_names_its_line(project):
    write(project / "repo/opencode.json", '{\n  "agent": {\n    "plan": {\n      "steps": -3\n    }\n  }\n}\n')
    with pytest.raises(ConfigError) as err:
        load(project)
    assert str(err.value).startswith(f"{project}/repo/opencode.json:4 agent.plan.steps: -3")


def test_the_error_names_the_file_the_bad_value_came_from(project):
    write(project / "repo/opencode.yaml", "model: openai/gpt-5\n")
    write(project / "repo/analysis/opencode.yaml", "\n\nmodel: gpt5\n")
    with pytest.raises(ConfigError) as err:
        load(project)
    assert str(err.value) == (f"{project}/repo/analysis/opencode.yaml:3 model: 'gpt5' is not a model id: use "
                              "provider/model, e.g. anthropic/claude-sonnet-4-5")


def test_a_wrong_mode_lists_the_allowed_ones(project):
    write(project / "repo/opencode.yaml", "agent:\n  x:\n    mode: sidekick\n")
    with pytest.raises(ConfigError, match=r"opencode.yaml:3 agent.x.mode: 'sidekick' is not one of primary, "
                                          r"subagent, all"):
        load(project)


def test_broken_yaml_names_the_file_and_line_not_a_parser_traceback(project):
    write(project / "repo/opencode.yaml", "model: openai/gpt-5\nagent:\n  build: [unclosed\n")
    with pytest.raises(ConfigError) as err:
        load(project)
    assert str(err.value).startswith(f"{project}/repo/opencode.yaml:")
    assert "invalid YAML" in str(err.value) and err.value.line is not None
    assert err.value.__cause__ is None


def test_broken_json_names_the_file_and_line(project):
    write(project / "repo/opencode.json", '{\n  "model": "openai/gpt-5",\n}\n')
    with pytest.raises(ConfigError, match=r"opencode.json:3: invalid JSON"):
        load(project)


def test_a_top_level_list_is_an_error(project):
    write(project / "repo/opencode.yaml", "- model\n")
    with pytest.raises(ConfigError, match="must be a mapping"):
        load(project)


def test_env_and_file_substitutions_fill_string_values(project):
    write(project / "repo/prompts/reviewer.txt", "Review carefully.\n")
    write(project / "repo/opencode.yaml",
          "provider:\n  anthropic:\n    api_key: '{env:MY_KEY}'\n"
          "agent:\n  reviewer:\n    prompt: '{file:prompts/reviewer.txt}'\n")
    loaded = load(project, MY_KEY="sk-123")
    assert loaded.config.provider["anthropic"].api_key == "sk-123"
    assert loaded.agents["reviewer"].prompt == "Review carefully."


def test_an_unset_variable_is_empty_with_a_warning(project):
    write(project / "repo/opencode.yaml", "provider:\n  openai:\n    api_key: '{env:NOPE_KEY}'\n")
    with pytest.warns(ConfigWarning, match="NOPE_KEY is not set"):
        loaded = load(project)
    assert loaded.config.provider["openai"].api_key == ""


def test_a_missing_substituted_file_is_an_error_naming_the_key(project):
    write(project / "repo/opencode.yaml", "agent:\n  r:\n    prompt: '{file:missing.txt}'\n")
    with pytest.raises(ConfigError, match=r"opencode.yaml:3 agent.r.prompt: \{file:missing.txt\} cannot be read"):
        load(project)


def test_permission_order_is_kept_and_a_reset_key_moves_last(project):
    write(project / "xdg/opencode_nb/opencode.yaml",
          "permission:\n  bash:\n    \"*\": ask\n    \"git *\": allow\n  edit: ask\n")
    write(project / "repo/opencode.yaml", "permission:\n  bash:\n    \"*\": deny\n")
    perm = load(project).config.permission
    assert list(perm) == ["edit", "bash"]
    assert list(perm["bash"].items()) == [("git *", "allow"), ("*", "deny")]


def test_the_origin_of_every_key_is_known(project):
    write(project / "repo/opencode.yaml", "model: openai/gpt-5\nagent:\n  build:\n    steps: 5\n")
    loaded = load(project)
    assert loaded.where("agent", "build", "steps") == (str(project / "repo/opencode.yaml"), 4)
    assert loaded.where("agent", "build", "nothing") == (str(project / "repo/opencode.yaml"), 3)
