"""The `network` permission: which hosts a sandboxed command may reach, decided host by host as it tries them.

A sandboxed command has no network of its own; the proxy (`sandbox/proxy.py`) carries its HTTP and HTTPS
connections and asks `HostGate` about each new host and port. `network` patterns are host names:

    pypi.org          that host, on any port
    pypi.org:443      that host, on that port only
    *.github.com      every name under github.com (github.com itself needs its own pattern)
    *                 every host

The last matching rule wins, as for every permission; "always" grants the host. An ask shows the person
`network: pypi.org` while the command waits for the answer; with nobody present it is refused.

A pattern with a space in it is matched against the whole command line instead, as `network` rules were
written when the network was all or nothing (`"pip install *": allow`). For a command it matches, it stands
at its place in the list for every host (`*`); for any other command it is not there at all.

Opening needs a rule that names `network`: a catch-all `"*": allow` never counts, since that is exactly the
configuration the sandbox has to hold against. And a host that resolves to a loopback, private or
link-local address (the cloud metadata address among them) is reached only when the deciding rule names it
exactly, without wildcards (`"127.0.0.2": allow`, `"db.internal:5432": allow`): otherwise the proxy, running
on the person's machine, would be a way to their local services.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..errors import DeniedError, PolicyRefusedError, RejectedError
from ..permission.events import Ask
from ..permission.rules import Rule
from ..permission.wildcard import wildcard_match
from .proxy import HostProxy, Verdict, ip_literal, is_public

CATCH_ALL = "*"


def is_command_pattern(pattern: str) -> bool:
    """Whether a `network` pattern is matched against the command line rather than a host."""
    return " " in pattern.strip()


def for_command(command: str, rules: Iterable[Rule]) -> list[Rule]:
    """The `network` rules as they apply to `command`: host patterns as they are; a command-line pattern that
    matches it becomes `*` (every host) in its place; one that does not match is left out."""
    line = command.strip()
    kept: list[Rule] = []
    for rule in rules:
        if rule.permission != "network":
            continue
        if not is_command_pattern(rule.pattern):
            kept.append(rule)
        elif wildcard_match(line, rule.pattern):
            kept.append(rule.model_copy(update={"pattern": CATCH_ALL}))
    return kept


def opens(rules: list[Rule]) -> bool:
    """Whether any host at all could be reached under `rules` (already `for_command`): no rule means none.

    Rules before the last catch-all can never decide; after it, one that does not deny is enough.
    """
    if not rules:
        return False
    last = max((i for i, r in enumerate(rules) if r.pattern == CATCH_ALL), default=-1)
    if last < 0:
        return True  # hosts no rule matches ask
    return any(r.action != "deny" for r in rules[last:])


def host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def deciding(host: str, port: int, rules: list[Rule]) -> Rule:
    """The last rule matching the host, or the host with its port; nothing matching asks."""
    with_port = host_port(host, port)
    for rule in reversed(rules):
        if wildcard_match(host, rule.pattern) or wildcard_match(with_port, rule.pattern):
            return rule
    return Rule(permission="network", pattern=CATCH_ALL, action="ask")


def names_exactly(rule: Rule, host: str, port: int) -> bool:
    """Whether `rule` names this host itself, not through a wildcard."""
    return rule.pattern in (host, host_port(host, port), f"[{host}]")


class HostGate:
    """One command's decisions about hosts: its rules (read anew for each host, so a grant given a moment ago
    counts) and a person to ask.

    Args:
        command: the command line, for command-line patterns and for the person to see.
        rules: the caller's `network` rules and grants, as `SandboxCall.network_rules` gives them.
        ask: the tool call's `ask`.
    """

    def __init__(self, command: str, rules: Callable[[], list[Rule]], ask: Ask) -> None:
        self.command = command
        self.rules = rules
        self.ask = ask

    async def __call__(self, host: str, port: int) -> Verdict:
        rule = deciding(host, port, for_command(self.command, self.rules()))
        named = names_exactly(rule, host, port)
        if rule.action == "deny":
            return Verdict(False, "a `network` rule denies it" if rule.pattern != CATCH_ALL or named
                           else "no `network` rule allows it")
        literal = ip_literal(host)
        if literal is not None and not is_public(literal) and not named:
            return Verdict(False, "it is a loopback, private or link-local address, which only a rule naming it "
                                  "exactly opens")
        if rule.action == "ask":
            try:
                await self.ask("network", [host], [host],
                               {"host": host, "port": port, "command": self.command,
                                "reason": f"the command connects to {host_port(host, port)}"}, always_ask=True)
            except (DeniedError, PolicyRefusedError, RejectedError) as exc:
                return Verdict(False, refusal(exc))
        return Verdict(True, named=named)


def refusal(exc: Exception) -> str:
    """Why an ask did not allow, in words for the command's result."""
    if isinstance(exc, DeniedError):
        return "a rule denies it"
    if isinstance(exc, PolicyRefusedError):
        return "nobody was present to allow it"
    feedback = getattr(exc, "feedback", None)
    return f"the person refused it: {feedback}" if feedback else "the person refused it"


def allows_every_host(rules: list[Rule]) -> bool:
    """Whether `rules` (already `for_command`) allow every host without asking: where there is no proxy to
    decide host by host (sandbox-exec), only then is the network opened."""
    last = max((i for i, r in enumerate(rules) if r.pattern == CATCH_ALL), default=-1)
    return last >= 0 and all(r.action == "allow" for r in rules[last:])


EXAMPLE = '`network: {"pypi.org": allow}`'


def network_notes(proxy: HostProxy | None, output: str, *, trouble: bool) -> list[str]:
    """What a confined command's result says about its network: the hosts the proxy refused and how to allow
    them, or, when the output shows a failed connection (`trouble`), what road there was."""
    if proxy is not None and proxy.refused:
        hosts = "; ".join(f"{host} ({why})" for host, why in proxy.refused.items())
        return [f"(The sandbox's network proxy refused: {hosts}. To reach a host, ask the person for a `network` "
                f"rule naming it, e.g. {EXAMPLE}.)"]
    if not trouble:
        return []
    if proxy is not None:
        return ["(This command ran in the OS sandbox, where the network is HTTP and HTTPS through the proxy in "
                "`HTTPS_PROXY`/`HTTP_PROXY`, to the hosts the `network` rules allow; there is no DNS and no other "
                "connection, so a program that ignores those variables cannot connect.)"]
    return ["(This command ran in the OS sandbox without network access: no `network` rule allows any host. If "
            f"it needs the network, ask the person to allow the hosts it uses, e.g. {EXAMPLE}.)"]
