"""Package runners: commands that fetch a server's package before they start it, and how long that may take.

Most MCP servers' READMEs start them through one (`uvx mcp-server-fetch`, `npx -y @modelcontextprotocol/
server-filesystem DIR`). The first start downloads the package and its dependencies into the sandbox's cache
for that server (`sandbox/caches.py`), which the 5 s that OpenCode gives every server does not cover.
Measured on this machine's connection, a whole first prompt with a cold cache: `uvx --with "mcp<2"
mcp-server-sqlite` 9 s, `npx -y @modelcontextprotocol/server-filesystem` 13 s, `uvx mcp-server-fetch` 17 s
(lxml and cryptography alone are 10 MB, and its extractor's `npm install` follows); warm, 2-7 s. So an entry
run by a package runner that sets no `timeout` of its own gets `RUNNER_TIMEOUT_MS`, room for a slow
connection; the first prompt waits for it at most that long, and a failure (a refused registry, an empty cache
offline) ends the wait as soon as the runner gives up.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath

from ..config.schema import McpConfig

RUNNER_TIMEOUT_MS = 60_000
"""The start-up timeout of a server run by a package runner whose entry sets no `timeout`."""

RUNNERS: dict[str, str] = {"uvx": "PyPI", "pipx": "PyPI", "npx": "npm", "bunx": "npm", "pnpx": "npm"}
"""Programs that are package runners whatever follows, and the registry they fetch from."""
SUBCOMMANDS: dict[tuple[str, str], str] = {("uv", "tool"): "PyPI", ("uv", "run"): "PyPI", ("pipx", "run"): "PyPI",
                                           ("npm", "exec"): "npm", ("pnpm", "dlx"): "npm", ("yarn", "dlx"): "npm",
                                           ("bun", "x"): "npm"}
"""Programs that run a package with one of their subcommands (`uv tool run`, `npm exec`, `pnpm dlx`)."""


def package_runner(command: Sequence[str]) -> tuple[str, str] | None:
    """`(runner as written, registry)` when `command` starts a package runner, e.g. `("npx", "npm")`."""
    if not command:
        return None
    program = PurePath(command[0]).name
    if program in RUNNERS:
        return program, RUNNERS[program]
    words = [w for w in command[1:] if not w.startswith("-")][:1]
    if words and (program, words[0]) in SUBCOMMANDS:
        return f"{program} {words[0]}", SUBCOMMANDS[program, words[0]]
    return None


def start_timeout_s(config: McpConfig) -> float:
    """The entry's `timeout` in seconds: as written, or `RUNNER_TIMEOUT_MS` for an unset one run by a runner."""
    if "timeout" not in config.model_fields_set and config.type == "local" and \
            package_runner(config.command or []) is not None:
        return RUNNER_TIMEOUT_MS / 1000
    return config.timeout / 1000
