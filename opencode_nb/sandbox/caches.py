"""Package managers inside the sandbox: caches of their own, and their registries only where a rule allows them.

MCP servers are mostly started by package runners (`uvx mcp-server-fetch`, `npx -y @modelcontextprotocol/…`),
and commands run `pip`, `uv` and `npm`. In the sandbox the person's own caches (`~/.cache/uv`, `~/.npm`,
`~/.cache/pip`, uv's tool folder `~/.local/share/uv/tools`) are read-only or not there at all, and they stay
so: a sandboxed process that could write them could change what the person's own, unconfined, `uvx` runs next.
Measured with uv 0.13 and npm 11: `uvx` stops at once with `Read-only file system … ~/.local/share/uv/tools`,
and `npx` fails on `~/.npm/_cacache`.

So every confined process gets variables (`--setenv`, for every process we start in the sandbox) pointing
the managers at folders of their own under our data dir, bound writable:

    <data_dir>/caches/<project>-<digest>/<user>/{uv,uv-tools,bin,npm,pip,pipx}

`<user>` is `commands` for shell commands and command templates, and `mcp-<server>` for each local MCP
server: a server's cache holds the code it runs at its next start, so nothing else (another server, an
agent's shell command, another project) can write it; what one writes the others do not run.

The registries are hosts like any other (`hosts.py`): reached through the proxy only where a `network` rule
allows them (uv and npm both take the proxy from `HTTPS_PROXY`, which the relay sets; measured with npm 11,
its requests arrive at the proxy as `CONNECT registry.npmjs.org:443`). Where a registry cannot be reached, its
manager is told to work from the cache alone (`UV_OFFLINE=1`, `npm_config_offline=true`), which is what lets a
server whose cache is warm start with no network rule at all. Measured on this machine, cache warm: `uvx
--with 'mcp<2' mcp-server-sqlite` offline starts in about 1 s; not told, it fails after 3 retries in 9-11 s
(no DNS, or the proxy's 403); `npx -y @modelcontextprotocol/server-filesystem` offline starts in about 1 s,
not told it waits on DNS for over 40 s without a word, and behind a refusing proxy fails in 0.6 s. A cold
cache offline fails at once with the manager's own words ("not found in the cache", `ENOTCACHED`), which
`mcp/failure.py` turns into the rule to add. A registry counts as reachable when the rules allow each of its
hosts, or (for a shell command, whose call can put a question to the person) ask about them; a server starting
has nobody to ask.

Which hosts a registry is: PyPI's are `pypi.org` and `files.pythonhosted.org` unless `UV_DEFAULT_INDEX`,
`UV_INDEX_URL` or `PIP_INDEX_URL` names another index (a `file:` index is no host: always reachable); npm's is
`registry.npmjs.org` unless `npm_config_registry` names another. A registry set only in a config file
(`uv.toml`, `.npmrc`) is not seen: its manager goes offline when PyPI's or npm's own hosts are not allowed.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..permission.rules import Rule
from .hosts import deciding

FOLDER = "caches"
"""Under the data dir."""
COMMANDS = "commands"
"""The cache user of shell commands and command templates."""

PYPI_HOSTS = ("pypi.org", "files.pythonhosted.org")
NPM_HOSTS = ("registry.npmjs.org",)
PYPI_INDEX_VARIABLES = ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL")
NPM_REGISTRY_VARIABLES = ("npm_config_registry", "NPM_CONFIG_REGISTRY")

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")

Reachable = Callable[[str], bool]
"""Whether a registry's host can be reached by the process about to start."""


@dataclass(frozen=True)
class Registry:
    """One package registry: the managers that use it, its hosts, and what tells them to use the cache alone."""

    name: str
    hosts: tuple[str, ...]
    offline: tuple[tuple[str, str], ...]


