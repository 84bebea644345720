"""Every process we start for the agents gets the sandbox's whole treatment, through one door.

The launchers (the bash tool and command templates through `tool/shell/process.py`'s `ShellRun`, local MCP
servers through `mcp/launch.py`, and whatever starts a process for an agent next) each make a
`SandboxedProcess` from the `Launch` the workspace's `ShellSandbox` gave them, wrap the argv with it, `start`
it just before the process starts and `end` it once the process is gone. Between the two the process has:

- **protected paths** (`protected.py`): the ones that exist are bound read-only. One that does not exist
  cannot be bound without a mount point in the person's project: measured with bubblewrap 0.8, `--ro-bind
  /dev/null proj/AGENTS.md` over the writable project leaves an empty read-only `AGENTS.md` on the host,
  still there after the sandbox has gone (an empty `opencode.json` would no longer parse, a `.git` made for
  `.git/hooks` would turn the project into a repository; a missing `.git/hooks` under a real `.git` is the
  exception, sealed by an empty read-only tmpfs, `protected.sealable`). So what appears there is moved to quarantine by
  `check`: after each call a server answers, every `WATCH_S` for as long as the process lives (a server
  outlives its calls and may write whenever it likes), and once more at the end, when nothing of its
  sandbox can write any more (`end` waits for the process group, and the PID namespace ends with it).
- **reads by the `external_directory` rules** (`readable.py`): the launcher gives the rules the process runs
  under; where they deny reading outside, the process sees only the project, the system and what they allow.
- **redaction** of what comes back: before it starts, the values of the secret files it can read outside
  the project (`HOME_SECRETS`: the home's keys and password files) are learned, so whatever it prints of
  them is redacted wherever the text goes (`secrets`); a private key in what it returns is learned from the
  text itself (`learn_keys`), wherever it was read from.
- **alive**: from `start` to `end` it counts as a run in flight for the config guard (`config/guard.py`,
  through the `alive` the workspace gives `ShellSandbox`), so a configuration change that arrives while it
  lives is judged as an agent's, even when no prompt is running. This holds for unconfined processes too
  (`sandbox: off`, or `auto` where there is no sandbox), which can write every config file.

What does not hold: between two checks (at most `WATCH_S`) a file a server made is there, and something that
reads it at that moment (a prompt starting) sees it; the config guard still judges config files. A file the
person makes by hand at a missing protected path while a local server runs is moved away as the server's
would be (it is in the quarantine folder); a file tool's permitted write is not, and from then on that
path is the process's to change, as the sandbox started before the file existed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from .. import secrets
from ..permission.rules import Grant, Rule, as_ruleset
from . import protected
from .policy import Confinement, Launch
from .protected import Guard
from .readable import PERMISSION, shown_outside

log = logging.getLogger(__name__)

__all__ = ["HOME_SECRETS", "WATCH_S", "SandboxedProcess", "group_alive", "learn_keys", "learn_reachable",
           "read_rules", "shown_for"]

WATCH_S = 0.5
"""How often the protected paths of a living process are looked at: a few `lstat`s each time."""
POLL_S = 0.05
HOME_SECRETS = ("", ".ssh", ".aws")
"""Folders of the home whose secret files (`secrets.is_secret_file`: `id_*`, `.netrc`, `.pgpass`,
`credentials`, `.env`, ...) are learned before a process that may read them starts."""
_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----")


def read_rules(ruleset: Iterable[Rule], grants: Iterable[Grant] = (), agent: str | None = None) -> list[Rule]:
    """The rules that decide a caller's `external_directory`, its "always" grants last (what `shown_outside`
    takes); a grant counts for exactly the permission it was given at, as `PermissionService` counts it."""
    return [*as_ruleset(ruleset).rules_for(PERMISSION),
            *(g.rule() for g in grants if g.agent == agent and g.permission == PERMISSION)]


def shown_for(rules: Iterable[Rule], approved: Sequence[Path] = ()) -> tuple[Path, ...] | None:
    """What a process run under `rules` may read outside the project (`readable.shown_outside`): None for
    everything. Every launcher asks here, so one place decides it for all of them."""
    return shown_outside(rules, approved)


class SandboxedProcess:
    """One process we start, held to the sandbox's treatment from `start` to `end` (see the module docstring).

    Args:
        launch: how it runs (`ShellSandbox.launch`, `SandboxCall.prepare`); unconfined is treated too.
        quarantine: where what it made at protected paths is moved.
    """

    def __init__(self, launch: Launch, *, quarantine: Path) -> None:
        self.launch = launch
        self.quarantine = quarantine
        self.guard: Guard | None = None
        self.undone: list[str] = []
        """Everything moved away or put back so far, one line each."""
        self._untold: list[str] = []
        self._stack = contextlib.ExitStack()
        self._ended = False
        self.leader: Callable[[], int | None] = lambda: None
        """The pid leading the process's group once it runs (bubblewrap's): what `stop` kills."""
        self.on_stop: Callable[[str], None] = lambda why: None
        """Told why, once the process was stopped for a breach (an MCP server's card says it)."""
        self.stopped: str | None = None
        """Why the process was stopped (`stop`), if it was."""

    @property
    def confinement(self) -> Confinement | None:
        return self.launch.confinement

    def wrap(self, argv: Sequence[str], *, cwd: Path, seccomp_fd: int | None = None,
             proxy_socket: Path | None = None) -> list[str]:
        """`argv` as it must be run: inside the sandbox with the protected paths as they are now, or as it is."""
        confined = self.confinement
        if confined is None:
            return list(argv)
        self.guard = confined.guard()
        return confined.wrap(argv, cwd=cwd, seccomp_fd=seccomp_fd, guard=self.guard, proxy_socket=proxy_socket)

    def start(self) -> None:
        """The process starts now: learn what it could print of the secret files it may read, exempt the file
        tools' permitted writes from its check, and count it as alive."""
        confined = self.confinement
        learn_reachable(confined.shown if confined is not None else None)
        if self.guard is not None:
            protected.started(self.guard)
            self._stack.callback(protected.finished, self.guard)
        alive = self._alive()
        if alive is not None:
            self._stack.enter_context(alive)

    def _alive(self) -> AbstractContextManager[object] | None:
        return self.launch.alive() if self.launch.alive is not None else None

    def check(self) -> list[str]:
        """Move away what appeared at a protected path that was missing, put back a replaced link, and `stop`
        the process when there was any, or when a read-only binding is gone; what was undone, one line each
        (also kept for `untold`)."""
        undone = self._look()
        if undone:
            self.stop("; ".join(undone))
        return undone

    def _look(self) -> list[str]:
        guard = self.guard
        if guard is None or self._ended:
            return []  # once it has ended, what appears is somebody else's doing
        undone = guard.undo(self.quarantine) if guard.missing or guard.links else []
        undone += [f"{path} (replaced from outside while it ran, which made it writable to it)"
                   for path in guard.unbound()]
        self.undone += undone
        self._untold += undone
        return undone

    def stop(self, why: str) -> None:
        """Kill the whole sandbox now: a process that made something at a protected path would make it again
        the moment it was moved away (a look every `WATCH_S` finds it there nearly always), and one whose
        read-only binding went (`Guard.unbound`) could write that path from now on. The next call of an MCP
        server starts it afresh, with the paths bound as they are then."""
        if self.stopped is not None:
            return
        self.stopped = why
        leader = self.leader()
        if leader is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(leader, signal.SIGKILL)
        self.on_stop(why)

    def untold(self) -> list[str]:
        """What `check` undid that no result has said yet (a server's between its calls); said once."""
        said, self._untold = self._untold, []
        return said

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[None]:
        """`check` every `WATCH_S` while the block runs: a process that outlives a call."""
        async def watch() -> None:
            while True:
                await asyncio.sleep(WATCH_S)
                for line in self.check():
                    log.warning("a sandboxed process changed a protected path: %s", line)

        task = asyncio.get_running_loop().create_task(watch(), name="protected paths watch")
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def end(self, pgid: int | None) -> list[str]:
        """The process has exited: wait until nothing of its sandbox runs (its process group `pgid`), then the
        last `check`; no longer alive. Returns everything undone over its life."""
        try:
            guard = self.guard
            if guard is not None and (guard.missing or guard.links or guard.bound):  # else there is nothing to look at
                await settled(pgid)
                self._look()  # nothing left to stop, and its group's id may be another's by now
        finally:
            self._ended = True
            self._stack.close()
        return self.undone

    def learn(self, text: str) -> None:
        """What the process printed or returned: a private key in it is a secret from now on (`learn_keys`)."""
        learn_keys(text)

    def redact(self, text: str) -> str:
        """What the process returned, with known secrets and any private key in it redacted."""
        self.learn(text)
        return secrets.redact(text)


def learn_reachable(shown: Sequence[Path] | None) -> None:
    """Learn the values of the secret files a process may read outside the project: the home's
    (`HOME_SECRETS`) where reads outside are allowed, else those of the allowed folders (`shown`)."""
    home = Path(os.path.expanduser("~"))
    folders = [home / name for name in HOME_SECRETS] if shown is None else \
        [p for s in shown for p in (s, *(s / name for name in HOME_SECRETS if name))]
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.is_file(follow_symlinks=False) and secrets.is_secret_file(entry.path):
                    secrets.learn_file(_label(Path(entry.path), home), path=Path(entry.path))


def learn_keys(text: str) -> None:
    """A private key in `text` is a secret wherever it was read from: learn its lines."""
    found = _PRIVATE_KEY.search(text)
    if found is not None:
        secrets.learn_file("a private key", text[found.start():])


def _label(path: Path, home: Path) -> str:
    return "~/" + path.relative_to(home).as_posix() if path.is_relative_to(home) else path.as_posix()


async def settled(pgid: int | None) -> None:
    """Wait (at most `protected.SETTLE_S`) until no process of the group `pgid` runs any more."""
    if pgid is None:
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + protected.SETTLE_S
    while loop.time() < deadline and group_alive(pgid):
        await asyncio.sleep(POLL_S)


def group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs; zombies waiting to be reaped by init do not count."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # Read as bytes with `os.open`: with `Path.read_text` a look at ~100 processes took 5.5 ms, now 1 ms,
    # paid after every sandboxed command (its group lingers as zombies until init reaps them).
    try:
        names = os.listdir("/proc")
    except OSError:
        return True
    want = str(pgid).encode()
    for name in names:
        if not name.isdigit():
            continue
        try:
            fd = os.open(f"/proc/{name}/stat", os.O_RDONLY)
            try:
                data = os.read(fd, 4096)
            finally:
                os.close(fd)
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2:].split(None, 3)
        if len(fields) > 2 and fields[2] == want and fields[0] != b"Z":
            return True
    return False
