"""Unknown keys that would have restricted an agent: they fail closed.

An unknown key is otherwise dropped with a warning (validate.py), which is right for `colour:` and wrong for
`permisions: {bash: deny}`: dropped, the agent would get every tool its author meant to take away. So before
unknown keys are dropped, each agent entry (a markdown agent file's frontmatter, or `agent.<name>` in a config
file) is searched for keys that look like a restriction but are none of the keys that make one: a
misspelling of `permission`, `tools` or `disable`, Claude Code's `allowed-tools`/`disallowedTools`/
`permissionMode`, or any key whose name speaks of permissions, tools, allowing, denying or the sandbox. Such an
agent is *refused*: it is disabled, whatever other files say of it, and a `ConfigError` names the file, the
line, the key and the spelling meant. A refused agent that was the default is replaced by the next primary
agent, so the person keeps a working notebook and loses only what the broken file defined.

At the top level of a config file the same keys would have restricted every agent: there, such a key is a
`ConfigError` and the configuration does not load at all, as for any invalid value.

OpenCode V2's `permissions:` list (`[{action, resource, effect}]`) is a key that makes a restriction
(schema.py `PermissionRule`); only its V1-style mapping form (`permissions: {bash: deny}`) is refused here.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from ..errors import ConfigError
from .layer import KeyPath, Layer, dotted
from .schema import AgentConfig, Config

RESTRICTING_KEYS = ("permission", "permissions", "tools", "disable", "disabled")
"""The keys that do restrict an agent; a close misspelling of one is taken for it."""
_SPEAKS_OF_LIMITS = re.compile(r"permi|tool|allow|deny|denied|forbid|restrict|sandbox|readonly|disab")
"""Words in an agent key's name (folded: lower case, no `-`/`_`) that say it was meant to limit the agent."""
_SPEAKS_OF_RULES = re.compile(r"permi|tool")
"""The same at the top level, where only rules limit every agent (`disabled_providers` is OpenCode's and harmless
to drop: a provider left on is not a wider reach for any agent)."""
_PERMISSION_EXAMPLE = "e.g. permission: {bash: deny, edit: ask}"


def restricting_problems(layer: Layer) -> tuple[dict[str, ConfigError], list[ConfigError]]:
    """Find and remove the unknown keys of `layer` that look like restrictions.

    Returns:
        The agents to refuse, each with the first such key found in it, and the problems at the top level
        (which stop the configuration from loading).
    """
    refused: dict[str, ConfigError] = {}
    top: list[ConfigError] = []
    data = layer.data
    for key in [k for k in data if _looks_restricting(k, data[k], known=_TOP_KEYS, words=_SPEAKS_OF_RULES)]:
        top.append(_problem(layer, (key,), data.pop(key), scope="every agent"))
    agents = data.get("agent")
    if isinstance(agents, dict):
        for name, entry in agents.items():
            if not isinstance(entry, dict):
                continue
            for key in [k for k in entry if _looks_restricting(k, entry[k], known=_AGENT_KEYS,
                                                               words=_SPEAKS_OF_LIMITS)]:
                problem = _problem(layer, ("agent", name, key), entry.pop(key), scope=f"the agent {name!r}")
                refused.setdefault(str(name), problem)
    return refused, top


def _looks_restricting(key: str, value: Any, *, known: frozenset[str], words: re.Pattern[str]) -> bool:
    if key == "permissions":
        return not isinstance(value, list)  # the list is V2's form and validated by the schema
    if key in known:
        return False
    folded = key.lower().replace("-", "").replace("_", "")
    return bool(words.search(folded)) or bool(difflib.get_close_matches(folded, RESTRICTING_KEYS, n=1, cutoff=0.75))


def _problem(layer: Layer, path: KeyPath, value: Any, *, scope: str) -> ConfigError:
    key = path[-1]
    refusal = ("so the agent is refused: it does not run until the file is fixed" if path[0] == "agent" else
               "so this configuration is not loaded")
    what = ("is OpenCode V2's list of {action, resource, effect} rules, and this is not a list"
            if key == "permissions" else "is not a key here")
    hint = f"{what}; ignoring it would give {scope} what it meant to take away, {refusal}; {_spelling(key, value)}"
    markdown = layer.path is not None and layer.path.suffix == ".md"  # the file holds one agent: its key alone
    return ConfigError(layer.source, line=layer.lines.get(path), key=key if markdown else dotted(path), hint=hint,
                       restricting=True)


def _spelling(key: str, value: Any) -> str:
    """The right spelling of what `key` meant, as a sentence."""
    folded = key.lower().replace("-", "").replace("_", "")
    if key == "permissions":
        return (f"did you mean `permission:`? It takes this mapping form ({_PERMISSION_EXAMPLE}); the list form "
                "reads permissions: [{action: shell, resource: \"*\", effect: deny}]")
    if "tool" in folded:
        shape = " (Claude Code's list of allowed tools has no counterpart: deny the others instead)" \
            if isinstance(value, list | str) else ""
        return (f"did you mean `permission:` ({_PERMISSION_EXAMPLE}), or `tools:` with true or false per tool "
                f"(e.g. tools: {{bash: false}})?{shape}")
    if "disab" in folded or difflib.get_close_matches(folded, ("disable", "disabled"), n=1, cutoff=0.75):
        return "did you mean `disable: true`?"
    if "sandbox" in folded:
        return "the sandbox is set for the whole configuration: `sandbox: required` in opencode.yaml"
    return f"did you mean `permission:`? Write the restriction there, {_PERMISSION_EXAMPLE}"


def _names(model: Any) -> frozenset[str]:
    return frozenset(info.alias or name for name, info in model.model_fields.items())


_TOP_KEYS, _AGENT_KEYS = _names(Config), _names(AgentConfig)
