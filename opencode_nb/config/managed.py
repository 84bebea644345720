"""The administrator's policy: a file no user, project, in-kernel change or environment setting loosens.

A hub (or any machine's owner) writes `/etc/opencode_nb/managed.yaml`, or names another file through
`OPENCODE_NB_MANAGED_CONFIG` (a hub sets it with `c.Spawner.environment`). The variable is read once, when
this module is first imported, i.e. when the kernel or the CLI starts: an agent that sets it later from
inside a run changes nothing.

What it can say (every key optional):

- `permission`: rules in the usual shape. They come after every other rule, and their `deny` and `ask` hold
  whatever comes later: an agent's own rules, an "always" a person gave, `OPENCODE_NB_PERMISSION=allow`
  (permission/service.py checks them apart from, and before, everything else). Their `allow` grants nothing
  a lower rule withholds: an administrator tightens, never loosens.
- `network`: host rules (`{"*": deny, "pypi.org": allow}`), the same as `permission: {network: ...}`.
- `sandbox`: `required` or `auto`; the configuration's `sandbox` is never weaker.
- `approvals`: who may answer prompts on a server several people use (`owner` on every server of a hub);
  it replaces the configuration's own `approvals`.
- `providers`, `models`, `base_urls`: allow-lists (shell-style wildcards: `anthropic/*`); a model, a provider
  or a provider's `base_url` outside them is refused, naming this file.
- `mcp`: the MCP servers that may start, by name, command (its first word, or the whole line) or URL; the
  others never start.
- `disabled`: tools the model is never offered (`webfetch`, `bash`, ...) and features: `python_live` (the
  python tool runs only in its copy-on-write sandbox, never in the person's kernel).

A file that does not parse, or holds an unknown key or a wrong value, is a `ConfigError` naming the file,
line and key: nothing loads until it is fixed (failing open would drop the policy).
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from ..errors import ConfigError
from ..people import ApprovalsMode
from .layer import Layer, Origins, dotted, place
from .parse import read_config_file
from .schema import Action, PermissionConfig, Section
from .validate import error_problems

MANAGED_ENV = "OPENCODE_NB_MANAGED_CONFIG"
DEFAULT_PATH = Path("/etc/opencode_nb/managed.yaml")
AT_START: str | None = os.environ.get(MANAGED_ENV)
"""The variable as the process started with it: later changes to `os.environ` are not read."""

FEATURES = {"python_live": ("python", "live")}
"""Features `disabled` turns off that are not whole tools: the permission and pattern a managed deny takes."""


class ManagedPolicy(Section):
    permission: PermissionConfig | None = None
    network: dict[str, Action] | None = None
    sandbox: Literal["auto", "required"] | None = None
    approvals: ApprovalsMode | None = None
    providers: list[str] | None = None
    models: list[str] | None = None
    base_urls: list[str] | None = None
    mcp: list[str] | None = None
    disabled: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class Managed:
    """The managed policy as read, and where from."""

    path: Path
    policy: ManagedPolicy
    layer: Layer | None = None
    """The file as read, lines included: its `permission`, `network`, `sandbox` and `approvals` merge last
    (load.py)."""

    def config_layer(self) -> Layer:
        """What of the file is configuration too, as the last layer: so the config view shows these values as
        the managed file's, and lower rules are followed by the managed ones."""
        data: dict[str, Any] = {}
        if self.policy.permission is not None:
            data["permission"] = self.policy.permission
        if self.policy.network:
            permission = data.setdefault("permission", {})
            if isinstance(permission, str):
                data["permission"] = permission = {"*": permission}
            permission["network"] = dict(self.policy.network)
        if self.policy.sandbox is not None:
            data["sandbox"] = self.policy.sandbox
        if self.policy.approvals is not None:
            data["approvals"] = self.policy.approvals
        lines = dict(self.layer.lines) if self.layer is not None else {}
        for host in self.policy.network or {}:
            if ("network", host) in lines:
                lines[("permission", "network", host)] = lines[("network", host)]
        return Layer(data=data, source=str(self.path), lines=lines, path=self.path)

    def allowed(self, listed: list[str] | None, value: str) -> bool:
        return listed is None or any(fnmatchcase(value, pattern) for pattern in listed)

    def refusal(self, what: str, value: str, key: str) -> str:
        listed = getattr(self.policy, key)
        return (f"{what} {value!r} is not allowed by the managed configuration {self.path} "
                f"({key}: {', '.join(listed)}); ask the administrator, or use one of those")

    def mcp_allowed(self, name: str, command: list[str] | None, url: str | None) -> bool:
        if self.policy.mcp is None:
            return True
        candidates = [name, *([command[0], " ".join(command)] if command else []), *([url] if url else [])]
        return any(fnmatchcase(c, p) for c in candidates for p in self.policy.mcp)

    def rules(self) -> list[tuple[str, str, Action]]:
        """(permission, pattern, action) in order: `permission`, then `network`, then `disabled` as denials;
        the permission engine checks them after everything else (permission/managed.py)."""
        found: list[tuple[str, str, Action]] = []
        permission = self.policy.permission
        if isinstance(permission, str):
            found.append(("*", "*", permission))
        for name, value in (permission or {}).items() if isinstance(permission, dict) else []:
            entries = value.items() if isinstance(value, dict) else [("*", value)]
            found += [(name, pattern, action) for pattern, action in entries]
        found += [("network", host, action) for host, action in (self.policy.network or {}).items()]
        found += [(*FEATURES.get(name, (name, "*")), "deny") for name in self.policy.disabled]
        return found


