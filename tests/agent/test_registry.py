from pathlib import Path

import pytest

from opencode_nb.agent import AgentRegistry
from opencode_nb.config import AgentConfig, Config, load_config
from opencode_nb.errors import ConfigError, NotFoundError
from opencode_nb.permission import disabled, evaluate

DATA, TMP = Path("/data/ocnb"), Path("/tmp")


def registry(config: dict | None = None) -> AgentRegistry:
    return AgentRegistry(Config.model_validate(config or {}), data_dir=DATA, tmp_dir=TMP)


def decide(agent, permission, pattern):
    return evaluate(permission, pattern, agent.permission).action


@pytest.fixture(scope="module")
def agents():
    return registry()


def test_reading_secrets_asks_but_examples_and_lookalikes_do_not(agents):
    build = agents.get("build")
    assert decide(build, "read", ".env") == "ask"
    assert decide(build, "read", "config/prod.env") == "ask"
    assert decide(build, "read", ".env.local") == "ask"
    assert decide(build, "read", ".env.example") == "allow"
    assert decide(build, "read", ".envrc") == "ask"  # direnv's file exports the project's keys
    assert decide(build, "read", "keys.txt") == "allow"
    assert decide(build, "read", "src/environment.ts") == "allow"


def test_every_agent_asks_before_leaving_the_workspace_or_repeating_itself(agents):
    for name in ("build", "plan", "general"):
        agent = agents.get(name)
        assert decide(agent, "external_directory", "/etc/*") == "ask"
        assert decide(agent, "external_directory", f"{DATA}/tool-output/*") == "allow"
        assert decide(agent, "doom_loop", "bash") == "ask"


def test_build_may_enter_plan_mode_and_ask_questions_but_not_exit_plan_mode(agents):
    build = agents.get("build")
    assert decide(build, "plan_enter", "*") == "allow"
    assert decide(build, "question", "*") == "allow"
    assert decide(build, "plan_exit", "*") == "deny"
    assert decide(build, "edit", "src/a.py") == "allow"


def test_plan_writes_only_its_plan_files(agents):
    plan = agents.get("plan")
    assert decide(plan, "edit", ".opencode/plans/fix-mean.md") == "allow"
    assert decide(plan, "edit", "src/a.py") == "deny"
    assert decide(plan, "plan_exit", "*") == "allow"
    assert decide(plan, "plan_enter", "*") == "deny"
    assert "edit" not in disabled(["edit"], plan.permission)  # offered, for the plan file


def test_plan_runs_read_only_commands_and_asks_for_anything_else(agents):
    plan = agents.get("plan")
    for command in ("ls", "ls -la", "git status", "git diff HEAD~1", "git log --oneline", "find . -name x",
                    "grep -r mean src", "git branch"):
        assert decide(plan, "bash", command) == "allow", command
    for command in ("rm x", "find . -delete", "find . -name '*.py' -exec rm {} ;", "git push", "python x.py",
                    "git branch -D main"):
        assert decide(plan, "bash", command) == "ask", command


def test_plan_may_delegate_to_explore_but_not_to_general(agents):
    plan = agents.get("plan")
    assert [a.name for a in agents.subagents(plan)] == ["data-explorer", "explore"]
    assert {a.name for a in agents.subagents(agents.get("build"))} == {"data-explorer", "explore", "general"}


def test_explore_reads_and_runs_commands_but_never_edits_or_delegates(agents):
    explore = agents.get("explore")
    for tool in ("read", "grep", "glob", "list", "bash", "webfetch", "variables", "notebook_read"):
        assert decide(explore, tool, "*") == "allow", tool
    for tool in ("edit", "task", "todowrite", "question", "python", "notebook_edit", "notebook_run"):
        assert decide(explore, tool, "*") == "deny", tool
    assert disabled(["edit", "write", "task", "bash"], explore.permission) == {"edit", "write", "task"}


def test_data_explorer_inspects_variables_and_runs_sandboxed_python_only(agents):
    data = agents.get("data-explorer")
    assert decide(data, "variables", "df") == "allow"
    assert decide(data, "python", "sandbox") == "allow"
    assert decide(data, "python", "live") == "deny"
    assert decide(data, "bash", "ls") == "deny"
    assert decide(data, "edit", "a.csv") == "deny"
    assert decide(data, "notebook_read", "*") == "allow"
    assert decide(data, "notebook_edit", "insert") == decide(data, "notebook_run", "abc") == "deny"
    assert data.mode == "subagent"


def test_general_keeps_no_todo_list_and_asks_no_questions(agents):
    general = agents.get("general")
    assert decide(general, "todowrite", "*") == "deny"
    assert decide(general, "todoread", "*") == "deny"
    assert decide(general, "question", "*") == "deny"


def test_hidden_agents_deny_everything_and_are_not_listed(agents):
    for name in ("compaction", "title", "summary"):
        agent = agents.get(name)
        assert agent.hidden and decide(agent, "read", "a") == "deny"
    assert {a.name for a in agents.list()} == {"build", "plan", "general", "explore", "data-explorer"}
    assert agents.get("title").temperature == 0.5


