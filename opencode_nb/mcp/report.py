"""`%agent mcp` in words: each server, its state and why, its tools and the rule each call meets."""

from __future__ import annotations

from collections.abc import Iterable

from ..permission.rules import Rule
from .servers import ServerState
from .tool import plain_name, renamed_note, rule_in_force, tool_name

STATUS_WORDS = {
    "disabled": "disabled (enabled: false)",
    "waiting": "waiting for your approval: defined by the project's configuration; the next prompt asks",
    "refused": "not approved",
    "idle": "not started yet (starts with the next prompt)",
    "starting": "starting",
    "ready": "ready",
    "failed": "failed",
}


def describe(states: Iterable[ServerState], rules: list[Rule], agent: str) -> str:
    states = list(states)
    if not states:
        return ("No MCP servers are configured. Add one under `mcp:` in opencode.yaml, e.g.\n"
                "  mcp:\n    files: {type: local, command: [npx, -y, \"@modelcontextprotocol/server-filesystem\", .]}")
    lines = [f"MCP servers (rules shown for {agent}):"]
    for state in states:
        entry = state.entry
        words = STATUS_WORDS[state.status]
        if state.error:
            words += f": {state.error}"
        kind = "runs" if entry.config.type == "local" else "connects to"
        where = "project config" if entry.project else "your config"
        lines.append(f"\n{entry.name}  {words}")
        lines.append(f"  {kind} {entry.target}  ({where}: {entry.source or 'unknown'})")
        if state.sandbox is not None:
            lines.append(f"  sandbox: {state.sandbox}")
        for tool_id, name in state.tools:
            lines.append(f"  {tool_id}  ({name}): {rule_in_force(tool_id, rules)}")
            if renamed_note(entry.name, name, tool_id) is not None:
                lines.append(f"    renamed: {plain_name(entry.name, name)} is a built-in permission's name")
            if tool_id != tool_name(entry.name, name):
                lines.append(f"    renamed: another tool could be {tool_name(entry.name, name)}; the end is "
                             "its server's and tool's digest")
    return "\n".join(lines)
