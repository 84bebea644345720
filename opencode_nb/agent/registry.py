"""The agents of a workspace: the built-ins, changed, extended or removed by configuration."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..config.layer import place
from ..config.schema import AgentConfig, Config, PermissionRule
from ..errors import ConfigError, NotFoundError
from ..permission.rules import EDIT_TOOLS, Rule, Ruleset, evaluate, expand_home, from_config, merge
from .builtin import NOTEBOOK_ORIGIN, NOTEBOOK_RULES, builtins, default_rules, prompt_text
from .info import AgentInfo

Where = Callable[..., tuple[str | None, int | None]]
"""Finds the file and line a config key path was written at (`LoadedConfig.where`)."""

Agents = list[AgentInfo]
"""A list of agents, named outside the registry, whose own `list` method hides the builtin in its body."""

_PLAIN_FIELDS = ("description", "mode", "model", "prompt", "temperature", "top_p", "steps", "hidden", "color")


class AgentRegistry:
    """Built-ins first; config agents then override them field by field.

    An agent's ruleset is `merge(defaults, its built-in rules, the global config permission, its own
    config permission)`: configuration is appended, never substituted, so a config that only says
    `edit: deny` keeps every other built-in rule. Each `permission` is followed by the `permissions` list of the
    same place (OpenCode V2's form), so the newer form has the last word.

    `refused` names the agents the configuration refused (an agent file with a key that looked like a
    restriction but is none: config/validate.py), each with why; they are disabled, and naming one says why.

    With `notebook`, the notebook's defaults (`NOTEBOOK_RULES`, and a built-in's own `notebook` rules) come
    right after the agent's built-in rules, before any configuration: file edits and shell commands ask unless
    a config rule says otherwise, and an agent whose built-in rules are stricter (plan) keeps them.
    `origin(rule)` says which of these layers a rule of an agent's ruleset came from.
    """

    def __init__(
        self,
        config: Config,
        agents: Mapping[str, AgentConfig] | None = None,
        *,
        data_dir: Path,
        tmp_dir: Path | None = None,
        where: Where | None = None,
        refused: Mapping[str, str] | None = None,
        notebook: bool = False,
    ) -> None:
        tmp_dir = tmp_dir or Path(tempfile.gettempdir())
        self._layers: list[tuple[Ruleset, str, tuple[str, ...] | None]] = []
        """Each layer of rules with where it came from, kept alive so no rule's id is taken by another later."""
        self._origins: dict[int, int] | None = None
        """A rule's id -> its layer's index, built when `origin` is first asked (a listing, not every build)."""
        self.warnings: list[str] = []
        self.refused: dict[str, str] = dict(refused or {})
        """Agent name -> why its definition was refused (`file:line key: ...`)."""
        self._where = where or (lambda *path: (None, None))
        source, _ = self._where("permission")
        self.defaults = self._layer(from_config(default_rules(data_dir, tmp_dir), key_prefix="<defaults>"),
                                    "OpenCode default")
        self.notebook = self._layer(from_config(NOTEBOOK_RULES if notebook else None, key_prefix="<notebook>"),
                                    NOTEBOOK_ORIGIN)
        """The notebook's defaults (empty outside a notebook)."""
        self.global_rules = merge(from_config(config.permission, source=source), rule_list(config.permissions))
        self._layer(self.global_rules, "config", where=("permission",))
        self._agents: dict[str, AgentInfo] = {}
        self._disabled: set[str] = set()
        for name, spec in builtins(data_dir, tmp_dir).items():
            own = self._layer(from_config(spec.rules), f"built-in @{name}")
            in_notebook = self._layer(from_config(spec.notebook if notebook else None, key_prefix=f"<{name}>"),
                                      NOTEBOOK_ORIGIN)
            self._agents[name] = AgentInfo(
                name=name,
                description=spec.description,
                mode=spec.mode,
                native=True,
                hidden=spec.hidden,
                temperature=spec.temperature,
                prompt=prompt_text(name),
                permission=merge(self.defaults, self.notebook, own, in_notebook, self.global_rules),
            )
        for name, entry in (config.agent if agents is None else agents).items():
            self._configure(name, entry)
        for name, spec in builtins(data_dir, tmp_dir).items():
            if spec.fixed and name in self._agents:
                agent = self._agents[name]
                rules = self._layer(from_config(spec.fixed, key_prefix=f"<{name}>"), f"built-in @{name}, fixed")
                fixed = merge(agent.permission, rules)
                self._agents[name] = agent.model_copy(update={"permission": fixed})
        self._default = self._choose_default(config.default_agent)

    def _configure(self, name: str, entry: AgentConfig) -> None:
        if entry.disable:
            self._agents.pop(name, None)
            self._disabled.add(name)
            return
        base = self._agents.get(name) or AgentInfo(
            name=name, permission=merge(self.defaults, self.notebook, self.global_rules))
        changes: dict[str, Any] = {f: getattr(entry, f) for f in _PLAIN_FIELDS if getattr(entry, f) is not None}
        if entry.name is not None:  # renames what listings show; the key under `agent:` still selects the agent
            changes["display_name"] = entry.name
        source, _ = self._where("agent", name, "permission")
        legacy = Ruleset(
            Rule(permission="edit" if tool in EDIT_TOOLS else tool, pattern="*", action="allow" if on else "deny")
            for tool, on in (entry.tools or {}).items()
        )
        own = from_config(entry.permission, source=source, key_prefix=f"agent.{name}.permission")
        configured = merge(legacy, own, rule_list(entry.permissions))
        self._layer(configured, "config", where=("agent", name, "permission"))
        changes["permission"] = merge(base.permission, configured)
        changes["tools"] = {**base.tools, **(entry.tools or {})}
        changes["options"] = _deep_merge(base.options, entry.options)
        self._agents[name] = AgentInfo.model_validate({**base.model_dump(), **changes})

    def _choose_default(self, wanted: str | None) -> AgentInfo:
        """The agent named by `default_agent`, else build, else the first visible primary agent.

        Raises:
            ConfigError: `default_agent` names an agent that does not exist, is a subagent or is hidden (at the
                file and line it was written), or no visible primary agent is left at all.
        """
        usable = [a for a in self._agents.values() if a.mode != "subagent" and not a.hidden]
        if not usable:
            raise ConfigError(
                self._where("agent")[0],
                key="agent",
                hint="no usable primary agent is left (every primary agent is disabled, hidden or a subagent); "
                "re-enable build or define an agent with `mode: primary`",
            )
        if wanted:
            agent = self._agents.get(wanted)
            if agent is not None and agent.mode != "subagent" and not agent.hidden:
                return agent
            problem = (
                f"was refused ({self.refused[wanted]})" if wanted in self.refused
                else "is disabled" if wanted in self._disabled
                else "is not defined" if agent is None
                else "is a subagent" if agent.mode == "subagent"
                else "is hidden"
            )
            choices = " or ".join(a.name for a in sorted(usable, key=lambda a: (a.name != "build", a.name))[:2])
            source, line = self._where("default_agent")
            raise ConfigError(source, line=line, key="default_agent",
                              hint=f"{wanted!r} {problem}; name a primary agent such as {choices}, or remove the key")
        return self._agents["build"] if "build" in self._agents and self._agents["build"] in usable else usable[0]

    def _layer(self, rules: Ruleset, origin: str, *, where: tuple[str, ...] | None = None) -> Ruleset:
        """Remember where the rules came from; with `where`, the config key path under which each is written."""
        self._layers.append((rules, origin, where))
        return rules

    def origin(self, rule: Rule) -> str | None:
        """Where a rule of an agent's ruleset came from: "OpenCode default", "notebook default", "built-in
        @plan", or the file and line of its config key; None for a rule from elsewhere (a session's)."""
        if self._origins is None:
            self._origins = {id(r): i for i, (rules, _, _) in enumerate(self._layers) for r in rules}
        index = self._origins.get(id(rule))
        if index is None:
            return None
        _, origin, where = self._layers[index]
        return place(*self._where(*where, rule.permission)) if where is not None else origin

    def notebook_defaults_in_force(self, agent: AgentInfo | None = None) -> list[str]:
        """The permissions of `NOTEBOOK_RULES` whose decision still comes from the notebook's defaults for
        `agent` (the default one): empty outside a notebook, or once the configuration decides them."""
        agent = agent or self._default
        ours = {id(r) for rules, origin, _ in self._layers if origin == NOTEBOOK_ORIGIN for r in rules}
        return [name for name in NOTEBOOK_RULES if id(evaluate(name, "*", agent.permission)) in ours]

    # ------------------------------------------------------------------------------------------ queries

    @property
    def default(self) -> AgentInfo:
        return self._default

    def get(self, name: str) -> AgentInfo:
        try:
            return self._agents[name]
        except KeyError:
            known = ", ".join(a.name for a in self.list())
            if name in self.refused:
                raise NotFoundError("agent", name, f"its definition was refused, so it does not run: "
                                    f"{self.refused[name]}; known agents: {known}") from None
            raise NotFoundError("agent", name, f"known agents: {known}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._agents

    def list(self, *, include_hidden: bool = False) -> list[AgentInfo]:
        """Primary agents first (the default leading), then agents of any mode, then subagents; by name.

        Menus and listings show what a person can pick, so hidden agents (compaction, title, summary) are left
        out unless `include_hidden` asks for them; they then come last, after everything that can be picked.
        """
        rank = {"primary": 0, "all": 1, "subagent": 2}
        agents = [a for a in self._agents.values() if include_hidden or not a.hidden]
        return sorted(agents, key=lambda a: (a.hidden, rank[a.mode], a.name != self._default.name, a.name))

    def subagents(self, caller: AgentInfo | None = None) -> Agents:
        """Agents a task may run: subagent or all, not hidden, and not denied by the caller's `task` rules."""
        found = [a for a in self.list() if a.is_subagent]
        if caller is None:
            return found
        return [a for a in found if evaluate("task", a.name, caller.permission).action != "deny"]


def rule_list(rules: list[PermissionRule] | None) -> Ruleset:
    """OpenCode V2's `permissions:` list as rules, in the order written, `~` in patterns expanded as in
    `from_config`."""
    return Ruleset(Rule(permission=r.permission, pattern=expand_home(r.resource), action=r.effect) for r in rules or [])


def _deep_merge(base: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in new.items():
        out[key] = _deep_merge(out[key], value) if isinstance(out.get(key), dict) and isinstance(value, dict) else value
    return out
