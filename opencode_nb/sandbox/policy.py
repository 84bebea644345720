"""The OS sandbox behind the permission rules: what a shell command may write, and whether it has a network.

Rules decide from what a command says; the sandbox decides from what it does. With it on, a command the
rules let through (or a trick that slipped past their patterns) still cannot write outside the project,
our tool-output folder, `$TMPDIR/opencode_nb` and the package managers' caches of its own (`caches.py`, named
by variables set in the sandbox), cannot reach the network, cannot see or signal the kernel, and sees
nothing of our data dirs but its own folders there (`private.py`), wherever they lie. The
workspace's `sandbox` setting chooses what happens when no sandbox exists here:

    off        commands run unconfined; nothing is said
    auto       confined where possible; elsewhere unconfined, and the first command of each session
               says so once, on its tool card
    required   confined, or not run at all: the tool fails and says how to get a sandbox

Inside the project, the files that steer the agents or run code later stay read-only (`protected.py`); and
where the caller's `external_directory` rules do not allow reading outside the project, the command sees
only the project, the system's folders and what the rules allow (`readable.py`).

Linux uses bubblewrap (`bwrap.py`), macOS `sandbox-exec` (`seatbelt.py`); other systems have none.
Whether the sandbox works is found out once per process (a probe of a few milliseconds) and cached.
`OPENCODE_NB_BWRAP` in the workspace's environment names the bwrap binary to use; pointing it at a
missing file is how to see, or test, what a machine without bubblewrap does.

A confined command never has the machine's network. Where its `network` rules could allow some host
(`hosts.py`: patterns are host names; a pattern with a space matches the command line and then
stands for every host), bubblewrap's private network namespace gets a relay on its loopback
(`sandbox/relay.py`) and the command `HTTP_PROXY`/`HTTPS_PROXY` pointing there; the relay carries each
connection to a proxy in our event loop (`sandbox/proxy.py`), which asks the rules about each new host and
refuses the ones they do not allow with a 403. Anything that ignores the proxy (raw TCP, UDP, DNS) has no
route. Under `sandbox-exec` there is no proxy: the network is open only when the rules allow every host.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Literal

from ..config.schema import SandboxMode
from ..errors import ToolError
from ..permission.events import Ask
from ..permission.rules import Grant, Rule
from . import bwrap, hosts, private, relay, seatbelt
from .caches import COMMANDS, Caches, Reachable, everything_reachable, nothing_reachable, reachable_by, user_name
from .linux import arch
from .protected import Guard, Protected
from .proxy import HostProxy

PROBE_TIMEOUT_S = 10.0
BWRAP_ENV = "OPENCODE_NB_BWRAP"
"""Names the bwrap binary (default: `bwrap` on PATH); a missing path means "no sandbox here"."""

NETWORK_TROUBLE = re.compile(
    r"Could not resolve host|Temporary failure in name resolution|Name or service not known|"
    r"Network is unreachable|No address associated with hostname|nodename nor servname|getaddrinfo failed|"
    r"Failed to establish a new connection|ENETUNREACH|EAI_AGAIN|ENOTFOUND|unable to access '[^']*': Could not|"
    r"Failed to connect to|Couldn't connect to server|Connection refused|ECONNREFUSED|"
    r"because the network was disabled|ENOTCACHED"
)
"""How tools say they found no network; seeing one after a sandboxed run means the sandbox was the cause. The
last two are uv's and npm's words when they were told to work offline (`caches.py`): no rule allows their
registry."""


@dataclass(frozen=True)
class Backend:
    kind: Literal["bwrap", "sandbox-exec"]
    binary: str


@dataclass(frozen=True)
class Confinement:
    """How one command is confined: the sandbox program, what it may write, and whether it has a network."""

    backend: Backend
    writable: tuple[Path, ...]
    network: bool = False
    """The machine's network, whole: what sandbox-exec gets where the rules allow every host (it has no proxy)."""
    proxy: HostProxy | None = field(default=None, compare=False)
    """Where the rules may allow some host (bubblewrap): the proxy that decides host by host."""
    protected: tuple[Path, ...] = ()
    """The files that steer agents or run code later (`protected.py`): read-only even where writable."""
    shown: tuple[Path, ...] | None = None
    """None: the whole file system is readable. Else reads outside the project are not allowed, and only the
    system's folders, the Python installation, the writable folders and these folders are there."""
    caches: Caches | None = None
    """The package managers' cache folders of this process (`caches.py`), among `writable`."""
    env: tuple[tuple[str, str], ...] = ()
    """Variables set inside the sandbox over the process's environment: where `caches` are, and which
    registries to use offline; `reaching` sets them for the network the process gets."""

    def reaching(self, reachable: Reachable, env: Mapping[str, str] | None = None,
                 keep: Iterable[str] = ()) -> Confinement:
        """This confinement with the caches' variables for a process that reaches the registry hosts
        `reachable` says it does; `env` is the process's environment (which registries it uses), and the
        variables named in `keep` are left as the process is given them (a server's own `environment`)."""
        if self.caches is None:
            return self
        kept = set(keep)
        return replace(self, env=tuple((k, v) for k, v in self.caches.env(reachable, env) if k not in kept))

    def guard(self) -> Guard:
        """The protected paths as they are now; take it right before `wrap`, check it after the command."""
        return Guard.taken(self.protected, self.writable)

    def wrap(self, argv: Sequence[str], *, cwd: Path, seccomp_fd: int | None = None,
             guard: Guard | None = None, proxy_socket: Path | None = None) -> list[str]:
        """`argv` run inside the sandbox, starting in `cwd`; `seccomp_fd` (from `filter_descriptor`) must be
        passed to the process; `guard` (from `guard()`) is what is kept read-only. With `proxy_socket` (where
        `proxy` serves) the command runs behind the relay, which puts it under the filter instead of bwrap."""
        if self.backend.kind == "bwrap":
            readable: list[Path] = []
            if proxy_socket is not None and seccomp_fd is not None:
                readable = [Path(relay.__file__).resolve(), proxy_socket]
                argv = relay.relay_argv(sys.executable, proxy_socket, seccomp_fd, argv)
                seccomp_fd = None
            prefix = bwrap.bwrap_args(self.backend.binary, writable=self.writable, network=self.network, cwd=cwd,
                                      seccomp_fd=seccomp_fd, guard=guard, shown=self.shown, readable=readable,
                                      env=self.env)
        else:
            prefix = seatbelt.sandbox_exec_args(self.backend.binary, writable=self.writable, network=self.network,
                                                protected=self.protected)
            if self.env:
                prefix += ["/usr/bin/env", *(f"{name}={value}" for name, value in self.env)]
        return [*prefix, *argv]


    def filter_descriptor(self) -> int | None:
        """Without the machine's network, the seccomp program that refuses Unix sockets, ready for `bwrap
        --seccomp` or the relay; None where there is no such filter (sandbox-exec, an unknown architecture)."""
        from .linux import arch
        from .seccomp import program_descriptor

        machine = arch()
        if self.network or self.backend.kind != "bwrap" or machine is None:
            return None
        return program_descriptor(machine, all_sockets=False)


