"""A new ruleset loosens unless every step from the old one can only make decisions stricter."""

from __future__ import annotations

from opencode_nb.config.ruleset_change import loosened_rules
from opencode_nb.permission import Rule, evaluate, from_config


def rules(mapping: dict) -> list[Rule]:
    return list(from_config(mapping))


def changes(old: dict, new: dict) -> list[str]:
    return [c.describe() for c in loosened_rules(rules(old), rules(new))]


def test_the_same_rules_loosen_nothing():
    same = {"*": "allow", "bash": {"*": "ask", "git *": "allow"}}
    assert changes(same, same) == []


def test_an_action_made_looser_is_reported_and_one_made_stricter_is_not():
    assert changes({"bash": "ask"}, {"bash": "allow"}) == ["bash '*': ask → allow"]
    assert changes({"bash": "allow"}, {"bash": "deny"}) == []


def test_an_allow_added_anywhere_loosens():
    assert changes({"bash": "ask"}, {"bash": {"*": "ask", "rm *": "allow"}}) == ["bash 'rm *': allow added"]
    assert changes({"bash": "ask"}, {"*": "allow", "bash": "ask"}) == ["* '*': allow added"]


def test_a_deny_added_anywhere_and_an_allow_removed_only_tighten():
    assert changes({"bash": "allow"}, {"bash": {"*": "allow", "rm *": "deny"}}) == []
    assert changes({"bash": {"*": "ask", "ls *": "allow"}}, {"bash": {"*": "ask"}}) == []


def test_a_deny_removed_loosens():
    assert changes({"bash": {"*": "allow", "rm *": "deny"}}, {"bash": "allow"}) == ["bash 'rm *': deny rule removed"]


def test_an_ask_added_after_a_deny_it_may_shadow_loosens_and_one_after_no_deny_does_not():
    assert changes({"bash": {"rm *": "deny"}}, {"bash": {"rm *": "deny", "rm -i *": "ask"}}) == \
        ["bash 'rm -i *': ask added"]
    assert changes({"edit": "deny", "bash": "allow"}, {"edit": "deny", "bash": {"*": "allow", "rm *": "ask"}}) == []


def test_an_ask_removed_loosens_when_an_earlier_allow_may_take_its_calls():
    assert changes({"bash": {"*": "allow", "rm *": "ask"}}, {"bash": {"*": "allow"}}) == \
        ["bash 'rm *': ask rule removed"]
    assert changes({"bash": {"*": "deny", "rm *": "ask"}}, {"bash": {"*": "deny"}}) == []


def test_moving_an_allow_after_a_deny_loosens():
    old = {"bash": {"rm *": "allow", "*": "deny"}}
    new = {"bash": {"*": "deny", "rm *": "allow"}}
    assert evaluate("bash", "rm x", rules(old)).action == "deny"
    assert evaluate("bash", "rm x", rules(new)).action == "allow"
    assert changes(old, new)


def test_whenever_nothing_is_reported_no_decision_became_looser():
    """Sound by construction: checked over many small rulesets against the engine's own evaluation."""
    import random

    rng = random.Random(19)
    names, patterns, actions = ["bash", "*", "edit"], ["*", "rm *", "rm x", "ls"], ["allow", "ask", "deny"]
    queries = [(n, p) for n in ("bash", "edit") for p in ("rm x", "rm y", "ls", "cat")]
    strict = {"allow": 0, "ask": 1, "deny": 2}
    for _ in range(3000):
        old, new = ([Rule(permission=rng.choice(names), pattern=rng.choice(patterns), action=rng.choice(actions))
                     for _ in range(rng.randint(0, 4))] for _ in range(2))
        if rng.random() < 0.5:  # often the new one is an edit of the old one
            new = [*old[:2], *new[:2], *old[2:]]
        if loosened_rules(old, new):
            continue
        for permission, pattern in queries:
            before, after = evaluate(permission, pattern, old).action, evaluate(permission, pattern, new).action
            assert strict[after] >= strict[before], (old, new, permission, pattern)
