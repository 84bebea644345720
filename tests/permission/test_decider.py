"""Large rulesets decide exactly as small ones: the last matching rule wins, whatever indexes them.

Past a few hundred rules a permission's rules are bucketed by literal prefix and compiled in chunks; these
pin that the bucketing changes nothing a person could observe, against the definition read literally.
"""

import random

import pytest

from opencode_nb.permission import Rule, Ruleset, disabled, evaluate, from_config, merge, wildcard_match
from opencode_nb.permission.decider import CHUNK, ONE_ALTERNATION, literal_prefix

MANY = 3 * max(ONE_ALTERNATION, CHUNK)
"""Enough rules of one permission to be bucketed, and for one bucket to span several chunks."""


def naive(permission, pattern, *rulesets):
    rules = [r for ruleset in rulesets for r in ruleset]
    return next((r for r in reversed(rules) if wildcard_match(permission, r.permission)
                 and wildcard_match(pattern, r.pattern)), Rule(permission=permission, pattern="*", action="ask"))


def filler(n, permission="bash", action="deny"):
    return [Rule(permission=permission, pattern=f"cmd{i} *", action=action) for i in range(n)]


@pytest.mark.parametrize(("pattern", "prefix"), [
    ("git push *", "git push"), ("ls *", "ls"), ("ls*", "ls"), ("?s", ""), ("*", ""), ("src/?.py", "src/"),
    ("C:\\work\\*", "C:/work/"), ("exact", "exact"), ("a *b", "a "), (" *", ""),
])
def test_a_patterns_literal_prefix_is_what_every_match_starts_with(pattern, prefix):
    assert literal_prefix(pattern) == prefix


def test_the_last_matching_rule_wins_across_buckets():
    rules = from_config({"bash": {"git *": "allow", **{f"cmd{i} *": "ask" for i in range(MANY)},
                                  "git push *": "deny", "g*": "ask", "git push --dry-run *": "allow"}})
    assert evaluate("bash", "git push --dry-run origin", rules).action == "allow"
    assert evaluate("bash", "git push origin", rules).action == "ask"   # `g*` came after `git push *`
    assert evaluate("bash", "git status", rules).action == "ask"
    assert evaluate("bash", "cmd7 x", rules).action == "ask"
    assert evaluate("bash", "make", rules) == Rule(permission="bash", pattern="*", action="ask")


def test_an_older_rule_in_a_longer_prefix_loses_to_a_newer_rule_in_a_shorter_one():
    rules = Ruleset([Rule(permission="bash", pattern="rm -rf *", action="allow"), *filler(MANY),
                     Rule(permission="bash", pattern="rm *", action="deny")])
    assert evaluate("bash", "rm -rf build", rules).action == "deny"
    rules.append(Rule(permission="bash", pattern="rm -rf build", action="allow"))
    assert evaluate("bash", "rm -rf build", rules).action == "allow"


def test_within_one_crowded_bucket_the_newest_match_wins_across_chunks():
    old = [Rule(permission="bash", pattern=f"git *:{i}", action="ask") for i in range(MANY)]
    new = [Rule(permission="bash", pattern=f"git *:{i}", action="allow") for i in range(CHUNK + 5)]
    assert {literal_prefix(r.pattern) for r in old + new} == {"git "}
    rules = Ruleset([Rule(permission="bash", pattern="git *", action="deny"), *old,
                     Rule(permission="bash", pattern="git *:1*", action="deny"), *new])
    assert evaluate("bash", "git a:5", rules) is new[5]
    assert evaluate("bash", "git a:260", rules) is new[260]
    assert evaluate("bash", "git a:700", rules) is old[700]
    assert evaluate("bash", "git a:1000", rules).pattern == "git *:1*"
    assert evaluate("bash", "git a:b", rules).pattern == "git *"


def test_a_catch_all_overrides_every_rule_before_it_and_none_after():
    rules = Ruleset([*filler(MANY), Rule(permission="bash", pattern="*", action="allow"),
                     *filler(MANY, action="ask")])
    assert evaluate("bash", "cmd3 x", rules).action == "ask"
    assert evaluate("bash", "echo ok", rules).action == "allow"
    rules.append(Rule(permission="bash", pattern="*", action="deny"))
    assert evaluate("bash", "cmd3 x", rules).action == "deny"


def test_rules_for_every_permission_and_for_a_family_of_them_still_decide():
    rules = Ruleset([*filler(MANY, permission="mcp_*"), Rule(permission="*", pattern="cmd5 *", action="allow"),
                     *filler(MANY, permission="bash", action="ask"),
                     Rule(permission="mcp_*", pattern="cmd6 *", action="allow")])
    assert evaluate("mcp_search", "cmd5 x", rules).action == "allow"
    assert evaluate("mcp_search", "cmd6", rules).action == "allow"
    assert evaluate("mcp_search", "cmd7 y", rules).action == "deny"
    assert evaluate("bash", "cmd5 x", rules).action == "ask"
    assert evaluate("read", "cmd5 x", rules).action == "allow"
    assert evaluate("read", "cmd7 x", rules).action == "ask"


