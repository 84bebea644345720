"""Mistakes in what restricts are errors marked `restricting`, with the right spelling, and every mistake of one
reading is reported at once, unknown keys included; a front end blocks prompts on a restricting one."""

import json

import pytest

from opencode_nb.config import ConfigError
from opencode_nb.config.validate import PERMISSION_NAMES
from opencode_nb.tool.reserved import ASKED, TOOLS


def test_type_errors_and_unknown_keys_are_one_report_each_at_its_file_and_line(project):
    path = project.write("repo/opencode.yaml", "model: 3\ncolour: red\nagent:\n  build:\n    temperature: hot\n"
                                               "    colr: x\n")
    with pytest.raises(ConfigError) as err:
        project.load()
    assert [(p.path, p.line, p.key) for p in err.value.problems] == [
        (str(path), 1, "model"), (str(path), 2, "colour"), (str(path), 5, "agent.build.temperature"),
        (str(path), 6, "agent.build.colr")]
    assert "did you mean color?" in str(err.value) and not err.value.restricting


@pytest.mark.parametrize(("text", "key", "meant"), [
    ("permisions: {bash: deny}\n", "permisions", "permission:"),
    ("permission: {bash: deni}\n", "permission.bash", "did you mean deny?"),
    ('permission:\n  bash: {"rm *": dney}\n', 'permission.bash."rm *"', "did you mean deny?"),
    ("permission: {bassh: deny}\n", "permission.bassh", "did you mean bash?"),
    ("sandbox: requird\n", "sandbox", "required"),
])
def test_a_misspelt_restriction_is_a_restricting_error_with_the_right_spelling(project, text, key, meant):
    project.write("repo/opencode.yaml", text)
    with pytest.raises(ConfigError) as err:
        project.load()
    assert err.value.restricting and err.value.key == key and meant in str(err.value)


def test_the_same_mistakes_in_a_json_file_are_the_same_errors(project):
    project.write("repo/opencode.json", json.dumps({"permission": {"bassh": "deny", "edit": "dney"}}, indent=1))
    with pytest.raises(ConfigError) as err:
        project.load()
    assert err.value.restricting
    assert [(p.key, p.line) for p in err.value.problems] == [("permission.bassh", 3), ("permission.edit", 4)]


def test_a_misspelt_restriction_in_an_agent_refuses_that_agent_in_a_file_or_its_frontmatter(project):
    project.write("repo/opencode.yaml", "agent:\n  build:\n    permisions: {bash: deny}\n")
    project.write("repo/.opencode/agent/reviewer.md", "---\npermisions: {bash: deny}\n---\nReview.\n")
    with pytest.warns(Warning):
        loaded = project.load()
    assert set(loaded.refused) == {"build", "reviewer"}
    assert loaded.agents["build"].disable and "did you mean `permission:`" in loaded.refused["reviewer"]


def test_a_name_that_may_be_an_mcp_or_custom_tool_is_a_rule_for_it(project):
    project.write("repo/opencode.yaml", "permission: {github_create_issue: deny, my_query: ask, 'mcp_*': ask}\n")
    assert project.load().config.permission == {"github_create_issue": "deny", "my_query": "ask", "mcp_*": "ask"}


def test_a_misspelt_name_whose_rule_allows_is_an_error_that_restricts_nothing(project):
    project.write("repo/opencode.yaml", "permission: {bassh: allow}\n")
    with pytest.raises(ConfigError) as err:
        project.load()
    assert not err.value.restricting and "did you mean bash?" in str(err.value)


def test_the_built_in_permission_names_are_the_reserved_ones():
    from opencode_nb.permission.rules import EDIT_TOOLS

    assert PERMISSION_NAMES == TOOLS | ASKED | EDIT_TOOLS