def managed_path(at_start: str | None = None) -> Path | None:
    """The managed file in force: the variable's (as the process started), else the default if it exists."""
    named = AT_START if at_start is None else at_start
    if named:
        return Path(named).expanduser().absolute()
    return DEFAULT_PATH if DEFAULT_PATH.exists() else None


def read_managed(path: Path | None = None) -> Managed | None:
    """Read and validate the managed file; None when there is none.

    Raises:
        ConfigError: the file is named but missing or unreadable, does not parse, or holds a wrong key or value.
    """
    path = managed_path() if path is None else path
    if path is None:
        return None
    if not path.is_file():
        raise ConfigError(path, hint=f"is the managed configuration (${MANAGED_ENV} or {DEFAULT_PATH}) but is not a "
                                     "readable file; nothing runs without it: fix the path or the file")
    layer = read_config_file(path)
    return Managed(path=path, policy=_validate(layer), layer=layer)


def _validate(layer: Layer) -> ManagedPolicy:
    """The file as a `ManagedPolicy`, or every mistake in one `ConfigError` at its line: unknown keys with the
    key meant, wrong values described as the configuration's own are (validate.py)."""
    known = list(ManagedPolicy.model_fields)
    data = layer.data if isinstance(layer.data, dict) else {}
    problems = []
    for key in [k for k in data if k not in known]:
        meant = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
        problems.append(ConfigError(layer.source, line=layer.lines.get((str(key),)), key=str(key),
                                    hint=f"is not a key of the managed configuration"
                                         f"{f' (did you mean {meant[0]}?)' if meant else ''}; known: "
                                         f"{', '.join(known)}"))
    try:
        policy = ManagedPolicy.model_validate({k: v for k, v in data.items() if k in known})
    except ValidationError as exc:
        origins: Origins = {path: (layer.source, line) for path, line in layer.lines.items()}
        problems += error_problems(exc, data, origins)
        policy = None
    if problems or policy is None:
        raise ConfigError.combine(problems)
    return policy


def check_config(managed: Managed, config: Any) -> list[ConfigError]:
    """The models, providers and base URLs of a loaded configuration that the managed lists refuse."""
    policy = managed.policy
    problems: list[ConfigError] = []
    for key in ("model", "small_model"):
        value = getattr(config, key)
        if value:
            problems += _model_problems(managed, value, key)
    for name, agent in config.agent.items():
        if agent.model:
            problems += _model_problems(managed, agent.model, f"agent.{name}.model")
    for pid, provider in config.provider.items():
        if not managed.allowed(policy.providers, pid):
            problems.append(ConfigError(None, key=f"provider.{pid}",
                                        hint=managed.refusal("provider", pid, "providers")))
        if provider.base_url and not managed.allowed(policy.base_urls, provider.base_url):
            problems.append(ConfigError(None, key=f"provider.{pid}.base_url",
                                        hint=managed.refusal("base URL", provider.base_url, "base_urls")))
    return problems