def test_backslashes_fold_to_slashes_on_both_sides_in_a_bucketed_ruleset():
    rules = Ruleset([*filler(MANY, permission="edit"),
                     Rule(permission="edit", pattern="C:\\work\\*", action="allow"),
                     Rule(permission="edit", pattern="C:/work/secret/*", action="deny")])
    assert evaluate("edit", "C:\\work\\a.py", rules).action == "allow"
    assert evaluate("edit", "C:/work/a.py", rules).action == "allow"
    assert evaluate("edit", "C:\\work\\secret\\k.pem", rules).action == "deny"


def test_a_large_random_ruleset_agrees_with_the_definition_whole_split_and_merged():
    rnd = random.Random(19)
    permissions = ["bash", "edit", "*", "mcp_*", "e?it"]
    stems = ["git", "git push", "ls", "src/", "C:\\w\\", "rm -rf", "cmd1", "cmd12", ""]
    tails = [" *", "*", "", "?", " * x", "/*.py", "*test*"]
    rules = [Rule(permission=rnd.choice(permissions), pattern=rnd.choice(stems) + rnd.choice(tails),
                  action=rnd.choice(["allow", "ask", "deny"])) for _ in range(4 * MANY)]
    rules += [Rule(permission="bash", pattern=f"cmd{i} *", action="allow") for i in range(MANY)]
    rnd.shuffle(rules)
    parts = [Ruleset(rules[:MANY]), Ruleset(rules[MANY:3 * MANY]), Ruleset(rules[3 * MANY:])]
    merged = merge(*parts)
    texts = ["git push origin", "git", "git status", "ls", "lstest", "src/a.py", "src\\b\\c.py", "C:/w/x.py",
             "rm -rf /", "cmd1", "cmd12 x", "cmd123 x", "cmd1test", "", "line\nbreak", "pytest x"]
    for permission in ["bash", "edit", "mcp_x", "eXit", "question"]:
        for text in texts:
            expected = naive(permission, text, rules)
            assert evaluate(permission, text, Ruleset(rules)) == expected, (permission, text)
            assert evaluate(permission, text, merged) == expected, (permission, text)
            assert evaluate(permission, text, *parts) == expected, (permission, text)


def test_a_merge_keeps_what_it_held_when_a_part_changes_afterwards():
    big = Ruleset(filler(MANY))
    small = from_config({"bash": {"echo *": "allow"}})
    merged = merge(big, small)
    assert evaluate("bash", "cmd1 x", merged).action == "deny"
    big.append(Rule(permission="bash", pattern="cmd1 *", action="allow"))
    small.append(Rule(permission="bash", pattern="echo *", action="deny"))
    assert evaluate("bash", "cmd1 x", merged).action == "deny"
    assert evaluate("bash", "echo hi", merged).action == "allow"
    assert evaluate("bash", "cmd1 x", merge(big, small)).action == "allow"
    assert evaluate("bash", "echo hi", merge(merged, small)).action == "deny"


def test_a_ruleset_held_by_a_model_is_the_same_ruleset_not_a_copy():
    from opencode_nb.agent.info import AgentInfo

    rules = merge(Ruleset(filler(MANY)), from_config({"edit": "deny"}))
    agent = AgentInfo(name="x", permission=rules)
    assert agent.permission is rules
    assert AgentInfo(name="y", permission=list(rules)).permission == rules
    assert isinstance(AgentInfo(name="z", permission=[{"permission": "a", "pattern": "*", "action": "deny"}])
                      .permission, Ruleset)


def test_disabled_reads_the_last_rule_per_permission_in_a_large_merged_ruleset():
    rules = merge(from_config({"*": "deny", "read": "allow"}), Ruleset(filler(MANY)),
                  from_config({"mcp_*": "deny", "mcp_ok": {"*": "allow"}}))
    assert disabled(["bash", "read", "edit", "write", "mcp_x", "mcp_ok"], rules) == {"edit", "write", "mcp_x"}
    rules.append(Rule(permission="*", pattern="*", action="deny"))
    assert disabled(["read", "bash"], rules) == {"read", "bash"}
    assert disabled(["bash"], merge(rules, from_config({"bash": {"*": "allow"}}))) == set()


def test_the_rules_for_a_permission_are_those_whose_permission_covers_it_in_order():
    parts = [from_config({"*": "allow", "bash": {"ls *": "ask"}}), Ruleset(filler(MANY, permission="mcp_*")),
             from_config({"b?sh": "deny", "edit": "deny"})]
    merged = merge(*parts)
    for permission in ("bash", "mcp_x", "edit", "read"):
        expected = [r for r in merged if wildcard_match(permission, r.permission)]
        assert merged.rules_for(permission) == expected
        assert Ruleset(list(merged)).rules_for(permission) == expected
    parts[2].append(Rule(permission="bash", pattern="rm *", action="deny"))
    assert merged.rules_for("bash")[-1].pattern == "*", "the merge holds what it was made of"
    assert merge(*parts).rules_for("bash")[-1].pattern == "rm *"
