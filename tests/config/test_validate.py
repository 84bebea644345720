import json

import pytest

from opencode_nb.config import ConfigError, ConfigWarning


def assert_no_chained_traceback(error):
    assert error.__cause__ is None
    assert error.__context__ is None or error.__suppress_context__


UNKNOWN_KEYS = [
    ("modle: a/b\n", 1, "modle (did you mean model?)"),
    ("provider:\n  openai:\n    baseurl: http://x\n", 3, "provider.openai.baseurl (did you mean base_url?)"),
    ("agent:\n  build:\n    temprature: 0.3\n", 3, "agent.build.temprature (did you mean temperature?)"),
    ("agent:\n  build:\n    stpes: 3\n", 3, "agent.build.stpes (did you mean steps?)"),
    ("agent:\n  build:\n    max_steps: 3\n", 3, "agent.build.max_steps (did you mean maxSteps?)"),
    ("command:\n  t:\n    template: x\n    subtaks: true\n", 4, "command.t.subtaks (did you mean subtask?)"),
    ("compaction:\n  Auto: false\n", 2, "compaction.Auto (did you mean auto?)"),
    ("provider:\n  p:\n    models:\n      m:\n        contxt: 9\n", 5,
     "provider.p.models.m.contxt (did you mean context?)"),
    ("provider:\n  p:\n    models:\n      m:\n        cost:\n          inptu: 1\n", 6,
     "provider.p.models.m.cost.inptu (did you mean input?)"),
    ("small-model: a/b\n", 1, "small-model (did you mean small_model?)"),
    ("zzz: 1\n", 1, "zzz (known keys: model, small_model, default_agent,"),
]


@pytest.mark.parametrize(("text", "line", "message"), UNKNOWN_KEYS)
def test_an_unknown_key_anywhere_is_a_warning_with_file_line_path_and_hint(project, text, line, message):
    path = project.write("repo/opencode.yaml", "default_agent: plan\n" + text)
    with pytest.warns(ConfigWarning) as caught:
        loaded = project.load()
    expected = f"{path}:{line + 1}: unknown key {message}"
    assert [str(w.message) for w in caught] == loaded.warnings
    assert len(loaded.warnings) == 1 and loaded.warnings[0].startswith(expected)
    assert loaded.config.default_agent == "plan"


def test_the_unknown_key_is_dropped_and_its_siblings_still_load(project):
    project.write("repo/opencode.yaml", "agent:\n  build:\n    temprature: 0.3\n    steps: 7\n")
    with pytest.warns(ConfigWarning):
        agent = project.load().agents["build"]
    assert agent.steps == 7 and agent.temperature is None


def test_the_same_unknown_key_in_two_files_warns_for_each(project):
    first = project.write("repo/opencode.yaml", "modle: x\n")
    second = project.write("repo/analysis/opencode.json", '{\n  "modle": "y"\n}\n')
    with pytest.warns(ConfigWarning):
        loaded = project.load()
    assert [w.split(": unknown")[0] for w in loaded.warnings] == [f"{first}:1", f"{second}:2"]


def test_an_unknown_key_in_the_overrides_names_the_workspace_config(project):
    with pytest.warns(ConfigWarning, match=r"^<workspace config>: unknown key modle \(did you mean model\?\)"):
        project.load({"modle": "x"})


def test_max_steps_is_read_as_the_older_spelling_of_steps(project):
    project.write("repo/opencode.yaml", "agent:\n  build:\n    maxSteps: 12\n  plan:\n    maxSteps: 4\n    steps: 9\n")
    loaded = project.load()
    assert loaded.warnings == []
    assert (loaded.agents["build"].steps, loaded.agents["plan"].steps) == (12, 9)


def test_steps_written_in_one_file_beats_max_steps_written_in_a_nearer_one(project):
    project.write("repo/opencode.yaml", "agent:\n  build:\n    steps: 5\n")
    project.write("repo/analysis/q3/opencode.yaml", "agent:\n  build:\n    maxSteps: 50\n")
    assert project.load().agents["build"].steps == 5


