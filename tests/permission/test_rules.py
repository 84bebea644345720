import copy
import os
import pickle
import random

import pytest

from opencode_nb.errors import ConfigError
from opencode_nb.permission import Rule, Ruleset, disabled, evaluate, from_config, merge, wildcard_match

ASK = "ask"


def naive(permission, pattern, *rulesets):
    """The definition, read literally: the last rule matching on both counts, else ask."""
    rules = [r for ruleset in rulesets for r in ruleset]
    return next((r for r in reversed(rules) if wildcard_match(permission, r.permission)
                 and wildcard_match(pattern, r.pattern)), Rule(permission=permission, pattern="*", action=ASK))


# ---------------------------------------------------------------------------------------------- evaluate

def test_the_last_matching_rule_wins():
    rules = from_config({"bash": {"*": "ask", "git *": "allow", "git push *": "deny"}})
    assert evaluate("bash", "git push origin main", rules).action == "deny"
    assert evaluate("bash", "git status", rules).action == "allow"
    assert evaluate("bash", "rm x", rules).action == "ask"


def test_a_later_star_overrides_an_earlier_specific_rule():
    rules = from_config({"bash": {"git *": "allow", "*": "deny"}})
    assert evaluate("bash", "git status", rules).action == "deny"
    assert evaluate("bash", "git status", list(rules)).action == "deny"


def test_rules_after_the_last_star_still_decide_what_they_match():
    rules = merge(from_config({"bash": {"git *": "deny", "*": "ask"}}),
                  from_config({"bash": {"git *": "allow", "git push *": "deny", "git push --dry-run *": "allow"}}))
    assert evaluate("bash", "git push --dry-run origin", rules).action == "allow"
    assert evaluate("bash", "git push origin", rules).action == "deny"
    assert evaluate("bash", "git log", rules).action == "allow"
    assert evaluate("bash", "make", rules) == Rule(permission="bash", pattern="*", action="ask")


def test_nothing_matching_means_ask_for_that_permission():
    assert evaluate("edit", "notebooks/a.ipynb") == Rule(permission="edit", pattern="*", action="ask")
    rules = from_config({"bash": {"ls *": "allow"}, "read": "deny"})
    assert evaluate("bash", "rm x", rules) == Rule(permission="bash", pattern="*", action="ask")


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


def test_the_pattern_asked_about_has_its_backslashes_read_as_slashes():
    rules = from_config({"edit": {"*": "deny", "src/*": "allow"}})
    assert evaluate("edit", "src\\pkg\\a.py", rules).action == "allow"
    assert evaluate("edit", "src\\pkg\\a.py", list(rules)).action == "allow"


def test_a_plain_list_and_a_ruleset_decide_alike():
    rules = [Rule(permission="bash", pattern="*", action="ask"), Rule(permission="bash", pattern="ls *",
                                                                       action="allow")]
    assert evaluate("bash", "ls -l", rules).action == evaluate("bash", "ls -l", Ruleset(rules)).action == "allow"


def test_changing_a_ruleset_drops_what_it_remembered():
    rules = from_config({"bash": "allow"})
    assert evaluate("bash", "rm x", rules).action == "allow"
    rules.append(Rule(permission="bash", pattern="rm *", action="deny"))
    assert evaluate("bash", "rm x", rules).action == "deny"
    del rules[-1]
    assert evaluate("bash", "rm x", rules).action == "allow"
    rules += [Rule(permission="*", pattern="rm *", action="ask")]
    assert evaluate("bash", "rm x", rules).action == "ask"


def test_a_copied_or_pickled_ruleset_is_a_ruleset_that_decides_alike():
    rules = from_config({"bash": {"*": "ask", "ls *": "allow"}})
    evaluate("bash", "ls", rules)
    for clone in (copy.copy(rules), copy.deepcopy(rules), pickle.loads(pickle.dumps(rules))):
        assert isinstance(clone, Ruleset) and clone == rules
        assert evaluate("bash", "ls -l", clone).action == "allow"
        clone.append(Rule(permission="bash", pattern="ls *", action="deny"))
        assert evaluate("bash", "ls -l", clone).action == "deny"
    assert evaluate("bash", "ls -l", rules).action == "allow"


def test_evaluate_agrees_with_the_definition_on_a_large_random_ruleset():
    rnd = random.Random(11)
    permissions = ["bash", "edit", "read", "*", "mcp_*", "e?it"]
    patterns = ["*", "git *", "git push *", "ls *", "ls*", "src/*", "src/?.py", "*.env", "rm -rf *", "a.(b)+[c]",
                "~/x/*", "git * *", "*test*"]
    rules = [Rule(permission=rnd.choice(permissions), pattern=rnd.choice(patterns),
                  action=rnd.choice(["allow", "ask", "deny"])) for _ in range(300)]
    split = [Ruleset(rules[:120]), rules[120:250], Ruleset(rules[250:])]
    texts = ["git push origin", "git", "git status", "ls", "lstmeval", "src/a.py", "src\\b\\c.py", "x.env",
             "rm -rf /", "a.(b)+[c]", "abbc", "pytest -k x", "", "line\nbreak"]
    for permission in ["bash", "edit", "read", "mcp_x", "eXit", "question"]:
        for text in texts:
            expected = naive(permission, text, rules)
            assert evaluate(permission, text, Ruleset(rules)) == expected
            assert evaluate(permission, text, rules) == expected
            assert evaluate(permission, text, *split) == expected