def test_hidden_agents_are_listed_on_request_after_every_agent_a_person_can_pick(agents):
    assert [a.name for a in agents.list(include_hidden=True)] == [
        *(a.name for a in agents.list()), "compaction", "summary", "title"]


def test_every_builtin_has_its_own_prompt(agents):
    prompts = [a.prompt for a in agents.list(include_hidden=True)]
    assert all(p and len(p) > 80 for p in prompts)
    assert len(set(prompts)) == len(prompts)


def test_list_puts_primary_agents_first_with_the_default_leading(agents):
    assert [a.name for a in agents.list()] == ["build", "plan", "data-explorer", "explore", "general"]


def test_config_overrides_a_builtin_field_by_field():
    build = registry({"agent": {"build": {"model": "openai/gpt-5", "temperature": 0.1, "steps": 30}}}).get("build")
    assert (build.model, build.temperature, build.steps) == ("openai/gpt-5", 0.1, 30)
    assert build.native and build.description.startswith("The default agent")


def test_max_steps_in_config_sets_the_step_limit():
    agents = registry({"agent": {"build": {"maxSteps": 12}, "plan": {"maxSteps": 4, "steps": 9}}})
    assert (agents.get("build").steps, agents.get("plan").steps) == (12, 9)


def test_name_in_config_renames_what_is_shown_while_the_key_still_selects_the_agent():
    agents = registry({"agent": {"build": {"name": "Builder"}, "sql": {"name": "SQL analyst", "mode": "subagent"}}})
    build = agents.get("build")
    assert (build.name, build.label, build.native) == ("build", "Builder", True)
    assert agents.get("sql").label == "SQL analyst" and "sql" in [a.name for a in agents.subagents()]
    assert agents.get("plan").label == "plan"
    assert registry({"default_agent": "build", "agent": {"build": {"name": "Builder"}}}).default.name == "build"


def test_config_permissions_are_appended_not_substituted():
    build = registry({"agent": {"build": {"permission": {"edit": "deny"}}}}).get("build")
    assert decide(build, "edit", "a.py") == "deny"
    assert decide(build, "plan_enter", "*") == "allow"
    assert decide(build, "read", ".env") == "ask"


def test_global_permission_comes_before_an_agents_own_config_permission():
    agents = registry({"permission": {"bash": "deny"}, "agent": {"build": {"permission": {"bash": {"ls *": "allow"}}}}})
    assert decide(agents.get("build"), "bash", "ls -l") == "allow"
    assert decide(agents.get("build"), "bash", "rm x") == "deny"
    assert decide(agents.get("general"), "bash", "ls") == "deny"


def test_legacy_tool_switches_become_rules_that_explicit_permission_overrides():
    agents = registry({"agent": {"build": {"tools": {"write": False, "bash": False},
                                           "permission": {"bash": "ask"}}}})
    build = agents.get("build")
    assert decide(build, "edit", "a.py") == "deny"
    assert decide(build, "bash", "ls") == "ask"
    assert build.tools == {"write": False, "bash": False}


def test_a_new_agent_is_usable_in_any_mode_by_default():
    agents = registry({"agent": {"reviewer": {"description": "Reviews diffs", "prompt": "Review."}}})
    reviewer = agents.get("reviewer")
    assert reviewer.mode == "all" and not reviewer.native
    assert decide(reviewer, "read", ".env") == "ask"
    assert "reviewer" in [a.name for a in agents.subagents()]


def test_disable_removes_an_agent():
    agents = registry({"agent": {"general": {"disable": True}}})
    assert "general" not in agents
    with pytest.raises(NotFoundError, match=r"known agents: build, plan, data-explorer, explore$"):
        agents.get("general")


def test_default_agent_chooses_the_default_when_it_is_a_usable_primary():
    assert registry({"default_agent": "plan"}).default.name == "plan"


@pytest.mark.parametrize(("name", "problem"), [("explore", "is a subagent"), ("ghost", "is not defined"),
                                               ("title", "is hidden")])
def test_a_default_agent_that_cannot_answer_the_person_is_an_error(name, problem):
    with pytest.raises(ConfigError) as err:
        registry({"default_agent": name})
    assert str(err.value) == (f"config default_agent: {name!r} {problem}; name a primary agent such as build or plan, "
                              "or remove the key")


def test_a_default_agent_that_config_disabled_is_an_error_saying_so():
    with pytest.raises(ConfigError, match=r"default_agent: 'plan' is disabled; name a primary agent such as build,"):
        registry({"default_agent": "plan", "agent": {"plan": {"disable": True}}})


