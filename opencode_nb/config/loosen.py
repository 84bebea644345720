"""What a configuration change lets agents do, or lets reach the model, that the configuration before it did not.

Only what widens an agent's reach counts; a new model, prompt or temperature is the person's business and
applies at once. What counts, each judged so that a doubt counts as a loosening:

- permissions: each agent's effective ruleset (built-ins, then the config's rules, `tools` switches and the
  agent's own rules, markdown agents included) compared by `ruleset_change`; an agent that appears (new,
  or no longer disabled) brings rules that were not in force; a new `default_agent` is judged by comparing
  the old default's rules with the new one's;
- `sandbox` weaker (required > auto > off);
- `provider`, `command` and `mcp` entries: any added or changed (a provider's `base_url` or `options` says
  where prompts and keys go; a command or server runs what it names);
- `secrets.env`: a name no longer kept secret;
- `checkpoints` recording less (switched off, a smaller `max_file_mb`, fewer `keep_turns`): a later turn's
  deletion could then not be undone;
- what reaches the model: a value that starts reading a variable or a file it did not read before
  (`{env:NAME}`, `{file:path}`, at any key: an agent's prompt or description, a command's template, ...), and
  an `instructions` entry that adds a file. Both are outside what the agent could say itself: a variable's
  value, a file outside the project or one its rules keep from it, put in front of every later run. The
  loosening says which variable or file, whether it is outside the project, and what of it the model would
  read (a secret's values reach it only as `[redacted: ...]`: session/system.py redacts what is sent), never
  the value. A reference already read before is not judged again, even when its file's content changed.

The agents' rulesets are built by the agent registry, which sits above this package: the caller passes a
function that builds them (`RulesOf`; the workspace does). Without one, `config_rules` reads them from the
configuration alone, behind a stand-in for the built-in rules that it cannot see: an `allow` and a `deny` of
everything, so any step whose soundness depends on what comes before is reported.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .layer import KeyPath, dotted, place
from .load import LoadedConfig
from .reaches import reaching_model
from .ruleset_change import RuleChange, RuleLike, loosened_rules
from .schema import PermissionRule

SANDBOX_STRENGTH = {"off": 0, "auto": 1, "required": 2}
NAMED_ENTRIES = ("provider", "command", "mcp")
"""Sections of named entries where any entry added or changed loosens."""

Effective = tuple[Mapping[str, Sequence[RuleLike]], str]
"""Every agent's effective ruleset by name, and the default agent's name."""
RulesOf = Callable[[LoadedConfig], Effective]


@dataclass(frozen=True)
class Loosening:
    """One thing the new configuration allows that the old one did not."""

    key: str
    """The key path, dotted (`sandbox`, `provider.openai.base_url`, `permission.bash."*"`)."""
    where: str
    """The file (and line) that wrote it; for something removed, where it was written before."""
    what: str
    """How it loosens (`auto → off`, `ask → allow`, `added`, `changed`), never a value that may be secret."""

    def __str__(self) -> str:
        return f"{self.where}: {self.key}: {self.what}"


@dataclass(frozen=True)
class ConfigRule:
    permission: str
    pattern: str
    action: str


BUILT_IN = (ConfigRule("*", "*", "allow"), ConfigRule("*", "*", "deny"))
"""Stands for the built-in rules before the configuration's (see the module docstring)."""
EVERY_AGENT = "*"


def config_rules(loaded: LoadedConfig) -> Effective:
    """Each configured agent's rules, and `*` for the agents the configuration does not name, as the
    configuration alone says them (after `BUILT_IN`)."""
    shared = [*BUILT_IN, *_from_config(loaded.config.permission), *_from_list(loaded.config.permissions)]
    rules: dict[str, Sequence[RuleLike]] = {EVERY_AGENT: shared}
    for name, agent in loaded.agents.items():
        if not agent.disable:
            switches = [ConfigRule(tool, "*", "allow" if on else "deny") for tool, on in (agent.tools or {}).items()]
            rules[name] = [*shared, *switches, *_from_config(agent.permission), *_from_list(agent.permissions)]
    return rules, loaded.config.default_agent or EVERY_AGENT


def _from_list(permissions: list[PermissionRule] | None) -> list[ConfigRule]:
    """OpenCode V2's `permissions:` list, read after `permission` as the agent registry reads it."""
    return [ConfigRule(rule.permission, rule.resource, rule.effect) for rule in permissions or []]


def _from_config(permission: Any) -> list[ConfigRule]:
    if permission is None:
        return []
    if isinstance(permission, str):
        return [ConfigRule("*", "*", permission)]
    return [ConfigRule(name, pattern, action)
            for name, value in permission.items()
            for pattern, action in (value.items() if isinstance(value, dict) else [("*", value)])]