# ---------------------------------------------------------------------------------------------- from_config

def test_from_config_keeps_the_written_order():
    rules = from_config({"edit": "deny", "bash": {"ls *": "allow", "rm *": "ask"}, "read": "allow"})
    assert [(r.permission, r.pattern, r.action) for r in rules] == [
        ("edit", "*", "deny"), ("bash", "ls *", "allow"), ("bash", "rm *", "ask"), ("read", "*", "allow")]


def test_a_bare_action_stands_for_everything_and_none_for_nothing():
    assert from_config("deny") == [Rule(permission="*", pattern="*", action="deny")]
    assert from_config(None) == []
    assert from_config({}) == []


def test_home_is_expanded_in_patterns_and_nowhere_else():
    home = os.path.expanduser("~")
    rules = from_config({"external_directory": {"~/data/*": "allow", "$HOME/x": "deny", "~": "ask",
                                                "~user/y": "ask", "a/~/b": "ask", "$HOME": "ask"},
                         "~": "deny"})
    assert [r.pattern for r in rules] == [f"{home}/data/*", f"{home}/x", home, "~user/y", "a/~/b", home, "*"]
    assert rules[-1].permission == "~"


def test_an_invalid_action_names_the_key_path_and_the_allowed_values():
    with pytest.raises(ConfigError) as err:
        from_config({"bash": {"rm *": "maybe"}})
    assert err.value.key == 'permission.bash."rm *"'
    assert err.value.hint == "'maybe' is not one of allow, ask, deny"


def test_the_file_and_key_prefix_given_show_in_the_error():
    with pytest.raises(ConfigError) as err:
        from_config({"bash": {"rm *": "maybe"}}, source="opencode.yaml", key_prefix="agent.reviewer.permission")
    assert str(err.value) == (
        "opencode.yaml agent.reviewer.permission.bash.\"rm *\": 'maybe' is not one of allow, ask, deny")


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"edit": "yes"}, "permission.edit"),
        ({"edit": True}, "permission.edit"),
        ({"bash": {"ls *": None}}, 'permission.bash."ls *"'),
        ("sometimes", "permission"),
        (["allow"], "permission"),
    ],
)
def test_every_bad_shape_is_a_config_error_at_its_key(config, key):
    with pytest.raises(ConfigError) as err:
        from_config(config)
    assert err.value.key == key
    assert "allow, ask, deny" in err.value.hint


def test_merge_is_concatenation_in_order():
    a, b = from_config({"edit": "deny"}), from_config({"edit": "allow"})
    merged = merge(a, b, [])
    assert merged == [*a, *b]
    assert evaluate("edit", "x", merged).action == "allow"
    assert evaluate("edit", "x", merge(b, a)).action == "deny"
    assert len(a) == 1 and len(b) == 1


# ---------------------------------------------------------------------------------------------- disabled

def test_a_tool_is_disabled_only_when_its_last_rule_denies_everything():
    rules = from_config({"bash": {"*": "deny", "echo *": "allow"}, "webfetch": "deny", "grep": "ask"})
    assert disabled(["bash", "webfetch", "grep", "read"], rules) == {"webfetch"}


def test_every_file_changing_tool_follows_the_edit_permission():
    rules = from_config({"*": "allow", "edit": "deny"})
    assert disabled(["edit", "write", "patch", "multiedit", "read"], rules) == {"edit", "write", "patch",
                                                                                 "multiedit"}
    assert disabled(["write"], from_config({"write": "deny"})) == set()


def test_the_pattern_is_ignored_when_picking_the_last_rule():
    assert disabled(["edit"], from_config({"edit": {"*": "deny", "plans/*": "allow"}})) == set()
    assert disabled(["edit"], from_config({"edit": {"plans/*": "allow", "*": "deny"}})) == {"edit"}
    assert disabled(["bash"], from_config({"bash": {"rm *": "deny"}})) == set()


def test_wildcard_permissions_disable_and_later_rules_re_enable():
    rules = from_config({"*": "deny", "read": "allow", "mcp_*": {"*": "deny"}})
    assert disabled(["read", "bash", "mcp_search", "edit"], rules) == {"bash", "mcp_search", "edit"}
    assert disabled(["bash"], []) == set()
