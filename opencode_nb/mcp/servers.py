"""A workspace's MCP servers: which may start, starting them, and their tools in the tool registry.

When they start: lazily, at the first prompt (`prepare`), in background tasks on the prompt's event loop; the
prompt waits for them at most each server's `timeout` (5 s by default, 60 s for one a package runner such as
`uvx` or `npx` starts: `runners.py`) so its first step can offer their tools, and a slower server's tools appear
at a later step. Why a server failed is said by `failure.py`, from what its launch saw, in `%agent mcp` and on
the card of a call of its tools (`ToolRegistry.unavailable` where it never listed them). A server that failed is
started again at the next call of one of its tools. `aclose` (with the workspace) ends them all and waits until
their processes are gone.

Who may start: a server from the person's own configuration, at once. One that the project's files define
(`entries.ServerEntry.project`) first asks the person, once, in the session whose prompt would start it
(permission `mcp`, showing what it runs and which file asked for it); "once" or "always" approves that exact
entry, with the project files its command runs as they are (`code.py`), for good (`approval.py`); a refusal
leaves it off for this workspace. Every start checks the files again, a restart after a crash included: changed
files refuse the start and the next prompt asks again, naming them. Headless, the unattended policy answers:
only `OPENCODE_NB_PERMISSION=allow` approves. Until approved there is no process at all.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config.load import LoadedConfig
from ..errors import PolicyRefusedError, ToolError
from ..permission.rules import Rule
from ..permission.service import PermissionService
from ..sandbox.policy import Launch, ShellSandbox
from ..sandbox.treatment import SandboxedProcess
from ..tool.registry import ToolRegistry
from . import failure
from .approval import Approvals
from .client import ServerClient, Stage, Status
from .code import ServerCode
from .entries import ServerEntry, server_entries
from .launch import confined_start, local_streams, log_path, server_env
from .program import missing_program_confined
from .remote import remote_openers
from .runners import start_timeout_s
from .tool import McpTool, could_collide, distinct_name, renamed_note, tool_name

APPROVAL_PERMISSION = "mcp"

PROMPT_NOTE_START = "(MCP: "
"""How the note a prompt carries about a server that could not start begins: the card shows it to the person,
and the model reads it beside the prompt."""


def prompt_note(why: str) -> str:
    """The note of the prompt that needed a server which could not start (`why` begins in lower case)."""
    return f"{PROMPT_NOTE_START}{why[:1].upper()}{why[1:].rstrip('.')}. Its tools are not offered in this prompt.)"


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
                 permissions: PermissionService, data_dir: Path, network_rules: Callable[[], list[Rule]],
                 read_rules: Callable[[], list[Rule]] = list) -> None:
        self.loaded = loaded
        self.registry = tools
        self.sandbox = sandbox
        self.permissions = permissions
        self.data_dir = data_dir
        self.network_rules = network_rules
        self.read_rules = read_rules
        """The `external_directory` rules local servers read outside the project by (`sandbox/treatment.py`)."""
        self.entries = {entry.name: entry for entry in server_entries(loaded)}
        self.approvals = Approvals(data_dir)
        self.clients: dict[str, ServerClient] = {}
        self.refused: dict[str, str] = {}
        """Project servers the person (or the policy) did not approve, with why: not asked again here."""
        self._tool_ids: dict[str, list[tuple[str, str]]] = {}
        self._renamed: dict[str, list[str]] = {}
        self._launch: dict[str, Launch] = {}
        self._processes: dict[str, SandboxedProcess] = {}
        self._asking: set[str] = set()
        self.missing: dict[str, str] = {}
        """Local servers whose program is not there, with what to install: neither asked about nor started."""

    def __bool__(self) -> bool:
        return bool(self.entries)

    async def prepare(self, session_id: str, agent: str) -> list[str]:
        """Before a prompt: ask about project servers not yet approved, start what may start, and wait (bounded)
        for servers still starting. Never raises: a server that cannot start is listed as failed, and the
        returned notes (`prompt_note`) say why, for the prompt that needed it.

        A server whose program is not installed is said to be missing before anybody is asked to approve it:
        an approval would let nothing start.

        First, what running servers made at protected paths since their last check is moved away: the prompt
        is about to read the instructions, skills and agents (`sandbox/treatment.py`)."""
        for process in self._processes.values():
            process.check()
        starting: list[ServerClient] = []
        tried: list[str] = []
        for entry in self.entries.values():
            if not entry.config.enabled or entry.name in self.refused:
                continue
            client = self.clients.get(entry.name)
            if (client is None or client.status in ("idle", "failed")) and await self._program_missing(entry):
                tried.append(entry.name)
                continue
            if entry.project and (client is None or client.status in ("idle", "failed")):  # about to start
                code = await asyncio.to_thread(entry.code, self.loaded.root)
                if not self.approvals.approved(entry, code) and not await self._approve(entry, session_id, agent,
                                                                                        code):
                    continue
            if client is None:
                client = self.clients[entry.name] = self._client(entry)
            if client.status == "idle" or (client.status == "failed" and not self._tool_ids.get(entry.name)):
                client.start()  # a server whose tools were never listed has no tool whose call would restart it
                tried.append(entry.name)
            if client.status == "starting":
                starting.append(client)
        if starting:
            await asyncio.gather(*(c.started() for c in starting))
        self._say_missing()
        return [prompt_note(why) for name in tried if (why := self._why_not_started(name)) is not None]

    def _folder(self, entry: ServerEntry) -> Path:
        return entry.folder or self.loaded.root

    async def _program_missing(self, entry: ServerEntry) -> bool:
        """Look for a local server's program again (it may have been installed meanwhile), as its process would
        find it: in its sandbox, with its environment; record why not."""
        env = server_env(entry)
        confined = None
        if entry.config.type == "local":
            with contextlib.suppress(ToolError):  # no sandbox where one is required: the start says so
                confined = (await confined_start(entry, self.sandbox, env, self.read_rules)).confinement
        why = await missing_program_confined(entry, self._folder(entry), env, confined)
        if why is None:
            self.missing.pop(entry.name, None)
            return False
        self.missing[entry.name] = why
        return True

    def _why_not_started(self, name: str) -> str | None:
        if name in self.missing:
            return self.missing[name]
        client = self.clients.get(name)
        if client is None or client.status != "failed" or self._tool_ids.get(name):
            return None
        return f"the MCP server {name} did not start: {client.error}"

    def _say_missing(self) -> None:
        """A server whose tools were never listed leaves why where a call of one of its tools finds it
        (`ToolRegistry.unavailable`): on that call's card and to the model, not only in `%agent mcp`."""
        for entry in self.entries.values():
            prefix = tool_name(entry.name, "")
            client = self.clients.get(entry.name)
            if entry.name in self.missing and not self._tool_ids.get(entry.name):
                self.registry.unavailable[prefix] = self.missing[entry.name]
            elif client is None or self._tool_ids.get(entry.name):
                self.registry.unavailable.pop(prefix, None)
            elif client.status == "failed":
                self.registry.unavailable[prefix] = f"the MCP server {entry.name} did not start: {client.error}"
            elif client.status == "starting":
                self.registry.unavailable[prefix] = (f"the MCP server {entry.name} is still starting (a package "
                                                     "runner may be downloading it); its tools are offered once "
                                                     "it has listed them")

    async def _approve(self, entry: ServerEntry, session_id: str, agent: str, code: ServerCode) -> bool:
        if entry.name in self._asking:
            return False  # another prompt is asking right now
        self._asking.add(entry.name)
        kind = "runs" if entry.config.type == "local" else "connects to"
        changed = self.approvals.changes(entry, code)
        why = (f"The files the MCP server {entry.name} runs changed since you approved it ({'; '.join(changed)}). "
               if changed else f"The project's configuration ({entry.source}) defines the MCP server {entry.name}. ")
        try:
            await self.permissions.ask(
                session_id, agent, APPROVAL_PERMISSION, [entry.name], always_ask=True,
                metadata={"server": entry.name, "type": entry.config.type, "target": entry.target,
                          "source": entry.source, "command": entry.target, "files": sorted(code.files),
                          "changed": changed,
                          "where": f"{why}It {kind} the following. Approve it once to let it start (a change of "
                                   "the entry or of the project files it runs asks again):"})
        except ToolError as exc:
            self.refused[entry.name] = str(exc).split(". ")[0]
            return False
        finally:
            self._asking.discard(entry.name)
        self.approvals.approve(entry, code)
        return True

    def _client(self, entry: ServerEntry) -> ServerClient:
        config = entry.config
        timeout_s, call_timeout_s = start_timeout_s(config), config.call_timeout / 1000
        if config.type == "remote":
            return ServerClient(entry.name, remote_openers(entry), on_tools=self._listed, timeout_s=timeout_s,
                                call_timeout_s=call_timeout_s)
        log = log_path(self.data_dir, entry.name)

        @contextlib.asynccontextmanager
        async def local() -> AsyncIterator[Any]:
            if entry.project:  # every start, restarts included: the files may have changed since the approval
                code = await asyncio.to_thread(entry.code, self.loaded.root)
                if not self.approvals.approved(entry, code):
                    changed = "; ".join(self.approvals.changes(entry, code)) or "not approved"
                    raise PolicyRefusedError(f"the project files it runs changed since the person approved it "
                                             f"({changed}); the next prompt asks the person again")
            client = self.clients.get(entry.name)
            async with local_streams(entry, sandbox=self.sandbox, cwd=self._folder(entry), data_dir=self.data_dir,
                                     network_rules=self.network_rules,
                                     caller_ask=lambda: client.asking if client is not None else None,
                                     on_launch=lambda launch: self._launch.__setitem__(entry.name, launch),
                                     read_rules=self.read_rules,
                                     on_process=lambda process: self._held(entry.name, process),
                                     ) as streams:
                yield streams

        def explain(reason: str, stage: Stage) -> str:
            return failure.explain(reason, stage, command=config.command or [], launch=self._launch.get(entry.name),
                                   log=log, timeout_s=timeout_s)

        return ServerClient(entry.name, [local], on_tools=self._listed, explain_failure=explain,
                            call_notes=failure.CallNotes(lambda: self._launch.get(entry.name), log),
                            timeout_s=timeout_s, call_timeout_s=call_timeout_s)

    def _held(self, name: str, process: SandboxedProcess) -> None:
        """A local server's process, held to the treatment: stopped for a breach, its card says why and the
        next call starts it afresh."""
        self._processes[name] = process
        process.on_stop = lambda why: self.clients[name].drop(f"stopped: it broke the sandbox's protected paths "
                                                              f"({why})")

    def _listed(self, client: ServerClient) -> None:
        """Put the server's current tools in the registry, in place of the ones it offered before."""
        self.registry.unavailable.pop(tool_name(client.name, ""), None)
        for tool_id, _ in self._tool_ids.pop(client.name, []):
            self.registry.unregister(tool_id)
        taken = set(self.registry.ids())
        ids: list[tuple[str, str]] = []
        renamed: list[str] = []
        own = Counter(tool_name(client.name, tool.name) for tool in client.tools)
        server = client.name  # each tool finds the server's client by name when called: a restart replaces it
        for tool in client.tools:
            # Never "the first to list keeps the name, the next gets `_2`": that depends on start order, and an
            # "always" given to one server's tool would carry to another's on the next start.
            tool_id = base = tool_name(client.name, tool.name)
            if own[base] > 1 or could_collide(client.name, tool.name, self.entries) or base in taken:
                tool_id = distinct_name(client.name, tool.name)
                if tool_id in taken:
                    renamed.append(f"MCP server {client.name}: its tool {tool.name} is not offered: its name "
                                   f"{tool_id} is taken by another tool. Rename the server in the config.")
                    continue
                renamed.append(f"MCP server {client.name}: its tool {tool.name} is offered as {tool_id}, not "
                               f"{base}: another tool could have that name. Rules and \"always\" for it name "
                               f"{tool_id}.")
            taken.add(tool_id)
            note = renamed_note(client.name, tool.name, tool_id)
            if note is not None:
                renamed.append(note)
            self.registry.register(McpTool(tool_id, server, tool, lambda: self.clients[server],
                                           process=lambda: self._processes.get(server)))
            ids.append((tool_id, tool.name))
        self._tool_ids[client.name] = ids
        self._renamed[client.name] = renamed

    @property
    def warnings(self) -> list[str]:
        """What the person should know about the servers' tools: those renamed off a built-in permission's name."""
        return [note for notes in self._renamed.values() for note in notes]

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
            elif entry.name in self.missing and (client is None or client.status in ("idle", "failed")):
                out.append(ServerState(entry, "failed", self.missing[entry.name]))
            elif client is None:
                waiting = entry.project and not self.approvals.approved(entry, entry.code(self.loaded.root))
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

