import pytest

from opencode_nb.config import AgentConfig, ConfigError, ConfigWarning
from opencode_nb.config.layer import Layer
from opencode_nb.config.merge import merge, plain, substitute


def merged(*layers: Layer) -> tuple[dict, dict]:
    into: dict = {}
    origins: dict = {}
    for layer in layers:
        merge(into, layer, origins)
    return into, origins


def layer(source: str, data: dict, **lines: int) -> Layer:
    return Layer(data=data, source=source, lines={tuple(k.split("__")): v for k, v in lines.items()})


def test_mappings_merge_key_by_key_and_lists_and_scalars_are_replaced():
    data, _ = merged(
        layer("a", {"agent": {"x": {"steps": 1, "prompt": "p"}}, "instructions": ["a", "b"], "model": "m/1"}),
        layer("b", {"agent": {"x": {"steps": 2}, "y": {}}, "instructions": ["c"]}),
    )
    assert data == {"agent": {"x": {"steps": 2, "prompt": "p"}, "y": {}}, "instructions": ["c"], "model": "m/1"}


def test_merging_does_not_share_structure_with_the_layers():
    first = layer("a", {"instructions": ["a"], "agent": {"x": {"options": {"k": 1}}}})
    data, _ = merged(first)
    data["instructions"].append("b")
    data["agent"]["x"]["options"]["k"] = 2
    assert first.data == {"instructions": ["a"], "agent": {"x": {"options": {"k": 1}}}}


def test_every_leaf_remembers_the_source_and_line_it_was_last_written_at():
    _, origins = merged(
        layer("a", {"agent": {"x": {"steps": 1, "prompt": "p"}}}, agent__x__steps=3, agent__x__prompt=4),
        layer("b", {"agent": {"x": {"steps": 2}}}, agent__x=7, agent__x__steps=8),
    )
    assert origins[("agent", "x", "steps")] == ("b", 8)
    assert origins[("agent", "x", "prompt")] == ("a", 4)
    assert origins[("agent", "x")] == ("b", 7)


def test_a_replaced_subtree_forgets_the_origins_of_what_it_replaced():
    _, origins = merged(layer("a", {"instructions": ["x", "y"]}), layer("b", {"instructions": ["z"]}))
    assert origins[("instructions", "0")][0] == "b"
    assert ("instructions", "1") not in origins


def test_a_permission_key_set_again_moves_to_the_end_so_it_wins():
    data, _ = merged(
        layer("global", {"permission": {"bash": {"*": "ask", "git *": "allow"}, "edit": "ask"}}),
        layer("project", {"permission": {"bash": {"*": "deny"}}}),
    )
    assert list(data["permission"]) == ["edit", "bash"]
    assert list(data["permission"]["bash"].items()) == [("git *", "allow"), ("*", "deny")]


def test_agent_permissions_keep_order_too_but_other_mappings_keep_their_first_place():
    data, _ = merged(
        layer("a", {"agent": {"x": {"permission": {"read": "allow", "edit": "deny"}}, "y": {}}}),
        layer("b", {"agent": {"x": {"permission": {"read": "ask"}}}}),
    )
    assert list(data["agent"]) == ["x", "y"]
    assert list(data["agent"]["x"]["permission"].items()) == [("edit", "deny"), ("read", "ask")]


def test_a_bare_action_merged_with_patterns_stands_for_star_and_keeps_its_place():
    data, origins = merged(
        layer("a", {"permission": {"bash": "ask"}}, permission__bash=2),
        layer("b", {"permission": {"bash": {"git *": "allow"}}}),
    )
    assert data["permission"]["bash"] == {"*": "ask", "git *": "allow"}
    assert origins[("permission", "bash", "*")] == ("a", 2)
    data, _ = merged(layer("a", {"permission": "deny"}), layer("b", {"permission": {"read": "allow"}}))
    assert data["permission"] == {"*": "deny", "read": "allow"}


