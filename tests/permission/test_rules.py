import os

import pytest

from opencode_nb.errors import ConfigError
from opencode_nb.permission import Rule, Ruleset, disabled, evaluate, from_config, merge


def test_the_last_matching_rule_wins():
    rules = from_config({"bash": {"*": "ask", "git *": "allow", "git push *": "deny"}})
    assert evaluate("bash", "git push origin main", rules).action == "deny"
    assert evaluate("bash", "git status", rules).action == "allow"
    assert evaluate("bash", "rm x", rules).action == "ask"


def test_a_later_star_overrides_an_earlier_specific_rule():
    rules = from_config({"bash": {"git *": "allow", "*": "deny"}})
    assert evaluate("bash", "git status", rules).action == "deny"


def test_nothing_matching_means_ask():
    decided = evaluate("edit", "notebooks/a.ipynb")
    assert decided == Rule(permission="edit", pattern="*", action="ask")


def test_rulesets_are_read_in_order_so_later_ones_override():
    defaults = from_config({"*": "allow"})
    agent = from_config({"edit": "deny"})
    user = from_config({"edit": {"docs/*": "allow"}})
    assert evaluate("edit", "docs/a.md", defaults, agent, user).action == "allow"
    assert evaluate("edit", "src/a.py", defaults, agent, user).action == "deny"
    assert evaluate("read", "src/a.py", defaults, agent, user).action == "allow"


def test_rule_permissions_are_wildcards_too():
    rules = from_config({"*": "deny", "mcp_*": "allow"})
    assert evaluate("mcp_search", "*", rules).action == "allow"
    assert evaluate("bash", "ls", rules).action == "deny"


def test_a_plain_list_and_a_ruleset_decide_alike():
    rules = [Rule(permission="bash", pattern="*", action="ask"), Rule(permission="bash", pattern="ls *",
                                                                       action="allow")]
    assert evaluate("bash", "ls -l", rules).action == evaluate("bash", "ls -l", Ruleset(rules)).action == "allow"


def test_changing_a_ruleset_drops_its_cached_view():
    rules = from_config({"bash": "allow"})
    assert evaluate("bash", "rm x", rules).action == "allow"
    rules.append(Rule(permission="bash", pattern="rm *", action="deny"))
    assert evaluate("bash", "rm x", rules).action == "deny"


def test_from_config_keeps_the_written_order():
    rules = from_config({"edit": "deny", "bash": {"ls *": "allow", "rm *": "ask"}})
    assert [(r.permission, r.pattern, r.action) for r in rules] == [
        ("edit", "*", "deny"), ("bash", "ls *", "allow"), ("bash", "rm *", "ask")]


def test_a_bare_action_stands_for_everything():
    assert from_config("deny") == [Rule(permission="*", pattern="*", action="deny")]
    assert from_config(None) == []


def test_home_is_expanded_in_patterns():
    home = os.path.expanduser("~")
    rules = from_config({"external_directory": {"~/data/*": "allow", "$HOME/x": "deny", "~": "ask",
                                                "~user/y": "ask", "a/~/b": "ask"}})
    assert [r.pattern for r in rules] == [f"{home}/data/*", f"{home}/x", home, "~user/y", "a/~/b"]


def test_an_invalid_action_names_the_key_path_and_the_allowed_values():
    with pytest.raises(ConfigError) as err:
        from_config({"bash": {"rm *": "maybe"}}, source="opencode.yaml", key_prefix="agent.reviewer.permission")
    assert str(err.value) == (
        "opencode.yaml agent.reviewer.permission.bash.\"rm *\": 'maybe' is not one of allow, ask, deny")


def test_merge_is_concatenation():
    a, b = from_config({"edit": "deny"}), from_config({"edit": "allow"})
    assert merge(a, b) == [*a, *b]
    assert evaluate("edit", "x", merge(a, b)).action == "allow"


def test_a_tool_is_disabled_only_when_its_last_rule_denies_everything():
    rules = from_config({"bash": {"*": "deny", "echo *": "allow"}, "webfetch": "deny", "grep": "ask"})
    assert disabled(["bash", "webfetch", "grep", "read"], rules) == {"webfetch"}


def test_every_file_changing_tool_follows_the_edit_permission():
    rules = from_config({"*": "allow", "edit": "deny"})
    assert disabled(["edit", "write", "patch", "multiedit", "read"], rules) == {"edit", "write", "patch",
                                                                                 "multiedit"}


def test_a_later_allow_pattern_rule_does_not_disable_but_a_later_star_deny_does():
    assert disabled(["edit"], from_config({"edit": {"*": "deny", "plans/*": "allow"}})) == set()
    assert disabled(["edit"], from_config({"edit": {"plans/*": "allow", "*": "deny"}})) == {"edit"}
