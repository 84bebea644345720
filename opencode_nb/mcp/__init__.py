"""MCP servers' tools for the agents: config entries → clients (connection, restart, timeout) → tools → approval.

`McpServers` (`servers.py`) is what the workspace holds; `%agent mcp` lists its `states()`. The SDK is the
`mcp` distribution; this package imports it absolutely (`from mcp import ...`), which Python resolves to the
SDK, never to this package.
"""

from .client import CallFailed, ServerClient
from .entries import ServerEntry, masked, secret_values, server_entries
from .report import describe
from .servers import APPROVAL_PERMISSION, McpServers, ServerState
from .tool import McpTool, rule_in_force, tool_name

__all__ = ["APPROVAL_PERMISSION", "CallFailed", "McpServers", "McpTool", "ServerClient", "ServerEntry", "ServerState",
           "describe", "masked", "rule_in_force", "secret_values", "server_entries", "tool_name"]
