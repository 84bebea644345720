"""MCP servers' tools for the agents: config entries → clients (connection, restart, timeout) → tools → approval.

`McpServers` (`servers.py`) is what the workspace holds; `%agent mcp` lists its `states()`. The SDK is the
`mcp` distribution; this package imports it absolutely (`from mcp import ...`), which Python resolves to the
SDK, never to this package.
"""

from .entries import masked, secret_values, server_entries
from .tool import rule_in_force, tool_name

__all__ = ["masked", "rule_in_force", "secret_values", "server_entries", "tool_name"]
