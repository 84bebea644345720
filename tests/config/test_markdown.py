import pytest

from opencode_nb.config import ConfigError, ConfigWarning


def test_a_markdown_agent_takes_its_fields_from_frontmatter_and_its_prompt_from_the_body(project):
    project.write("repo/.opencode/agent/reviewer.md",
                  "---\ndescription: Reviews code\nmode: subagent\ntemperature: 0.1\n"
                  "permission:\n  edit: deny\n---\n\nYou review code.\n\nBe brief.\n\n")
    agent = project.load().agents["reviewer"]
    assert (agent.description, agent.mode, agent.temperature) == ("Reviews code", "subagent", 0.1)
    assert agent.permission == {"edit": "deny"}
    assert agent.prompt == "You review code.\n\nBe brief."


def test_a_markdown_agent_may_give_a_display_name_and_the_older_max_steps(project):
    project.write("repo/.opencode/agent/sql.md", "---\nname: SQL reviewer\nmaxSteps: 8\n---\nReview SQL.\n")
    loaded = project.load()
    assert loaded.warnings == []
    assert (loaded.agents["sql"].name, loaded.agents["sql"].steps) == ("SQL reviewer", 8)


@pytest.mark.parametrize("folder", ["agent", "agents"])
def test_nested_agent_files_are_named_by_their_path(project, folder):
    project.write(f"repo/.opencode/{folder}/team/sql.md", "---\nmodel: openai/gpt-5\n---\nWrite SQL.\n")
    agent = project.load().agents["team/sql"]
    assert (agent.model, agent.prompt) == ("openai/gpt-5", "Write SQL.")


@pytest.mark.parametrize("folder", ["command", "commands"])
def test_markdown_commands_take_their_template_from_the_body(project, folder):
    project.write(f"repo/.opencode/{folder}/ops/test.md",
                  "---\ndescription: run the tests\nagent: build\nsubtask: true\n---\nRun $ARGUMENTS\n")
    command = project.load().commands["ops/test"]
    assert (command.template, command.description, command.agent, command.subtask) == (
        "Run $ARGUMENTS", "run the tests", "build", True)


def test_a_file_without_frontmatter_is_all_body(project):
    project.write("repo/.opencode/command/plain.md", "Just a template.\n---\nwith a rule\n")
    assert project.load().commands["plain"].template == "Just a template.\n---\nwith a rule"


def test_global_definitions_come_first_and_project_ones_override_them_field_by_field(project):
    project.write("xdg/opencode_nb/agent/reviewer.md", "---\ndescription: global\ntemperature: 0.2\n---\nG\n")
    project.write("xdg/opencode_nb/commands/hello.md", "Hello from home\n")
    project.write("repo/.opencode/agent/reviewer.md", "---\ndescription: project\n---\n")
    project.write("repo/analysis/q3/.opencode/agent/reviewer.md", "Nearest prompt\n")
    loaded = project.load()
    reviewer = loaded.agents["reviewer"]
    assert (reviewer.description, reviewer.temperature, reviewer.prompt) == ("project", 0.2, "Nearest prompt")
    assert loaded.commands["hello"].template == "Hello from home"


def test_a_markdown_agent_overrides_the_config_file_beside_it(project):
    project.write("repo/opencode.yaml", "agent:\n  r:\n    prompt: from yaml\n    steps: 3\n")
    project.write("repo/.opencode/agent/r.md", "from markdown\n")
    agent = project.load().agents["r"]
    assert (agent.prompt, agent.steps) == ("from markdown", 3)


def test_an_empty_body_keeps_a_prompt_given_in_frontmatter(project):
    project.write("repo/.opencode/agent/r.md", "---\nprompt: '{file:r.txt}'\n---\n")
    project.write("repo/.opencode/agent/r.txt", "From a file\n")
    assert project.load().agents["r"].prompt == "From a file"


def test_frontmatter_is_substituted_but_the_body_is_taken_as_written(project):
    project.write("repo/.opencode/agent/r.md", "---\ndescription: '{env:WHO}'\n---\nSay {env:WHO}\n")
    agent = project.load(WHO="reviewer").agents["r"]
    assert (agent.description, agent.prompt) == ("reviewer", "Say {env:WHO}")


@pytest.mark.parametrize("line", ["description: Reviews code: style and bugs", "description: Use it for:"])
def test_frontmatter_with_an_unquoted_colon_still_loads(project, line):
    project.write("repo/.opencode/agent/r.md", f"---\n{line}\nmode: subagent\n---\nx\n")
    agent = project.load().agents["r"]
    assert agent.description == line.removeprefix("description: ")
    assert agent.mode == "subagent"


def test_broken_frontmatter_names_the_file_and_its_line(project):
    path = project.write("repo/.opencode/agent/r.md", "---\nmode: subagent\ntools: [bash\n---\nx\n")
    with pytest.raises(ConfigError) as err:
        project.load()
    assert str(err.value).startswith(f"{path}:4: invalid YAML")  # the closing `---`, where the list was due
    assert "flow sequence that starts on line 3" in str(err.value)


def test_frontmatter_that_is_never_closed_is_an_error(project):
    path = project.write("repo/.opencode/command/c.md", "---\ndescription: x\nRun it\n")
    with pytest.raises(ConfigError, match=rf"^{path}:1: the frontmatter opened by `---` is never closed"):
        project.load()


def test_frontmatter_that_is_not_a_mapping_is_an_error(project):
    path = project.write("repo/.opencode/agent/r.md", "---\n- a\n---\nx\n")
    with pytest.raises(ConfigError, match=rf"^{path}:2: must be a mapping"):
        project.load()


def test_an_invalid_frontmatter_value_names_its_file_line(project):
    path = project.write("repo/.opencode/agent/r.md", "---\ndescription: x\nmode: sidekick\n---\nx\n")
    with pytest.raises(ConfigError) as err:
        project.load()
    assert str(err.value) == f"{path}:3 agent.r.mode: 'sidekick' is not one of primary, subagent, all"


def test_an_unknown_frontmatter_key_is_a_warning_naming_its_line(project):
    path = project.write("repo/.opencode/agent/r.md", "---\ndescription: x\ntemprature: 0.3\n---\nx\n")
    with pytest.warns(ConfigWarning, match=rf"{path}:3: unknown key agent.r.temprature \(did you mean temperature"):
        assert project.load().agents["r"].description == "x"


def test_a_command_with_neither_body_nor_template_says_what_to_write(project):
    path = project.write("repo/.opencode/command/empty.md", "---\ndescription: nothing\n---\n")
    with pytest.raises(ConfigError) as err:
        project.load()
    assert str(err.value) == (f"{path}:1 command.empty.template: is required; a command needs a template: "
                              "the body of its markdown file, or `template: ...`")


def test_frontmatter_and_body_both_giving_the_prompt_warn_that_the_body_wins(project):
    project.write("repo/.opencode/agent/r.md", "---\nprompt: short\n---\nlong\n")
    with pytest.warns(ConfigWarning, match="both `prompt:` and a body"):
        assert project.load().agents["r"].prompt == "long"
