"""Every problem of one reading is reported together, each at its file and line; a person fixes them in one go."""

import pytest

from opencode_nb.config import ConfigError


def test_every_invalid_value_in_every_file_is_reported_at_once(project):
    global_file = project.write("xdg/opencode_nb/opencode.yaml", "sandbox: sometimes\n")
    project_file = project.write("repo/opencode.yaml", "agent:\n  build:\n    steps: -3\n    temperature: 9\n"
                                                       "compaction: {auto: maybe}\n")
    with pytest.raises(ConfigError) as err:
        project.load()
    lines = str(err.value).splitlines()
    assert lines[0] == "4 problems in the configuration:"
    assert lines[1:] == [
        f"  {global_file}:1 sandbox: 'sometimes' is not one of off, auto, required",
        f"  {project_file}:3 agent.build.steps: -3 must be greater than 0",
        f"  {project_file}:4 agent.build.temperature: 9 must be at most 2",
        f"  {project_file}:5 compaction.auto: expected true or false, got 'maybe'",
    ]
    assert [p.key for p in err.value.problems] == ["sandbox", "agent.build.steps", "agent.build.temperature",
                                                   "compaction.auto"]


def test_a_file_that_does_not_parse_is_reported_with_the_mistakes_of_the_others(project):
    broken = project.write("repo/.opencode/agent/reviewer.md", "---\ntemperature: [\n---\nReview.\n")
    config = project.write("repo/opencode.yaml", "permission:\n  bash: maybe\n  edit: {'*.py': sure}\n")
    with pytest.raises(ConfigError) as err:
        project.load()
    assert [(p.path, p.line) for p in err.value.problems] == [(str(broken), 3), (str(config), 2), (str(config), 3)]
    assert "invalid YAML" in str(err.value), "the broken file, and the schema reports no bad action a second time"


def test_a_single_problem_reads_as_before(project):
    path = project.write("repo/opencode.yaml", "agent:\n  build:\n    steps: 0\n")
    with pytest.raises(ConfigError) as err:
        project.load()
    assert str(err.value) == f"{path}:3 agent.build.steps: 0 must be greater than 0"
    assert err.value.problems == [err.value]


def test_an_unreadable_file_reference_is_one_of_the_problems(project):
    path = project.write("repo/opencode.yaml", "agent:\n  build:\n    prompt: '{file:missing.txt}'\n    steps: -1\n")
    with pytest.raises(ConfigError) as err:
        project.load()
    assert [(p.key, p.line) for p in err.value.problems] == [("agent.build.prompt", 3), ("agent.build.steps", 4)]
    assert str(path) in str(err.value)


def test_a_change_to_any_configuration_file_is_noticed(project):
    config = project.write("repo/opencode.yaml", "model: openai/gpt-5\n")
    loaded = project.load()
    assert not loaded.changed()
    config.write_text("model: openai/gpt-5-mini\n")
    assert loaded.changed(), "an edit"
    loaded = project.load()
    agent = project.write("repo/.opencode/agent/reviewer.md", "---\ndescription: Reviews\n---\nReview.\n")
    assert loaded.changed(), "a new agent file"
    loaded = project.load()
    agent.unlink()
    assert loaded.changed(), "a file removed"
    loaded = project.load()
    project.write("repo/analysis/opencode.yml", "model: openai/gpt-5\n")
    assert loaded.changed(), "a new file at a level between the root and the working directory"


def test_the_variable_a_value_was_read_from_is_known_until_a_later_file_replaces_it(project):
    project.write("xdg/opencode_nb/opencode.yaml", "provider:\n  openai:\n    api_key: '{env:TEAM_KEY}'\n")
    assert project.load(TEAM_KEY="sk-1").env_refs == {("provider", "openai", "api_key"): ["TEAM_KEY"]}
    project.write("repo/opencode.yaml", "provider:\n  openai:\n    api_key: sk-literal\n")
    assert project.load(TEAM_KEY="sk-1").env_refs == {}
