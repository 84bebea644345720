"""Explaining a ruleset per permission agrees with how the engine decides, call by call."""

from __future__ import annotations

from opencode_nb.permission import Ruleset, evaluate, from_config, wildcard_match
from opencode_nb.permission.explain import decisions, overridden_by
from opencode_nb.permission.service import deciding_rules

RULES = from_config({
    "*": "allow",
    "question": "deny",
    "bash": {"*": "ask", "git *": "allow", "git push *": "deny", "ls *": "allow"},
    "network": "deny",
    "python": {"live": "ask", "sandbox": "allow"},
}) + from_config({"question": "allow", "bash": {"ls *": "ask"}, "*": {"*": "allow"}})


def test_a_later_rule_for_the_same_permission_and_every_pattern_decides_it_and_overrides_the_earlier_one():
    rules = from_config({"*": "allow", "question": "deny", "edit": "ask"}) + from_config({"question": "allow"})
    by_name = {d.permission: d for d in decisions(rules)}
    assert (by_name["question"].action, by_name["question"].index) == ("allow", 3)
    assert overridden_by(rules) == [None, 3, None, None]


def test_a_catch_all_for_every_permission_overrides_earlier_rules_except_those_only_named_rules_reach():
    overridden = overridden_by(RULES)
    network = next(i for i, r in enumerate(RULES) if r.permission == "network")
    git = next(i for i, r in enumerate(RULES) if r.pattern == "git *")
    assert overridden[network] is None, "a `*` rule never reaches network"
    assert overridden[git] == len(RULES) - 1
    assert {d.permission: d for d in decisions(RULES)}["network"].named_only


def test_the_exceptions_listed_are_those_after_the_catch_all_and_a_repeated_pattern_only_once():
    python = {d.permission: d for d in decisions(RULES)}["python"]
    assert python.action == "allow" and [(o.pattern, o.action) for o in python.exceptions] == []
    only_bash = from_config({"bash": {"*": "ask", "ls *": "allow", "git *": "allow"}}) + from_config(
        {"bash": {"ls *": "ask"}})
    [bash] = decisions(only_bash)
    assert bash.action == "ask"
    assert [(o.pattern, o.action) for o in bash.exceptions] == [("git *", "allow"), ("ls *", "ask")]


def test_nothing_covering_every_call_means_ask():
    [python] = decisions(from_config({"python": {"live": "deny"}}))
    assert python.action == "ask" and python.index is None


def test_every_explained_decision_is_the_one_the_engine_makes():
    rulesets = [RULES, from_config({"*": "ask", "bash": {"*": "deny", "ls *": "allow", "ls -R *": "ask"},
                                    "read": {"*.env": "ask"}, "agent_config": "allow"})]
    for rules in rulesets:
        patterns = {r.pattern for r in rules} | {"ls -la", "git push origin", "rm -rf x", "a.env", "zz"}
        for decision in decisions(rules):
            name = "some_other_permission" if decision.permission == "*" else decision.permission
            engine_rules = deciding_rules(name, Ruleset(rules))
            for pattern in patterns:
                matching = [o for o in decision.exceptions if wildcard_match(pattern, o.pattern)]
                explained = matching[-1].action if matching else decision.action
                assert evaluate(name, pattern, engine_rules).action == explained, (name, pattern)