def loosenings(old: LoadedConfig, new: LoadedConfig, rules_of: RulesOf = config_rules) -> list[Loosening]:
    """Everything in `new` that is looser than in `old`; empty when `new` only tightens or changes nothing that
    widens an agent's reach."""
    found: list[Loosening] = []
    before, after = old.config.sandbox, new.config.sandbox
    if SANDBOX_STRENGTH[after] < SANDBOX_STRENGTH[before]:
        found.append(Loosening("sandbox", _where(new, ("sandbox",)), f"{before} → {after}"))
    old_dump, new_dump = old.config.model_dump(mode="json"), new.config.model_dump(mode="json")
    for section in NAMED_ENTRIES:
        found += _entries(section, old_dump.get(section) or {}, new_dump.get(section) or {}, new)
    dropped = [n for n in old.config.secrets.env if n not in new.config.secrets.env]
    if dropped:
        found.append(Loosening("secrets.env", _where(new, ("secrets", "env")),
                               f"no longer kept secret: {', '.join(dropped)}"))
    found += _checkpoints(old, new)
    reaching = [Loosening(dotted(path), _where(new, path), what) for path, what in reaching_model(old, new)]
    said = {item.key for item in reaching}  # a command's template that reads a file: said once, with what it reads
    return [item for item in found if item.key not in said] + reaching + _rules(old, new, rules_of)


def _checkpoints(old: LoadedConfig, new: LoadedConfig) -> list[Loosening]:
    """Less recorded means less that undo can take back."""
    before, after = old.config.checkpoints, new.config.checkpoints
    found: list[Loosening] = []
    if before.enabled and not after.enabled:
        found.append(Loosening("checkpoints.enabled", _where(new, ("checkpoints", "enabled")),
                               "switched off: later turns' file changes could not be undone"))
    for key, unit in (("max_file_mb", " MB"), ("keep_turns", " turns")):
        was, now = getattr(before, key), getattr(after, key)
        if after.enabled and now < was:
            found.append(Loosening(f"checkpoints.{key}", _where(new, ("checkpoints", key)),
                                   f"{was:g}{unit} → {now:g}{unit}: less that undo can take back"))
    return found


def _entries(section: str, old: Mapping[str, Any], new: Mapping[str, Any], loaded: LoadedConfig) -> list[Loosening]:
    found: list[Loosening] = []
    for name, entry in new.items():
        path = (section, name)
        if name not in old:
            found.append(Loosening(dotted(path), _where(loaded, path), "added"))
            continue
        for key in _differences(old[name], entry, path):
            found.append(Loosening(dotted(key), _where(loaded, key), "changed"))
    return found


def _differences(old: Any, new: Any, path: KeyPath) -> list[KeyPath]:
    """The leaf key paths whose values differ (values are not shown: an api_key is one)."""
    if isinstance(old, dict) and isinstance(new, dict):
        keys = [*new, *(k for k in old if k not in new)]
        return [p for k in keys for p in _differences(old.get(k), new.get(k), (*path, str(k)))]
    return [] if old == new else [path]


def _rules(old: LoadedConfig, new: LoadedConfig, rules_of: RulesOf) -> list[Loosening]:
    old_rules, old_default = rules_of(old)
    new_rules, new_default = rules_of(new)
    found: list[Loosening] = []
    by_change: dict[tuple[RuleChange, str], list[str]] = {}
    for agent, rules in new_rules.items():
        if agent not in old_rules:
            found.append(Loosening(f"agent.{agent}", _where(new, ("agent", agent)),
                                   "agent added: its rules were not in force before"))
            continue
        for change in loosened_rules(old_rules[agent], rules):
            by_change.setdefault((change, _rule_where(old, new, agent, change)), []).append(agent)
    for (change, where), agents in by_change.items():
        found.append(Loosening(dotted(("permission", change.permission, change.pattern)), where,
                               f"{change.how()} ({_who(agents, new_rules)})"))
    if old_default != new_default and new_default in new_rules and old_default in old_rules:
        for change in loosened_rules(old_rules[old_default], new_rules[new_default]):
            found.append(Loosening("default_agent", _where(new, ("default_agent",)),
                                   f"{old_default} → {new_default}, which allows more: {change.describe()}"))
            break
    return found


def _who(agents: list[str], every: Mapping[str, object]) -> str:
    return "every agent" if len(agents) == len(every) else f"agents: {', '.join(agents)}"


def _rule_where(old: LoadedConfig, new: LoadedConfig, agent: str, change: RuleChange) -> str:
    """The file and line that wrote the rule: in the new configuration, or the old one for a rule removed."""
    loaded = new if change.after is not None else old
    candidates: list[KeyPath] = [
        ("agent", agent, "permission", change.permission, change.pattern),
        ("agent", agent, "permission", change.permission),
        ("agent", agent, "tools", change.permission),
        ("permission", change.permission, change.pattern),
        ("permission", change.permission),
    ]
    for path in candidates:
        if path in loaded.origins:
            return place(*loaded.origins[path])
    return _where(loaded, ("agent", agent, "permission")) if ("agent", agent) in loaded.origins else \
        _where(loaded, ("permission",))


def _where(loaded: LoadedConfig, path: KeyPath) -> str:
    source, line = loaded.where(*path)
    return place(source, line) if source is not None else "built-in"