@dataclass(frozen=True)
class Launch:
    """How one command will run; `notes` adds what its result should say about that."""

    confinement: Confinement | None = None
    note: str | None = None
    """Said once per session where commands run unconfined (`auto` without a sandbox): to the person, on the
    command's card (its `sandbox_note` metadata), not to the model in the output."""
    alive: Callable[[], AbstractContextManager[object]] | None = field(default=None, compare=False)
    """Held open while the process runs (`treatment.SandboxedProcess`): the config guard's record of a run in
    flight, so a config change made meanwhile is judged as an agent's."""

    @property
    def label(self) -> str:
        """For the tool card's metadata: the sandbox used, with `+network`, or `none`."""
        if self.confinement is None:
            return "none"
        confined = self.confinement
        return confined.backend.kind + ("+network" if confined.network or confined.proxy is not None else "")

    def notes(self, output: str) -> str:
        """Text to append to a command's result: why a missing path or a network failure happened."""
        said: list[str] = []
        confined = self.confinement
        if confined is not None and confined.shown is not None and "No such file or directory" in output:
            said.append("(This command ran in the OS sandbox, which shows it only the project, the system's "
                        "folders and the folders the `external_directory` rules allow: other paths outside the "
                        "project are not there. If it needs one, name the path in the command so the person "
                        "can allow it, or ask the person to allow the folder.)")
        if confined is not None and not confined.network:
            said += hosts.network_notes(confined.proxy, output, trouble=bool(NETWORK_TROUBLE.search(output)))
        return "".join(f"\n\n{text}" for text in said)


