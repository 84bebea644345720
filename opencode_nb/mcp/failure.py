"""Why a local server did not start, in words that point the right way.

The client knows only what it saw: the process exited, or nothing came within `timeout`. The cause is often
elsewhere, and the bare symptom misleads: `npx` with no network waits on DNS without a word until the
timeout, so "did not start within 5 s, raise `timeout`" sent people to a setting that could never help. So
the error is built from what the launch knows (`launch.py` records it), in this order:

- hosts the sandbox's proxy refused while it started (a registry its package runner needed): which, why,
  and the `network` rule that allows them;
- a package runner told to work offline (`sandbox/caches.py`: its registry is not allowed) that did not find
  the package in the server's cache: the registry's hosts to allow once, after which the cache suffices;
- no network at all, and the stderr shows a failed connection;
- a write the sandbox refused (`Read-only file system`), with the path when the program named it;
- otherwise the client's own reason (for a timeout, to raise `timeout`).

The last lines the server wrote to stderr follow in every case.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from ..sandbox.caches import Registry, registries
from ..sandbox.policy import NETWORK_TROUBLE, Launch
from .client import Stage
from .launch import tail
from .runners import package_runner

SHOWN_LINES = 3
SCANNED_BYTES = 64 * 1024
"""How much of the end of the server's stderr log is searched for causes: a Python traceback after npm's
error pushes it a few kilobytes back."""

CACHE_MISSES = {"PyPI": re.compile(r"not found in the cache|because the network was disabled"),
                "npm": re.compile(r"ENOTCACHED|only-if-cached")}
"""How uv and npm say, offline, that a package is not in their cache."""
READ_ONLY = re.compile(r"Read-only file system|EROFS|an error writing to the directory")
"""A write the sandbox refused; npm words one it could not make for its logs as the last."""
WRITTEN_PATH = re.compile(r"(?:at path |, \w+ |: |\] [^:]*: )[\"']?(/[^\"'\s]+)")
"""The path in `… at path "/x"` (uv), `EROFS: read-only file system, mkdir '/x'` (npm), `[Errno 30] …: '/x'`."""
EXAMPLE_RULES = "permission: {network: {%s}}"


def explain(reason: str, stage: Stage, *, command: Sequence[str], launch: Launch | None, log: Path,
            timeout_s: float) -> str:
    """The error a local server's failure shows, on its tool's card, in `%agent mcp` and to the model. Causes
    are looked for only in a failure to start: a server that broke later (a crash in a call) is not explained
    by a host it was refused along the way."""
    wrote = _recent(log)
    shown = tail(log, SHOWN_LINES)
    cause = _cause(command, launch, wrote) if stage != "running" else None
    if cause is None:
        said = (f"{reason} (raise `timeout`, in milliseconds, if it needs longer: it is {timeout_s:g} s now"
                f"{_offline_hint(launch)})" if stage == "timeout" else reason)
    else:
        said = f"{reason}: {cause}"
    return said + (f"; it wrote: {shown}" if shown else "")


def _cause(command: Sequence[str], launch: Launch | None, wrote: str) -> str | None:
    confined = launch.confinement if launch is not None else None
    if confined is None:
        return None
    runner = package_runner(command)
    proxy = confined.proxy
    if proxy is not None and proxy.refused:
        hosts = "; ".join(f"{host} ({why})" for host, why in proxy.refused.items())
        names = [host.rsplit(":", 1)[0] for host in proxy.refused]
        fetching = f" ({runner[0]} fetches its package from there)" if runner and _registry_host(runner[1], names) \
            else ""
        return (f"the sandbox's network proxy refused {hosts}{fetching}. Allow the hosts with a `network` rule, "
                f"e.g. `{_rules(names)}`")
    registry = next((r for r in offline_misses(launch, wrote) if runner is not None and r.name == runner[1]), None)
    if registry is not None and runner is not None:  # a registry is only found for a runner
        folder = confined.caches.folder if confined.caches is not None else None
        where = f" ({folder})" if folder is not None else ""
        return (f"{runner[0]} ran offline, since no `network` rule allows {registry.name}'s registry, and its "
                f"package is not in this server's cache{where} yet. Allow the registry once, e.g. "
                f"`{_rules(registry.hosts)}`: after a start with it, the cache lets the server start without")
    if proxy is None and not confined.network and NETWORK_TROUBLE.search(wrote):
        return ("it has no network in the sandbox (no `network` rule allows any host), and it tried to connect. "
                f"Allow the hosts it needs with a `network` rule, e.g. `{_rules(['example.org'])}`")
    read_only = READ_ONLY.search(wrote)
    if read_only is not None:
        found = WRITTEN_PATH.search(wrote, read_only.start())
        path = f" {found.group(1)}" if found else ""
        return (f"it tried to write{path} where the sandbox allows no writes (it may write the project, its "
                "package caches and the temporary folder; the person's own caches and home stay read-only). "
                "Point the program at a folder in the project, e.g. through the entry's `environment`")
    return None


def offline_misses(launch: Launch | None, wrote: str) -> list[Registry]:
    """The registries whose manager ran offline here (`caches.py`) and said it missed something in its cache."""
    confined = launch.confinement if launch is not None else None
    if confined is None:
        return []
    offline = dict(confined.env)
    return [r for r in registries() if r.name in CACHE_MISSES and CACHE_MISSES[r.name].search(wrote)
            and any(offline.get(name) == value for name, value in r.offline)]


class CallNotes:
    """What a failed call's result adds about the sandbox, said once each: hosts the proxy refused while the
    server ran, and a package manager it started that ran offline and missed its cache (`mcp-server-fetch`'s
    extractor runs `npm install` at its first fetch, with npm's registry not allowed). Without this the model
    reads only the server's own words, often `Error executing tool fetch`."""

    def __init__(self, launch: Callable[[], Launch | None], log: Path) -> None:
        self.launch = launch
        self.log = log
        self._said: set[str] = set()

    def __call__(self) -> str:
        launch = self.launch()
        confined = launch.confinement if launch is not None else None
        if confined is None:
            return ""
        said: list[str] = []
        refused = {h: why for h, why in (confined.proxy.refused if confined.proxy else {}).items()
                   if h not in self._said}
        if refused:
            self._said.update(refused)
            names = [host.rsplit(":", 1)[0] for host in refused]
            said.append(f"the sandbox's network proxy refused {'; '.join(f'{h} ({w})' for h, w in refused.items())}; "
                        f"to allow them: `{_rules(names)}`")
        for registry in offline_misses(launch, _recent(self.log)):
            if registry.name not in self._said:
                self._said.add(registry.name)
                said.append(f"a program it ran used {registry.name}'s registry offline, since no `network` rule "
                            f"allows it, and missed the server's cache (see the log {self.log}); allow it once "
                            f"with `{_rules(registry.hosts)}`, and the cache holds what it fetched from then on")
        return "".join(f"\n\n(While the server ran, {text}.)" for text in said)


def _offline_hint(launch: Launch | None) -> str:
    """A server that waits without a word may be waiting for a network it does not have."""
    confined = launch.confinement if launch is not None else None
    if confined is None or confined.network or confined.proxy is not None:
        return ""
    return ("; it ran with no network, as no `network` rule allows any host: a program waiting on a connection "
            "waits until the timeout")


def _recent(log: Path) -> str:
    try:
        with log.open("rb") as source:
            source.seek(max(0, source.seek(0, os.SEEK_END) - SCANNED_BYTES))
            return source.read().decode(errors="replace")
    except OSError:
        return ""


def _registry_host(registry: str, hosts: Sequence[str]) -> bool:
    found = next((r for r in registries() if r.name == registry), None)
    return found is not None and any(h in found.hosts for h in hosts)


def _rules(hosts: Sequence[str]) -> str:
    return EXAMPLE_RULES % ", ".join(f'"{host}": allow' for host in hosts)