def registries(env: Mapping[str, str] | None = None) -> tuple[Registry, ...]:
    """PyPI (uv; pip has no offline mode that keeps its other indexes) and npm, with the hosts `env` names."""
    env = os.environ if env is None else env
    pypi = _hosts(env, PYPI_INDEX_VARIABLES, PYPI_HOSTS)
    npm = _hosts(env, NPM_REGISTRY_VARIABLES, NPM_HOSTS)
    return (Registry("PyPI", pypi, (("UV_OFFLINE", "1"),)),
            Registry("npm", npm, (("npm_config_offline", "true"), ("NPM_CONFIG_OFFLINE", "true"))))


def _hosts(env: Mapping[str, str], variables: Iterable[str], default: tuple[str, ...]) -> tuple[str, ...]:
    for name in variables:
        url = env.get(name, "").split()[0] if env.get(name, "").strip() else ""
        if url:
            parts = urlsplit(url)
            return (parts.hostname,) if parts.hostname and parts.scheme in ("http", "https") else ()
    return default


def project_folder(data_dir: Path, root: Path) -> Path:
    """The caches of one project's sandboxed processes: a project's processes never share a cache with
    another's."""
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    return data_dir / FOLDER / f"{_UNSAFE.sub('_', root.name) or 'root'}-{digest}"


def user_name(server: str) -> str:
    """The cache user of the local MCP server `server` (any configured name, made a safe folder name)."""
    safe = _UNSAFE.sub("_", server)[:40]
    if safe != server:
        safe += "-" + hashlib.sha256(server.encode()).hexdigest()[:8]
    return f"mcp-{safe}"


@dataclass(frozen=True)
class Caches:
    """The cache folders of one user of the sandbox (`COMMANDS`, or an MCP server's `user_name`)."""

    folder: Path

    def variables(self) -> dict[str, str]:
        """Where each manager keeps its cache and what it installs; the person's own stay untouched."""
        f = self.folder
        npm = str(f / "npm")
        return {
            "UV_CACHE_DIR": str(f / "uv"), "UV_TOOL_DIR": str(f / "uv-tools"), "UV_TOOL_BIN_DIR": str(f / "bin"),
            "PIP_CACHE_DIR": str(f / "pip"),
            "PIPX_HOME": str(f / "pipx"), "PIPX_BIN_DIR": str(f / "bin"),
            "npm_config_cache": npm, "NPM_CONFIG_CACHE": npm,
            "npm_config_update_notifier": "false", "NPM_CONFIG_UPDATE_NOTIFIER": "false",
        }

    def env(self, reachable: Reachable, env: Mapping[str, str] | None = None) -> tuple[tuple[str, str], ...]:
        """The variables a confined process gets: the caches, and offline for each registry it cannot reach."""
        made = self.variables()
        for registry in registries(env):
            if not all(reachable(host) for host in registry.hosts):
                made.update(registry.offline)
        return tuple(made.items())

    def ready(self) -> Path | None:
        """The folder, made if missing (None if it cannot be: the process then runs without it)."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            return self.folder.resolve()
        except OSError:
            return None


def nothing_reachable(_host: str) -> bool:
    """A process with no network: no registry."""
    return False


def everything_reachable(_host: str) -> bool:
    """A process with the machine's network (sandbox-exec where the rules allow every host)."""
    return True


def reachable_by(rules: list[Rule], *, asking: bool) -> Reachable:
    """Whether a registry host is reached under `rules` (`hosts.for_command` already applied): the deciding
    rule allows it, or asks and `asking` (there is a call to put the question to the person through)."""

    def reachable(host: str) -> bool:
        action = deciding(host, 443, rules).action
        return action == "allow" or (asking and action == "ask")

    return reachable


def unreachable(rules: list[Rule], *, asking: bool, env: Mapping[str, str] | None = None) -> list[Registry]:
    """The registries a process run under `rules` cannot reach (for messages)."""
    reachable = reachable_by(rules, asking=asking)
    return [r for r in registries(env) if r.hosts and not all(reachable(h) for h in r.hosts)]