def test_an_invalid_max_steps_names_its_file_line_and_spelling(project):
    path = project.write("repo/opencode.yaml", "agent:\n  build:\n    maxSteps: 0\n")
    with pytest.raises(ConfigError, match=rf"^{path}:3 agent.build.maxSteps: 0 must be greater than 0$"):
        project.load()


def test_sections_written_with_nothing_under_them_are_empty(project):
    project.write("repo/opencode.yaml", "agent:\n  build:\nprovider:\ncompaction:\npermission:\n")
    loaded = project.load()
    assert loaded.agents["build"].steps is None
    assert loaded.config.provider == {} and loaded.config.compaction.auto is True


def test_options_hold_anything_without_warnings(project):
    project.write("repo/opencode.yaml", "agent:\n  build:\n    options:\n      anything: 1\n"
                  "provider:\n  openai:\n    options:\n      timeout: 3\n")
    assert project.load().agents["build"].options == {"anything": 1}


def test_an_invalid_permission_action_names_file_line_key_and_the_allowed_actions(project):
    path = project.write("repo/opencode.yaml",
                         'agent:\n  reviewer:\n    permission:\n      bash:\n        "ls *": allow\n'
                         '        "rm *": maybe\n')
    with pytest.raises(ConfigError) as err:
        project.load()
    assert str(err.value) == f"{path}:6 agent.reviewer.permission.bash.\"rm *\": 'maybe' is not one of allow, ask, deny"
    assert (err.value.line, err.value.key) == (6, 'agent.reviewer.permission.bash."rm *"')


def test_an_invalid_permission_action_in_json_names_its_line(project):
    path = project.write("repo/opencode.json", json.dumps({"model": "a/b", "permission": {"edit": "nope"}}, indent=2))
    with pytest.raises(ConfigError, match=rf"^{path}:4 permission.edit: 'nope' is not one of allow, ask, deny$"):
        project.load()


@pytest.mark.parametrize(("value", "hint"), [
    ("permission: sometimes\n", "'sometimes' is not one of allow, ask, deny"),
    ("permission:\n  bash: [ls]\n", "expected one of allow, ask, deny or a mapping of patterns to actions"),
    ("permission:\n  bash:\n    git:\n      push: deny\n", "patterns nest one level only"),
    ("permission:\n  edit:\n", "is empty: write one of allow, ask, deny"),
])
def test_malformed_permissions_say_what_is_allowed(project, value, hint):
    project.write("repo/opencode.yaml", value)
    with pytest.raises(ConfigError, match="permission") as err:
        project.load()
    assert hint in str(err.value)


def test_the_error_names_the_file_the_bad_value_came_from(project):
    project.write("repo/opencode.yaml", "model: openai/gpt-5\nagent:\n  x:\n    steps: 3\n")
    path = project.write("repo/analysis/opencode.yaml", "\n\nmodel: gpt5\n")
    with pytest.raises(ConfigError) as err:
        project.load()
    assert str(err.value) == (f"{path}:3 model: 'gpt5' is not a model id: use provider/model, "
                              "e.g. anthropic/claude-sonnet-4-5")


def test_a_bad_leaf_is_reported_in_its_file_even_when_a_later_file_sets_its_siblings(project):
    path = project.write("xdg/opencode_nb/opencode.yaml", "agent:\n  x:\n    mode: sidekick\n")
    project.write("repo/opencode.yaml", "agent:\n  x:\n    steps: 3\n")
    with pytest.raises(ConfigError, match=rf"^{path}:3 agent.x.mode: 'sidekick' is not one of primary, subagent, all"):
        project.load()


@pytest.mark.parametrize("text", [
    "small_model: claude\n",
    "agent:\n  x:\n    model: gpt-5\n",
    "command:\n  c:\n    template: t\n    model: 'openai gpt'\n",
])
def test_every_model_field_asks_for_provider_slash_model(project, text):
    project.write("repo/opencode.yaml", text)
    with pytest.raises(ConfigError, match="is not a model id: use provider/model, e.g. anthropic/claude-sonnet-4-5"):
        project.load()


