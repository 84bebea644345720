import json
import warnings

import pytest

from opencode_nb.config import AgentConfig, ConfigError, ConfigWarning, global_config_dir, load_config


def test_every_level_is_read_and_the_nearest_wins(project):
    project.write("xdg/opencode_nb/g.md", "G")
    project.write("xdg/opencode_nb/opencode.yaml", "model: a/global\nsmall_model: a/global\ndefault_agent: g\n"
                  "instructions: [g.md]\n")
    project.write("repo/opencode.yaml", "model: a/root\nsmall_model: a/root\ndefault_agent: root\n")
    project.write("repo/.opencode/opencode.yaml", "model: a/root-dot\nsmall_model: a/root-dot\n")
    project.write("repo/analysis/opencode.json", json.dumps({"model": "a/mid"}))
    project.write("repo/analysis/q3/opencode.yml", "model: a/cwd\n")
    loaded = project.load()
    assert loaded.config.model == "a/cwd"
    assert loaded.config.small_model == "a/root-dot"
    assert loaded.config.default_agent == "root"
    assert loaded.config.instructions == ["g.md"]
    assert loaded.instruction_files == [project.global_dir / "g.md"]


def test_sources_lists_every_file_read_in_merge_order(project):
    files = [
        project.write("xdg/opencode_nb/opencode.yaml", "model: a/b\n"),
        project.write("xdg/opencode_nb/agent/g.md", "G\n"),
        project.write("repo/opencode.yaml", "model: a/b\n"),
        project.write("repo/.opencode/opencode.json", "{}"),
        project.write("repo/.opencode/agents/r.md", "R\n"),
        project.write("repo/.opencode/command/c.md", "C\n"),
        project.write("repo/analysis/q3/opencode.yaml", ""),
    ]
    extra = project.write("elsewhere/extra.yaml", "{}\n")
    loaded = project.load({"model": "a/b"}, OPENCODE_NB_CONFIG=str(extra))
    assert loaded.sources == [*files, extra]
    assert loaded.root == project.repo
    assert loaded.directory == project.cwd
    assert loaded.global_dir == project.global_dir


def test_yaml_yml_and_json_in_one_directory_are_read_in_that_order(project):
    project.write("repo/opencode.yaml", "model: a/yaml\nsmall_model: a/yaml\ndefault_agent: yaml\n")
    project.write("repo/opencode.yml", "model: a/yml\nsmall_model: a/yml\n")
    project.write("repo/opencode.json", '{"model": "a/json"}')
    config = project.load().config
    assert (config.model, config.small_model, config.default_agent) == ("a/json", "a/yml", "yaml")


def test_the_env_file_comes_after_the_project_and_the_overrides_after_it(project):
    project.write("repo/analysis/q3/opencode.yaml", "model: a/cwd\nsmall_model: a/cwd\ndefault_agent: cwd\n")
    extra = project.write("elsewhere.yaml", "model: a/env\nsmall_model: a/env\n")
    config = project.load({"small_model": "scripted/demo"}, OPENCODE_NB_CONFIG=str(extra)).config
    assert (config.model, config.small_model, config.default_agent) == ("a/env", "scripted/demo", "cwd")


def test_a_missing_env_config_file_is_an_error_naming_it(project):
    with pytest.raises(ConfigError, match=r"nope\.yaml: is named by \$OPENCODE_NB_CONFIG but is not a file"):
        project.load(OPENCODE_NB_CONFIG=str(project.base / "nope.yaml"))


def test_overrides_may_hold_config_models_and_merge_into_file_agents(project):
    project.write("repo/opencode.yaml", "agent:\n  r:\n    description: from file\n    steps: 4\n")
    loaded = project.load({"agent": {"r": AgentConfig(steps=9)}})
    assert loaded.agents["r"].description == "from file"
    assert loaded.agents["r"].steps == 9
    assert loaded.where("agent", "r", "steps") == ("<workspace config>", None)


def test_a_config_model_using_the_older_max_steps_spelling_merges_without_warnings(project):
    loaded = project.load({"agent": {"r": AgentConfig(maxSteps=6)}})
    assert loaded.warnings == [] and loaded.agents["r"].steps == 6


def test_an_error_in_the_overrides_names_the_workspace_config(project):
    with pytest.raises(ConfigError, match=r"^<workspace config> agent\.x\.steps: 0 must be greater than 0$"):
        project.load({"agent": {"x": {"steps": 0}}})


