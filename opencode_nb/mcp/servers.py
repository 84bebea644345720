"""A workspace's MCP servers: which may start, starting them, and their tools in the tool registry.

When they start: lazily, at the first prompt (`prepare`), in background tasks on the prompt's event loop; the
prompt waits for them at most each server's `timeout` (5 s by default) so its first step can offer their tools,
and a slower server's tools appear at a later step. A server that failed is started again at the next call of
one of its tools. `aclose` (with the workspace) ends them all and waits until their processes are gone.

Who may start: a server from the person's own configuration, at once. One that the project's files define
(`entries.ServerEntry.project`) first asks the person, once, in the session whose prompt would start it
(permission `mcp`, showing what it runs and which file asked for it); "once" or "always" approves that exact
entry for good (`approval.py`), a refusal leaves it off for this workspace. Headless, the unattended policy
answers: only `OPENCODE_NB_PERMISSION=allow` approves. Until approved there is no process at all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import LoadedConfig
from ..errors import ToolError
from ..permission import PermissionService
from ..permission.rules import Rule
from ..sandbox.policy import Launch, ShellSandbox
from ..tool.registry import ToolRegistry
from .approval import Approvals
from .client import ServerClient, Status
from .entries import ServerEntry, server_entries
from .launch import local_streams, log_path, tail
from .remote import remote_openers
from .tool import McpTool, tool_name

APPROVAL_PERMISSION = "mcp"


@dataclass(frozen=True)
class ServerState:
    """One server as `%agent mcp` lists it."""

    entry: ServerEntry
    status: Status
    error: str | None = None
    tools: list[tuple[str, str]] = field(default_factory=list)
    """(our tool id, the server's tool name)."""
    sandbox: str | None = None
    """How a local server's process is confined (`Launch.label`), once it was started."""


class McpServers:
    def __init__(self, loaded: LoadedConfig, *, tools: ToolRegistry, sandbox: ShellSandbox,
                 permissions: PermissionService, data_dir: Path, network_rules: Callable[[], list[Rule]]) -> None:
        self.loaded = loaded
        self.registry = tools
        self.sandbox = sandbox
        self.permissions = permissions
        self.data_dir = data_dir
        self.network_rules = network_rules
        self.entries = {entry.name: entry for entry in server_entries(loaded)}
        self.approvals = Approvals(data_dir)
        self.clients: dict[str, ServerClient] = {}
        self.refused: dict[str, str] = {}
        """Project servers the person (or the policy) did not approve, with why: not asked again here."""
        self._tool_ids: dict[str, list[tuple[str, str]]] = {}
        self._launch: dict[str, Launch] = {}
        self._asking: set[str] = set()

    def __bool__(self) -> bool:
        return bool(self.entries)

    async def prepare(self, session_id: str, agent: str) -> None:
        """Before a prompt: ask about project servers not yet approved, start what may start, and wait (bounded)
        for servers still starting. Never raises: a server that cannot start is listed as failed."""
        starting: list[ServerClient] = []
        for entry in self.entries.values():
            if not entry.config.enabled or entry.name in self.refused:
                continue
            client = self.clients.get(entry.name)
            if client is None:
                if entry.project and not self.approvals.approved(entry) and \
                        not await self._approve(entry, session_id, agent):
                    continue
                client = self.clients[entry.name] = self._client(entry)
            if client.status == "idle" or (client.status == "failed" and not self._tool_ids.get(entry.name)):
                client.start()  # a server whose tools were never listed has no tool whose call would restart it
            if client.status == "starting":
                starting.append(client)
        if starting:
            await asyncio.gather(*(c.started() for c in starting))

    async def _approve(self, entry: ServerEntry, session_id: str, agent: str) -> bool:
        if entry.name in self._asking:
            return False  # another prompt is asking right now
        self._asking.add(entry.name)
        kind = "runs" if entry.config.type == "local" else "connects to"
        try:
            await self.permissions.ask(
                session_id, agent, APPROVAL_PERMISSION, [entry.name], always_ask=True,
                metadata={"server": entry.name, "type": entry.config.type, "target": entry.target,
                          "source": entry.source, "command": entry.target,
                          "where": f"The project's configuration ({entry.source}) defines the MCP server "
                                   f"{entry.name}, which {kind} the following. Approve it once to let it start "
                                   "(a change of the entry asks again):"})
        except ToolError as exc:
            self.refused[entry.name] = str(exc).split(". ")[0]
            return False
        finally:
            self._asking.discard(entry.name)
        self.approvals.approve(entry)
        return True

    def _client(self, entry: ServerEntry) -> ServerClient:
        config = entry.config
        timeouts = {"timeout_s": config.timeout / 1000, "call_timeout_s": config.call_timeout / 1000}
        if config.type == "remote":
            return ServerClient(entry.name, remote_openers(entry), on_tools=self._listed, **timeouts)
        log = log_path(self.data_dir, entry.name)

        def local() -> Any:
            client = self.clients.get(entry.name)
            return local_streams(entry, sandbox=self.sandbox, cwd=self.loaded.root, data_dir=self.data_dir,
                                 network_rules=self.network_rules,
                                 caller_ask=lambda: client.asking if client is not None else None,
                                 on_launch=lambda launch: self._launch.__setitem__(entry.name, launch))

        return ServerClient(entry.name, [local], on_tools=self._listed, describe_failure=lambda: tail(log, 3),
                            **timeouts)

    def _listed(self, client: ServerClient) -> None:
        """Put the server's current tools in the registry, in place of the ones it offered before."""
        for tool_id, _ in self._tool_ids.pop(client.name, []):
            self.registry.unregister(tool_id)
        taken = set(self.registry.ids())
        ids: list[tuple[str, str]] = []
        for tool in client.tools:
            tool_id = base = tool_name(client.name, tool.name)
            n = 2
            while tool_id in taken:
                suffix = f"_{n}"
                tool_id, n = base[:64 - len(suffix)] + suffix, n + 1
            taken.add(tool_id)
            self.registry.register(McpTool(tool_id, client.name, tool, lambda name=client.name: self.clients[name]))
            ids.append((tool_id, tool.name))
        self._tool_ids[client.name] = ids

    def states(self) -> list[ServerState]:
        out: list[ServerState] = []
        for entry in self.entries.values():
            client = self.clients.get(entry.name)
            launch = self._launch.get(entry.name)
            label = launch.label if launch is not None else None
            if not entry.config.enabled:
                out.append(ServerState(entry, "disabled"))
            elif entry.name in self.refused:
                out.append(ServerState(entry, "refused", self.refused[entry.name]))
            elif client is None:
                waiting = entry.project and not self.approvals.approved(entry)
                out.append(ServerState(entry, "waiting" if waiting else "idle"))
            else:
                out.append(ServerState(entry, client.status, client.error, list(self._tool_ids.get(entry.name, [])),
                                       label))
        return out

    def close(self) -> None:
        """Without an event loop to wait on: stop every connection's task (each ends its process on the way)."""
        for client in self.clients.values():
            client.cancel()

    async def aclose(self) -> None:
        await asyncio.gather(*(c.aclose() for c in self.clients.values()), return_exceptions=True)