def model_refusal(managed: Managed | None, model_id: str, base_url: str | None = None) -> str | None:
    """Why `model_id` (reached at `base_url`, when its provider sets one) may not be used, or None when the
    managed lists allow it."""
    if managed is None:
        return None
    provider = model_id.partition("/")[0]
    if not managed.allowed(managed.policy.providers, provider):
        return managed.refusal("provider", provider, "providers")
    if not managed.allowed(managed.policy.models, model_id):
        return managed.refusal("model", model_id, "models")
    if base_url and not managed.allowed(managed.policy.base_urls, base_url):
        return managed.refusal("base URL", base_url, "base_urls")
    return None


def _model_problems(managed: Managed, model_id: str, key: str) -> list[ConfigError]:
    why = model_refusal(managed, model_id)
    return [] if why is None else [ConfigError(None, key=key, hint=why)]


def loosening_notices(managed: Managed, merged: dict[str, Any], origins: Any) -> list[str]:
    """What lower layers set that the managed file overrides, said once: `merged` and `origins` as they stand
    before the managed layer is merged."""
    notes: list[str] = []
    strength = {"off": 0, "auto": 1, "required": 2}
    wanted = managed.policy.sandbox
    lower = merged.get("sandbox")
    lower = "off" if lower is False else lower
    if wanted is not None and isinstance(lower, str) and strength.get(lower, 0) < strength[wanted]:
        notes.append(f"{_at(origins, ('sandbox',))}: sandbox: {lower} is not applied: sandbox is managed by "
                     f"{managed.path} ({wanted})")
    approvals = managed.policy.approvals
    if approvals is not None and merged.get("approvals") not in (None, approvals):
        notes.append(f"{_at(origins, ('approvals',))}: approvals: {merged['approvals']} is not applied: approvals is "
                     f"managed by {managed.path} ({approvals})")
    strict = [r for r in managed.rules() if r[2] != "allow"]
    for path, (name, pattern) in _lower_allows(merged):
        for held_name, held_pattern, action in strict:
            if _overlap(name, held_name) and _overlap(pattern, held_pattern):
                notes.append(f"{_at(origins, path)}: {dotted(path)}: allow does not loosen "
                             f"{held_name} {held_pattern!r}: {action}, managed by {managed.path}")
                break
    return notes


def _overlap(one: str, other: str) -> bool:
    """Whether two patterns may match a text in common (judged loosely: this only decides a notice)."""
    return fnmatchcase(one, other) or fnmatchcase(other, one)


def _lower_allows(merged: dict[str, Any]) -> list[tuple[tuple[str, ...], tuple[str, str]]]:
    found: list[tuple[tuple[str, ...], tuple[str, str]]] = []
    scopes: list[tuple[tuple[str, ...], Any]] = [(("permission",), merged.get("permission"))]
    for name, agent in (merged.get("agent") or {}).items():
        if isinstance(agent, dict):
            scopes.append((("agent", str(name), "permission"), agent.get("permission")))
    for prefix, permission in scopes:
        if permission == "allow":
            found.append((prefix, ("*", "*")))
        if not isinstance(permission, dict):
            continue
        for name, value in permission.items():
            entries = value.items() if isinstance(value, dict) else [("*", value)]
            for pattern, action in entries:
                if action == "allow":
                    path = (*prefix, name, pattern) if isinstance(value, dict) else (*prefix, name)
                    found.append((path, (str(name), str(pattern))))
    return found


def _at(origins: Any, path: tuple[str, ...]) -> str:
    source, line = origins.get(path, (None, None))
    return place(source, line)


def filter_mcp(managed: Managed, config: Any) -> tuple[dict[str, Any], list[str]]:
    """The MCP servers the managed list lets start, and a notice for each of the others."""
    kept: dict[str, Any] = {}
    notes: list[str] = []
    for name, server in config.mcp.items():
        if managed.mcp_allowed(name, server.command, server.url):
            kept[name] = server
        else:
            notes.append(f"mcp.{name}: not started: the managed configuration {managed.path} allows only "
                         f"{', '.join(managed.policy.mcp or [])}")
    return kept, notes