@pytest.mark.parametrize(("file", "text"), [
    ("opencode.yaml", "model: scripted/demo\ndefault_agent: explore\n"),
    ("opencode.json", '{\n  "default_agent": "explore",\n  "model": "scripted/demo"\n}\n'),
])
def test_a_wrong_default_agent_is_reported_at_the_file_and_line_that_names_it(tmp_path, file, text):
    (tmp_path / ".git").mkdir()
    path = tmp_path / file
    path.write_text(text)
    loaded = load_config(tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)})
    with pytest.raises(ConfigError) as err:
        AgentRegistry(loaded.config, loaded.agents, data_dir=DATA, tmp_dir=TMP, where=loaded.where)
    assert (err.value.path, err.value.line, err.value.key) == (str(path), 2, "default_agent")
    assert str(err.value).startswith(f"{path}:2 default_agent: 'explore' is a subagent; name a primary agent")


def test_a_config_agent_in_primary_mode_may_be_the_default():
    agents = registry({"default_agent": "analyst", "agent": {"analyst": {"mode": "primary", "prompt": "Analyse."}}})
    assert agents.default.name == "analyst"


def test_without_build_the_first_visible_primary_is_the_default():
    assert registry({"agent": {"build": {"disable": True}}}).default.name == "plan"


def test_a_config_leaving_no_usable_primary_agent_is_an_error():
    with pytest.raises(ConfigError, match="no usable primary agent"):
        registry({"agent": {"build": {"disable": True}, "plan": {"mode": "subagent"}}})


def test_agents_from_a_separate_mapping_take_the_place_of_config_agents():
    agents = AgentRegistry(Config(), {"sql": AgentConfig(mode="subagent", prompt="SQL")}, data_dir=DATA)
    assert agents.get("sql").mode == "subagent"


def test_a_display_name_shows_in_listings_beside_the_key_that_selects_the_agent(tmp_path):
    from opencode_nb.config.schema import Config

    config = Config.model_validate({"agent": {"review": {"mode": "subagent", "name": "Reviewer",
                                                          "description": "Reviews diffs"}}})
    agents = AgentRegistry(config, config.agent, data_dir=tmp_path, tmp_dir=tmp_path)
    assert agents.get("review").listed_as == "Reviewer (review)"
    assert agents.get("build").listed_as == "build"


def test_live_python_asks_for_build_and_general_while_the_sandbox_is_free(agents):
    for name in ("build", "general"):
        agent = agents.get(name)
        assert (decide(agent, "python", "live"), decide(agent, "python", "sandbox")) == ("ask", "allow"), name
    plan = agents.get("plan")
    assert (decide(plan, "python", "live"), decide(plan, "python", "sandbox")) == ("deny", "allow")


def test_no_built_in_agent_names_a_tool_that_does_not_exist(agents):
    from opencode_nb.tool.registry import default_registry

    tools = set(default_registry().ids())
    # Permissions that guard what tools do rather than naming a tool: paths outside the project, a repeated
    # call, writes into `.git/` and into the files that steer agents, and network from a sandboxed command.
    permissions = {"external_directory", "doom_loop", "git_internals", "agent_config", "network", "*"}
    for agent in agents.list(include_hidden=True):
        named = {rule.permission for rule in agent.permission} - permissions
        assert named <= tools, (agent.name, named - tools)


def test_no_configuration_lets_data_explorer_run_code_in_the_persons_namespace(tmp_path):
    from opencode_nb.config.schema import Config

    config = Config.model_validate({"permission": {"python": "allow"},
                                    "agent": {"data-explorer": {"permission": {"python": {"*": "allow"}}}}})
    data = AgentRegistry(config, config.agent, data_dir=tmp_path, tmp_dir=tmp_path).get("data-explorer")
    assert decide(data, "python", "live") == "deny" and decide(data, "python", "sandbox") == "allow"


def test_no_configuration_lets_data_explorer_change_or_run_the_persons_cells(tmp_path):
    from opencode_nb.config.schema import Config

    allow = {"notebook_edit": "allow", "notebook_run": {"*": "allow"}}
    config = Config.model_validate({"permission": allow, "agent": {"data-explorer": {"permission": allow}}})
    data = AgentRegistry(config, config.agent, data_dir=tmp_path, tmp_dir=tmp_path).get("data-explorer")
    assert decide(data, "notebook_edit", "insert") == decide(data, "notebook_run", "abc") == "deny"
    assert disabled(["notebook_read", "notebook_edit", "notebook_run"], data.permission) == {"notebook_edit",
                                                                                             "notebook_run"}


def test_cells_are_read_freely_but_changed_or_run_only_after_asking_and_never_while_planning(agents):
    for name in ("build", "general"):
        agent = agents.get(name)
        assert [decide(agent, p, "x") for p in ("notebook_read", "notebook_edit", "notebook_run")] == [
            "allow", "ask", "ask"], name
    plan = agents.get("plan")
    assert [decide(plan, p, "x") for p in ("notebook_read", "notebook_edit", "notebook_run")] == [
        "allow", "deny", "deny"]
    assert disabled(["notebook_edit", "notebook_run"], plan.permission) == {"notebook_edit", "notebook_run"}