def test_a_bare_action_after_patterns_replaces_them():
    data, _ = merged(layer("a", {"permission": {"bash": {"git *": "allow"}}}),
                     layer("b", {"permission": {"bash": "deny"}}))
    assert data["permission"] == {"bash": "deny"}


def test_permission_order_survives_a_real_load(project):
    project.write("xdg/opencode_nb/opencode.yaml", 'permission:\n  bash:\n    "*": ask\n    "git *": allow\n'
                  "  edit: ask\n")
    project.write("repo/opencode.yaml", 'permission:\n  bash:\n    "*": deny\n    "git status": allow\n')
    permission = project.load().config.permission
    assert list(permission) == ["edit", "bash"]
    assert list(permission["bash"].items()) == [("git *", "allow"), ("*", "deny"), ("git status", "allow")]


def test_env_values_are_substituted_and_a_variable_holding_braces_stays_literal():
    notes: list[str] = []
    one = layer("a", {"provider": {"p": {"api_key": "{env:KEY}", "base_url": "http://{env:HOST}/v1"}}})
    substitute(one, {"KEY": "{file:/etc/passwd}", "HOST": "h"}, notes)
    assert one.data == {"provider": {"p": {"api_key": "{file:/etc/passwd}", "base_url": "http://h/v1"}}}
    assert notes == []


def test_an_unset_variable_is_empty_with_a_note_naming_file_line_and_key():
    notes: list[str] = []
    one = layer("f.yaml", {"provider": {"p": {"api_key": "{env:NOPE}"}}}, provider__p__api_key=3)
    substitute(one, {}, notes)
    assert one.data["provider"]["p"]["api_key"] == ""
    assert notes == ["f.yaml:3 provider.p.api_key: environment variable NOPE is not set (substituted as empty)"]


def test_keys_and_non_strings_are_not_substituted():
    one = layer("a", {"permission": {"bash": {"{env:X}": "allow"}}, "n": 3})
    substitute(one, {"X": "y"}, [])
    assert one.data == {"permission": {"bash": {"{env:X}": "allow"}}, "n": 3}


def test_file_substitution_reads_relative_to_the_config_file_and_expands_home(project):
    project.write("repo/prompts/r.txt", "  Review carefully.\n")
    project.write("home/key.txt", "sk-home\n")
    project.write("repo/opencode.yaml", "provider:\n  anthropic:\n    api_key: '{file:~/key.txt}'\n"
                  "agent:\n  r:\n    prompt: 'Start. {file:prompts/r.txt}'\n")
    loaded = project.load()
    assert loaded.config.provider["anthropic"].api_key == "sk-home"
    assert loaded.agents["r"].prompt == "Start. Review carefully."


def test_env_substitution_reads_the_given_environment(project):
    project.write("repo/opencode.yaml", "provider:\n  anthropic:\n    api_key: '{env:MY_KEY}'\n")
    assert project.load(MY_KEY="sk-123").config.provider["anthropic"].api_key == "sk-123"


def test_an_unset_variable_warns_during_a_load(project):
    path = project.write("repo/opencode.yaml", "provider:\n  openai:\n    api_key: '{env:NOPE_KEY}'\n")
    with pytest.warns(ConfigWarning, match=rf"^{path}:3 provider.openai.api_key: environment variable NOPE_KEY"):
        loaded = project.load()
    assert loaded.config.provider["openai"].api_key == ""


def test_a_missing_substituted_file_is_an_error_naming_file_line_and_key(project):
    path = project.write("repo/opencode.yaml", "agent:\n  r:\n    prompt: '{file:missing.txt}'\n")
    with pytest.raises(ConfigError) as err:
        project.load()
    assert str(err.value).startswith(f"{path}:3 agent.r.prompt: {{file:missing.txt}} cannot be read "
                                     f"(No such file or directory): {project.repo / 'missing.txt'}")


def test_plain_turns_models_paths_and_tuples_into_data(tmp_path):
    assert plain({"agent": {"x": AgentConfig(steps=2)}, "instructions": (tmp_path,), 1: "a"}) == {
        "agent": {"x": {"steps": 2}}, "instructions": [str(tmp_path)], "1": "a"}
