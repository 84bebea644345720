"""How a local MCP server's process is started: inside the OS sandbox that shell commands run in.

The server is a command like any other (`sandbox/policy.py`): it may write the project, the tool-output
folder and `$TMPDIR/opencode_nb`, the files that steer agents stay read-only, the kernel is out of sight, and it
has no network unless the `network` rules could allow a host; then it gets the proxy that decides host by host
for as long as it runs. Its environment is the kernel's without secrets (`tool_env`) plus the entry's own
`environment`, which is how a person hands a server the one token it needs.

The SDK's `stdio_client` spawns the process and speaks the protocol; it cannot pass a descriptor to the
child, and `bwrap --seccomp FD` reads its filter from one, so a two-line `sh` opens the filter (a file only we
can read, removed once the server is up) on descriptor 3 and execs bubblewrap. The same `sh`, still outside the
sandbox, writes its pid (bubblewrap's, after the exec: the leader of the server's process group) to a file of
ours, so the last check of the protected paths can wait for the whole sandbox to be gone.

The server is a `SandboxedProcess` (`sandbox/treatment.py`) for its whole life: what it makes at a protected
path is moved away after each call, every `WATCH_S` while it runs and once it has gone; it reads outside the
project as the `external_directory` rules it is given allow; it counts as a run in flight for the config guard.

The server's stderr goes to `<data_dir>/mcp/<name>.log` (each start begins it afresh), whose last lines say
why a server failed.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path

from mcp import StdioServerParameters, stdio_client
from mcp.client._transport import TransportStreams

from ..errors import PolicyRefusedError
from ..permission.events import Ask
from ..permission.rules import Rule
from ..sandbox import caches, hosts
from ..sandbox.linux import arch
from ..sandbox.policy import Launch, ShellSandbox
from ..sandbox.protected import QUARANTINE
from ..sandbox.proxy import HostProxy
from ..sandbox.seccomp import program
from ..sandbox.treatment import SandboxedProcess, shown_for
from ..tool.shell.process import tool_env
from .entries import ServerEntry

FILTER_FD = 3
OPEN_FILTER = 'echo $$ >"$1" && exec 3<"$2" && shift 2 && exec "$@"'
SAY_PID = 'echo $$ >"$1" && shift && exec "$@"'

CallerAsk = Callable[[], Ask | None]
"""The `ask` of the tool call the server is serving now, if any: a host its rules say to ask about is put to
the person through that call; with no call running, nobody is asked and the host is refused."""


def log_path(data_dir: Path, name: str) -> Path:
    return data_dir / "mcp" / f"{name}.log"


@contextlib.asynccontextmanager
async def local_streams(entry: ServerEntry, *, sandbox: ShellSandbox, cwd: Path, data_dir: Path,
                        network_rules: Callable[[], list[Rule]], caller_ask: CallerAsk,
                        on_launch: Callable[[Launch], None], read_rules: Callable[[], list[Rule]] = list,
                        on_process: Callable[[SandboxedProcess], None] = lambda _: None,
                        ) -> AsyncIterator[TransportStreams]:
    """The server's message streams, for as long as the block runs; the process is ended on the way out.

    `read_rules` are the `external_directory` rules it reads outside the project by; `on_process` is given
    its `SandboxedProcess` before it starts (a call's end checks through it).

    Raises:
        ToolError: `sandbox: required` and there is no sandbox here.
        OSError: the program could not be started.
    """
    command = list(entry.config.command or [])
    env = server_env(entry)
    launch = await confined_start(entry, sandbox, env, read_rules)
    log = log_path(data_dir, entry.name)
    log.parent.mkdir(parents=True, exist_ok=True)
    async with contextlib.AsyncExitStack() as stack:
        errlog = stack.enter_context(log.open("w", encoding="utf-8"))  # this run's: what a failure quotes
        argv = command
        confined = launch.confinement
        pid_file: Path | None = None
        filter_file: Path | None = None
        socket: Path | None = None
        if confined is not None:
            own = entry.config.environment
            line = " ".join(command)
            rules = hosts.for_command(line, network_rules())
            if hosts.opens(rules) and confined.backend.kind == "bwrap" and arch() is not None:
                proxy = HostProxy(hosts.HostGate(line, network_rules, _asking(caller_ask)))
                socket = await stack.enter_async_context(proxy.serving())
                # Starting, it has no call to ask the person through: a registry only an ask would open is
                # used offline, from the server's cache (`sandbox/caches.py`).
                confined = replace(confined, proxy=proxy).reaching(caches.reachable_by(rules, asking=False), env, own)
            elif hosts.opens(rules) and hosts.allows_every_host(rules):
                # sandbox-exec: no proxy, the network whole or none
                confined = replace(confined, network=True).reaching(caches.everything_reachable, env, own)
            if not confined.network and confined.backend.kind == "bwrap" and arch() is not None:
                filter_file = _filter_file()
                stack.callback(filter_file.unlink, missing_ok=True)
        launch = replace(launch, confinement=confined)
        on_launch(launch)  # with its proxy and caches: what a failure to start is explained from (`failure.py`)
        process = SandboxedProcess(launch, quarantine=data_dir / QUARANTINE)
        if confined is not None:
            argv = process.wrap(command, cwd=cwd, seccomp_fd=FILTER_FD if filter_file else None,
                                proxy_socket=socket)
            pid_file = _private_file("opencode-nb-mcp-pid-")
            stack.callback(pid_file.unlink, missing_ok=True)
            opening = [OPEN_FILTER, "mcp-server", str(pid_file), str(filter_file)] if filter_file is not None \
                else [SAY_PID, "mcp-server", str(pid_file)]
            argv = ["/bin/sh", "-c", *opening, *argv]
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=cwd)
        process.start()
        process.leader = lambda: _pid(pid_file)
        stack.push_async_callback(lambda: process.end(_pid(pid_file)))  # after the process is gone (LIFO)
        on_process(process)
        streams = await stack.enter_async_context(stdio_client(params, errlog=errlog))
        await stack.enter_async_context(process.watching())
        yield streams


def server_env(entry: ServerEntry) -> dict[str, str]:
    """The environment a local server's process is given: the kernel's without secrets (`tool_env`) plus the
    entry's own `environment`."""
    return {**tool_env(), **entry.config.environment}


async def confined_start(entry: ServerEntry, sandbox: ShellSandbox, env: dict[str, str],
                         read_rules: Callable[[], list[Rule]] = list) -> Launch:
    """How the server's process is confined before any network is opened for it: what it sees of the files
    (the `external_directory` rules' folders) and its caches' variables. What the start runs in, and what
    looking for its program runs in (`program.py`), so both see the same files and the same PATH.

    Raises:
        ToolError: `sandbox: required` and there is no sandbox here.
    """
    launch = await sandbox.launch(f"mcp:{entry.name}", tell=False, server=entry.name)
    confined = launch.confinement
    if confined is None:
        return launch
    shown = shown_for(read_rules())
    if shown is not None:
        confined = replace(confined, shown=shown)
    own = entry.config.environment  # a variable the entry sets itself is the person's word
    return replace(launch, confinement=confined.reaching(caches.nothing_reachable, env, own))


def _filter_file() -> Path:
    """The seccomp program in a file only this user can read, for the `sh` that opens it on descriptor 3."""
    machine = arch()
    assert machine is not None  # checked by the caller
    fd, name = tempfile.mkstemp(prefix="opencode-nb-mcp-filter-")
    with os.fdopen(fd, "wb") as out:
        out.write(program(machine, all_sockets=False))
    return Path(name)


def _private_file(prefix: str) -> Path:
    fd, name = tempfile.mkstemp(prefix=prefix)
    os.close(fd)
    return Path(name)


def _pid(path: Path | None) -> int | None:
    """The pid the `sh` wrote: bubblewrap's, the leader of the server's process group."""
    try:
        return int(path.read_text().strip()) if path is not None else None
    except (OSError, ValueError):
        return None


def _asking(caller_ask: CallerAsk) -> Ask:
    async def ask(permission: str, patterns: list[str], always: list[str] | None = None,
                  metadata: dict[str, object] | None = None, *, always_ask: bool = False) -> None:
        current = caller_ask()
        if current is None:
            raise PolicyRefusedError("no tool call of this server was running to ask the person through")
        await current(permission, patterns, always, metadata, always_ask=always_ask)

    return ask


def tail(path: Path, lines: int = 5) -> str:
    """The last lines the server wrote to stderr, for a failure's message."""
    try:
        with path.open("rb") as source:
            source.seek(0, os.SEEK_END)
            size = source.tell()
            source.seek(max(0, size - 4096))
            text = source.read().decode(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])