_found: dict[tuple[str | None, str], Backend | str] = {}


def find_backend(binary: str | None = None, platform: str = sys.platform) -> Backend | str:
    """The sandbox this machine offers, or why there is none. Probed once per process (and binary).

    Args:
        binary: the bwrap to use (`OPENCODE_NB_BWRAP`); None looks for `bwrap` on PATH.
    """
    key = (binary or None, platform)
    if key not in _found:
        _found[key] = _find(binary, platform)
    return _found[key]


async def find_backend_async(binary: str | None = None) -> Backend | str:
    """`find_backend` without blocking the event loop on the first, probing, call."""
    key = (binary or None, sys.platform)
    if key in _found:
        return _found[key]
    return await asyncio.to_thread(find_backend, binary)


def _find(binary: str | None, platform: str) -> Backend | str:
    import shutil

    binary = binary or None
    if platform.startswith("linux"):
        path = binary or shutil.which("bwrap")
        if path is None:
            return "bubblewrap (bwrap) is not installed"
        if binary is not None and not Path(binary).is_file():
            return f"{BWRAP_ENV} names {binary}, which does not exist"
        reason = _probe(path, bwrap.probe_command(path), "cannot create namespaces here")
        return reason if reason is not None else Backend("bwrap", path)
    if platform == "darwin":
        path = seatbelt.find()
        if path is None:
            return "sandbox-exec is missing"
        reason = _probe(path, seatbelt.probe_command(path), "refused the profile")
        return reason if reason is not None else Backend("sandbox-exec", path)
    return f"there is no OS sandbox for shell commands on {platform}"


def _probe(binary: str, command: list[str], refused: str) -> str | None:
    """None when the sandbox ran `command` (it confines `true`); else why not, in the sandbox's own words."""
    if not os.access(binary, os.X_OK):
        return f"{binary} is not an executable file"
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT_S,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{binary} could not be run: {exc}"
    if done.returncode == 0:
        return None
    said = done.stderr.decode(errors="replace").strip().splitlines()
    return f"{binary} {refused}: {said[-1] if said else f'exit status {done.returncode}'}"


def _install_hint() -> str:
    if sys.platform == "darwin":
        return "macOS's /usr/bin/sandbox-exec must be present and working"
    return "install bubblewrap (`apt-get install bubblewrap`, `dnf install bubblewrap`)"


