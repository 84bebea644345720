"""`network` rules judged host by host: which rule decides a host and port, what command-line patterns become,
and when a command gets a proxy at all."""

from __future__ import annotations

import pytest

from opencode_nb.permission import Rule, from_config
from opencode_nb.sandbox.hosts import (
    allows_every_host,
    deciding,
    for_command,
    names_exactly,
    network_notes,
    opens,
)
from opencode_nb.sandbox.proxy import HostProxy, Verdict


def network(rules: dict | str, command: str = "curl x") -> list[Rule]:
    return for_command(command, from_config({"network": rules}))


def action(rules: dict | str, host: str, port: int = 443, command: str = "curl x") -> str:
    return deciding(host, port, network(rules, command)).action


def test_a_host_pattern_matches_every_port_and_a_host_port_pattern_one():
    rules = {"*": "deny", "pypi.org": "allow", "files.pythonhosted.org:443": "allow"}
    assert action(rules, "pypi.org", 443) == action(rules, "pypi.org", 8080) == "allow"
    assert action(rules, "files.pythonhosted.org", 443) == "allow"
    assert action(rules, "files.pythonhosted.org", 80) == "deny"
    assert action(rules, "evil.example") == "deny"


def test_a_subdomain_wildcard_does_not_cover_the_domain_itself():
    rules = {"*": "deny", "*.github.com": "allow"}
    assert action(rules, "api.github.com") == "allow" and action(rules, "github.com") == "deny"
    assert action(rules, "github.com.evil.example") == "deny"


def test_the_last_matching_rule_wins_and_nothing_matching_asks():
    assert action({"pypi.org": "allow", "*": "ask"}, "pypi.org") == "ask"
    assert action({"*": "ask", "pypi.org": "allow"}, "pypi.org") == "allow"
    assert action({"pypi.org": "allow"}, "other.example") == "ask"


def test_a_command_pattern_stands_for_every_host_where_it_matches_the_line_and_is_absent_elsewhere():
    rules = {"*": "deny", "pip install *": "allow", "evil.example": "deny"}
    assert action(rules, "pypi.org", command="pip install pandas") == "allow"
    assert action(rules, "evil.example", command="pip install pandas") == "deny"  # a later rule still wins
    assert action(rules, "pypi.org", command="curl pypi.org") == "deny"
    assert network(rules, "pip install x") == [Rule(permission="network", pattern=p, action=a) for p, a in
                                               [("*", "deny"), ("*", "allow"), ("evil.example", "deny")]]


def test_only_rules_naming_network_count():
    assert for_command("curl x", from_config({"*": "allow", "bash": "allow"})) == []
    assert not opens([])


@pytest.mark.parametrize(("rules", "opened"), [
    ("deny", False), ("allow", True), ("ask", True), ({"pypi.org": "allow"}, True),
    ({"*": "deny", "pypi.org": "allow"}, True), ({"pypi.org": "allow", "*": "deny"}, False),
    ({"*": "deny", "pypi.org": "deny"}, False),
])
def test_a_command_gets_a_proxy_only_when_some_host_could_be_reached(rules, opened):
    assert opens(network(rules)) is opened


@pytest.mark.parametrize(("rules", "every"), [
    ("allow", True), ({"*": "allow", "evil.example": "deny"}, False), ("ask", False),
    ({"pypi.org": "allow"}, False), ({"*": "deny", "curl *": "allow"}, True),
])
def test_every_host_is_allowed_only_by_a_last_catch_all_allow_with_nothing_after_it(rules, every):
    assert allows_every_host(network(rules)) is every


@pytest.mark.parametrize(("pattern", "host", "port", "exact"), [
    ("localhost", "localhost", 80, True), ("db.internal:5432", "db.internal", 5432, True),
    ("[::1]:8080", "::1", 8080, True), ("*", "localhost", 80, False), ("127.0.0.*", "127.0.0.2", 80, False),
    ("db.internal:5432", "db.internal", 80, False),
])
def test_a_rule_names_a_host_exactly_only_without_wildcards(pattern, host, port, exact):
    assert names_exactly(Rule(permission="network", pattern=pattern, action="allow"), host, port) is exact


async def _refuse(host: str, port: int) -> Verdict:
    return Verdict(False, "no `network` rule allows it")


def test_the_result_names_each_refused_host_and_how_to_allow_one():
    proxy = HostProxy(_refuse)
    proxy.refused.update({"pypi.org:443": "no `network` rule allows it", "10.0.0.1:80": "a rule denies it"})
    (note,) = network_notes(proxy, "anything", trouble=False)
    assert "refused: pypi.org:443 (no `network` rule allows it); 10.0.0.1:80 (a rule denies it)" in note
    assert 'network: {"pypi.org": allow}' in note


def test_a_failed_connection_is_explained_by_what_road_there_was():
    (behind_proxy,) = network_notes(HostProxy(_refuse), "curl: (6) Could not resolve host", trouble=True)
    assert "no DNS" in behind_proxy and "HTTPS_PROXY" in behind_proxy
    (offline,) = network_notes(None, "curl: (6) Could not resolve host", trouble=True)
    assert "no `network` rule allows any host" in offline
    assert network_notes(None, "fine", trouble=False) == []