def test_without_git_the_directory_itself_is_the_root(tmp_path):
    (tmp_path / "opencode.yaml").write_text("model: a/parent\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "opencode.yaml").write_text("small_model: a/sub\n")
    loaded = load_config(tmp_path / "sub", env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert loaded.root == tmp_path / "sub"
    assert loaded.config.model is None
    assert loaded.config.small_model == "a/sub"


def test_a_git_file_marks_a_worktree_root(tmp_path):
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text("gitdir: /elsewhere\n")
    (tmp_path / "wt" / "opencode.yaml").write_text("model: a/wt\n")
    (tmp_path / "wt" / "nb").mkdir()
    loaded = load_config(tmp_path / "wt" / "nb", env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert loaded.root == tmp_path / "wt"
    assert loaded.config.model == "a/wt"


def test_a_directory_that_does_not_exist_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="is not a directory"):
        load_config(tmp_path / "missing", env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})


def test_the_global_dir_follows_xdg_then_home(tmp_path):
    assert global_config_dir({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "opencode_nb"
    assert global_config_dir({"HOME": str(tmp_path)}) == tmp_path / ".config" / "opencode_nb"
    assert global_config_dir({"XDG_CONFIG_HOME": "relative", "HOME": str(tmp_path)}) == (
        tmp_path / ".config" / "opencode_nb")


def test_home_config_dir_is_used_when_xdg_is_unset(project):
    project.write("home/.config/opencode_nb/opencode.yaml", "model: a/home\n")
    env = {"HOME": str(project.base / "home")}
    assert load_config(project.cwd, env=env).config.model == "a/home"


def test_agents_and_commands_come_from_config_and_markdown_merged(project):
    project.write("xdg/opencode_nb/agent/reviewer.md", "---\ndescription: global\ntemperature: 0.2\n---\nG\n")
    project.write("repo/opencode.yaml", "agent:\n  reviewer:\n    description: project\n"
                  "command:\n  hi:\n    template: Say hi\n")
    project.write("repo/.opencode/command/test.md", "Run the tests\n")
    loaded = project.load()
    assert loaded.agents["reviewer"] == AgentConfig(description="project", temperature=0.2, prompt="G")
    assert loaded.agents is loaded.config.agent
    assert {name: c.template for name, c in loaded.commands.items()} == {"hi": "Say hi", "test": "Run the tests"}


def test_instruction_files_resolve_relative_to_the_file_that_names_them(project):
    project.write("repo/docs/a.md", "A")
    project.write("repo/docs/b.md", "B")
    project.write("repo/STYLE.md", "S")
    project.write("repo/.opencode/rules.md", "R")
    project.write("repo/opencode.yaml", "instructions: [STYLE.md, 'docs/*.md', https://example.com/x.md]\n")
    assert project.load().instruction_files == [project.repo / p for p in ("STYLE.md", "docs/a.md", "docs/b.md")]
    project.write("repo/.opencode/opencode.yaml", "instructions: [rules.md, ../STYLE.md]\n")
    assert project.load().instruction_files == [project.repo / ".opencode/rules.md", project.repo / "STYLE.md"]


def test_instruction_overrides_resolve_against_the_directory_and_expand_home(project):
    project.write("repo/analysis/q3/NOTES.md", "N")
    project.write("home/mine.md", "M")
    loaded = project.load({"instructions": ["NOTES.md", "~/mine.md"]})
    assert loaded.instruction_files == [project.cwd / "NOTES.md", project.base / "home/mine.md"]


def test_an_instruction_entry_matching_nothing_is_a_warning(project):
    path = project.write("repo/opencode.yaml", "instructions:\n  - NOPE.md\n")
    with pytest.warns(ConfigWarning, match=rf"{path}:2: instructions entry 'NOPE.md' matches no file"):
        loaded = project.load()
    assert loaded.instruction_files == []
    assert len(loaded.warnings) == 1


def test_every_warning_is_both_emitted_and_kept(project):
    project.write("repo/opencode.yaml", "modle: x\nprovider:\n  openai:\n    api_key: '{env:NOPE_KEY}'\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = project.load()
    assert [str(w.message) for w in caught] == loaded.warnings
    assert all(w.category is ConfigWarning for w in caught)
    assert all("opencode_nb" not in w.filename for w in caught)  # they point at the caller, not the loader
    assert len(loaded.warnings) == 2


def test_a_clean_config_loads_without_warnings(project):
    project.write("repo/opencode.yaml", "model: anthropic/claude-sonnet-4-5\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert project.load().warnings == []


def test_the_origin_of_every_key_is_known(project):
    path = project.write("repo/opencode.yaml", "model: openai/gpt-5\nagent:\n  build:\n    steps: 5\n")
    loaded = project.load()
    assert loaded.where("agent", "build", "steps") == (str(path), 4)
    assert loaded.where("agent", "build", "nothing") == (str(path), 3)
    assert loaded.where("nothing") == (None, None)


def test_the_loaded_config_is_frozen(project):
    loaded = project.load()
    with pytest.raises(AttributeError):
        loaded.root = project.base  # type: ignore[misc]