class ShellSandbox:
    """One workspace's sandbox setting, what its commands may write, and which sessions were told there is none.

    Args:
        mode: the `sandbox` setting.
        writable: the project root, the tool-output folder and the shared temp folder; created if missing.
        binary: `OPENCODE_NB_BWRAP` from the workspace's environment, if set.
        caches: the project's folder of package managers' caches (`caches.project_folder`); None: none.
    """

    def __init__(self, mode: SandboxMode, *, writable: Sequence[Path], binary: str | None = None,
                 protected: Protected | None = None,
                 alive: Callable[[str], AbstractContextManager[object]] | None = None,
                 caches: Path | None = None) -> None:
        self.mode = mode
        self.caches = caches
        self.alive = alive
        """Given a label (the session, `mcp:<server>`), the config guard's record of a run in flight
        (`ConfigGuard.running`): every process this sandbox launches holds one while it lives."""
        self.writable = tuple(writable)
        self.protected = protected
        self.binary = binary or None
        self._told: set[str] = set()

    async def launch(self, session_id: str, *, tell: bool = True, server: str | None = None) -> Launch:
        """How the next command of `session_id` runs (without network; `prepare` may open it).

        `tell=False` leaves the no-sandbox note for a later command whose result a person will see. `server`
        names the local MCP server being started: it gets package caches of its own (`caches.py`).

        Raises:
            ToolError: `sandbox: required` and there is no working sandbox here; nothing may run.
        """
        made = await self._launch(session_id, tell=tell, server=server)
        return made if self.alive is None else replace(made, alive=partial(self.alive, session_id))

    async def _launch(self, session_id: str, *, tell: bool, server: str | None = None) -> Launch:
        if self.mode == "off":
            return Launch()
        found = await find_backend_async(self.binary)
        if isinstance(found, Backend):
            kept = tuple(self.protected.paths()) if self.protected is not None else ()
            writable, caches = self._writable(), None
            if self.caches is not None:
                caches = Caches(self.caches / (COMMANDS if server is None else user_name(server)))
                folder = caches.ready()
                # the real path: the one bound, and so the one there when reads outside are not allowed
                caches, writable = (None, writable) if folder is None else (Caches(folder), (*writable, folder))
            clash = private.equal_to(writable)
            if clash:
                raise ToolError(
                    f"Not run: the data dir {clash[0]} is also a folder commands may write (the project), so the "
                    "sandbox cannot keep the checkpoint store, the session database and the approvals out of "
                    f"their reach. Set {private.DATA_DIR_ENV} (or the workspace's `data_dir`) to a folder other "
                    "than the project. Tell the person; retrying will not help.")
            confined = Confinement(found, writable, protected=kept, caches=caches)
            return Launch(confined.reaching(nothing_reachable))
        if self.mode == "required":
            raise ToolError(
                f"Not run: this workspace requires an OS sandbox for shell commands (`sandbox: required`) and "
                f"there is none here: {found}. To get one, {_install_hint()}; or set `sandbox: auto` in the "
                "config to run commands without one. Tell the person; retrying will not help.")
        if session_id in self._told or not tell:
            return Launch()
        self._told.add(session_id)
        return Launch(note=f"Shell commands run without an OS sandbox here: {found}. Only the permission rules "
                           f"stand between them and this machine. To confine them, {_install_hint()}; "
                           "`sandbox: off` in the config silences this note.")

    def _writable(self) -> tuple[Path, ...]:
        kept: list[Path] = []
        for folder in self.writable:
            try:
                folder.mkdir(parents=True, exist_ok=True)
                kept.append(folder.resolve())
            except OSError:
                continue
        return tuple(kept)


@dataclass(frozen=True)
class SandboxCall:
    """The workspace's sandbox as one tool call sees it: the setting, the session, the caller's network rules."""

    policy: ShellSandbox
    session_id: str
    network_rules: Callable[[], list[Rule]] = field(default=list)
    """The calling agent's rules naming `network`, then its "always" grants for it (read at call time)."""
    tell: bool = True
    """Whether this call's result can carry the once-per-session note that there is no sandbox."""

    async def prepare(self, command: str, ask: Ask, *, shown: Sequence[Path] | None = None) -> Launch:
        """How `command` runs: confined or not, and behind a proxy when its `network` rules could allow a host
        (the proxy then asks `ask` about each host a rule says ask for, while the command runs).

        A refused host is not an error: the proxy answers it with a 403, and the result says which hosts were
        refused and how to allow them. `shown` (from `readable.shown_outside`): None when reads outside the
        project are allowed, else the only outside folders the command may read.

        Raises:
            ToolError: no sandbox and `sandbox: required`.
        """
        launch = await self.policy.launch(self.session_id, tell=self.tell)
        confined = launch.confinement
        if confined is None:
            return launch
        if shown is not None:
            confined = replace(confined, shown=tuple(shown))
            launch = replace(launch, confinement=confined)
        rules = hosts.for_command(command, self.network_rules())
        if not hosts.opens(rules):
            return launch
        if confined.backend.kind != "bwrap" or arch() is None:  # no proxy without the relay and its filter
            if hosts.allows_every_host(rules):
                return replace(launch, confinement=replace(confined, network=True).reaching(everything_reachable))
            return launch
        gate = hosts.HostGate(command, self.network_rules, ask)
        opened = replace(confined, proxy=HostProxy(gate)).reaching(reachable_by(rules, asking=True))
        return replace(launch, confinement=opened)


def caller_network_rules(ruleset: Iterable[Rule], grants: Iterable[Grant], agent: str) -> list[Rule]:
    """An agent's `network` rules followed by the "always" grants it was given, in the order they decide."""
    return [*(r for r in ruleset if r.permission == "network"),
            *(g.rule() for g in grants if g.agent == agent and g.permission == "network")]