INVALID = [
    ('{\n  "agent": {\n    "plan": {\n      "steps": -3\n    }\n  }\n}\n', "opencode.json", 4,
     "agent.plan.steps: -3 must be greater than 0"),
    ("agent:\n  a:\n    temperature: 3\n", "opencode.yaml", 3, "agent.a.temperature: 3 must be at most 2"),
    ("agent:\n  a:\n    steps: many\n", "opencode.yaml", 3,
     "agent.a.steps: expected a whole number, got 'many'"),
    ("agent:\n  a:\n    hidden: perhaps\n", "opencode.yaml", 3,
     "agent.a.hidden: expected true or false, got 'perhaps'"),
    ("agent:\n  a:\n    description: 12\n", "opencode.yaml", 3,
     "agent.a.description: expected text, got 12; put it in quotes"),
    ("instructions: STYLE.md\n", "opencode.yaml", 1,
     "instructions: expected a list, got 'STYLE.md'; e.g. instructions: [STYLE.md, docs/*.md]"),
    ("instructions: [a.md, 3]\n", "opencode.yaml", 1, "instructions.1: expected text, got 3; put it in quotes"),
    ("agent:\n  - build\n", "opencode.yaml", 1, "agent: expected a mapping, got a list"),
    ('{"provider": {"p": {"type": "grpc"}}}', "opencode.json", 1,
     "provider.p.type: 'grpc' is not one of anthropic, openai, openai-compatible, scripted"),
    ("provider:\n  scripted:\n    script: 5\n", "opencode.yaml", 3,
     "provider.scripted.script: expected a list or text, got 5"),
    ("agent:\n  x:\n    tools: {bash: sometimes}\n", "opencode.yaml", 3,
     "agent.x.tools.bash: expected true or false, got 'sometimes'"),
]


@pytest.mark.parametrize(("text", "name", "line", "message"), INVALID)
def test_an_invalid_value_names_file_line_key_and_what_is_allowed(project, text, name, line, message):
    path = project.write(f"repo/{name}", text)
    with pytest.raises(ConfigError) as err:
        project.load()
    assert str(err.value).startswith(f"{path}:{line} {message}")
    assert_no_chained_traceback(err.value)


def test_a_top_level_list_is_an_error(project):
    path = project.write("repo/opencode.yaml", "- model\n")
    with pytest.raises(ConfigError, match=rf"^{path}:1: must be a mapping of keys to values"):
        project.load()


def test_a_top_level_json_array_is_an_error(project):
    path = project.write("repo/opencode.json", "[]")
    with pytest.raises(ConfigError, match=rf"^{path}:1: must be a JSON object"):
        project.load()


def test_broken_yaml_names_the_file_line_and_column_not_a_parser_traceback(project):
    path = project.write("repo/opencode.yaml", "model: openai/gpt-5\nagent:\n  build:\n   steps: 3\n  plan: x: y\n")
    with pytest.raises(ConfigError) as err:
        project.load()
    assert str(err.value).startswith(f"{path}:5: invalid YAML: mapping values are not allowed here (column 10)")
    assert_no_chained_traceback(err.value)


def test_broken_json_names_the_file_line_and_column(project):
    path = project.write("repo/opencode.json", '{\n  "model": "openai/gpt-5",\n}\n')
    with pytest.raises(ConfigError) as err:
        project.load()
    assert str(err.value) == (f"{path}:3: invalid JSON: Expecting property name enclosed in double quotes "
                              "(column 1); JSON allows no trailing comma after the last entry")


def test_a_file_that_is_not_utf8_is_an_error_naming_it(project):
    path = project.repo / "opencode.yaml"
    path.write_bytes(b"model: \xff\xfe\n")
    with pytest.raises(ConfigError, match=rf"^{path}: is not UTF-8 text"):
        project.load()
