"""Why a local server did not start, in words that point the right way (`mcp/failure.py`), and how long a server
started by a package runner is given to start (`mcp/runners.py`). The real servers' failures, by effect, are in
`test_third_party.py`; here each cause is built as the launch records it."""

from __future__ import annotations

from pathlib import Path

import pytest

from opencode_nb.config.schema import McpConfig
from opencode_nb.mcp import failure
from opencode_nb.mcp.runners import RUNNER_TIMEOUT_MS, package_runner, start_timeout_s
from opencode_nb.sandbox import caches
from opencode_nb.sandbox.policy import Backend, Confinement, Launch
from opencode_nb.sandbox.proxy import HostProxy, Verdict

NPX = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "."]


@pytest.mark.parametrize(("command", "found"), [
    (["uvx", "mcp-server-fetch"], ("uvx", "PyPI")),
    (["/home/me/.local/bin/uvx", "x"], ("uvx", "PyPI")),
    (NPX, ("npx", "npm")),
    (["uv", "tool", "run", "x"], ("uv tool", "PyPI")),
    (["pnpm", "dlx", "x"], ("pnpm dlx", "npm")),
    (["python", "server.py"], None),
    (["uv", "pip", "list"], None),
])
def test_a_package_runner_is_known_by_its_program_or_subcommand(command, found):
    assert package_runner(command) == found


def test_a_runner_s_server_without_a_timeout_of_its_own_gets_room_for_a_first_download():
    assert start_timeout_s(McpConfig(type="local", command=NPX)) == RUNNER_TIMEOUT_MS / 1000
    assert start_timeout_s(McpConfig(type="local", command=NPX, timeout=5000)) == 5  # the person's word
    assert start_timeout_s(McpConfig(type="local", command=["python", "s.py"])) == 5


def launch(tmp_path: Path, *, proxy: HostProxy | None = None, reachable=caches.nothing_reachable) -> Launch:
    confined = Confinement(Backend("bwrap", "/usr/bin/bwrap"), (tmp_path,), proxy=proxy,
                           caches=caches.Caches(tmp_path / "mcp-files"))
    return Launch(confined.reaching(reachable, {}))


def log(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "server.log"
    path.write_text(text)
    return path


async def _refuse(host: str, port: int) -> Verdict:
    return Verdict(False, "no `network` rule allows it")


def test_a_timeout_after_the_proxy_refused_the_registry_names_the_host_and_the_rule(tmp_path):
    proxy = HostProxy(_refuse)
    proxy.refused["registry.npmjs.org:443"] = "no `network` rule allows it"
    said = failure.explain("it did not start and list its tools within 60 s", "timeout", command=NPX,
                           launch=launch(tmp_path, proxy=proxy), log=log(tmp_path, ""), timeout_s=60)
    assert "refused registry.npmjs.org:443 (no `network` rule allows it) (npx fetches its package from there)" in said
    assert '`permission: {network: {"registry.npmjs.org": allow}}`' in said
    assert "raise `timeout`" not in said


def test_an_empty_cache_offline_says_to_allow_the_registry_once(tmp_path):
    said = failure.explain("it exited, or closed its connection, before answering", "start", command=NPX,
                           launch=launch(tmp_path), timeout_s=60,
                           log=log(tmp_path, "npm error code ENOTCACHED\nnpm error request to … failed\n"))
    assert "npx ran offline, since no `network` rule allows npm's registry" in said
    assert str(tmp_path / "mcp-files") in said and '"registry.npmjs.org": allow' in said
    assert said.endswith("npm error request to … failed")  # what it wrote, last


def test_a_refused_write_names_the_path(tmp_path):
    wrote = 'error: Could not create temporary file\n  cause: Read-only file system (os error 30) at path ' \
            '"/home/me/.cache/uv/.tmp1"\n'
    said = failure.explain("it exited, or closed its connection, before answering", "start",
                           command=["uvx", "mcp-server-fetch"], launch=launch(tmp_path), log=log(tmp_path, wrote),
                           timeout_s=60)
    assert "it tried to write /home/me/.cache/uv/.tmp1 where the sandbox allows no writes" in said


def test_no_network_and_a_failed_connection_says_there_is_no_network(tmp_path):
    said = failure.explain("it exited, or closed its connection, before answering", "start",
                           command=["python", "server.py"], launch=launch(tmp_path), timeout_s=5,
                           log=log(tmp_path, "httpx.ConnectError: [Errno -3] Temporary failure in name resolution\n"))
    assert "no network in the sandbox" in said


def test_a_timeout_with_no_cause_found_says_to_raise_the_timeout(tmp_path):
    said = failure.explain("it did not start and list its tools within 5 s", "timeout", command=["python", "s.py"],
                           launch=launch(tmp_path), log=log(tmp_path, "loading…\n"), timeout_s=5)
    assert "raise `timeout`" in said and said.endswith("it wrote: loading…")


def test_a_server_that_broke_after_starting_is_not_blamed_on_a_host_it_was_refused(tmp_path):
    proxy = HostProxy(_refuse)
    proxy.refused["example.org:443"] = "no `network` rule allows it"
    said = failure.explain("it closed the connection during a call", "running", command=NPX,
                           launch=launch(tmp_path, proxy=proxy), log=log(tmp_path, "Segmentation fault\n"),
                           timeout_s=60)
    assert said == "it closed the connection during a call; it wrote: Segmentation fault"


def test_a_failed_call_adds_what_the_sandbox_saw_while_the_server_ran_once_each(tmp_path):
    proxy = HostProxy(_refuse)
    made = launch(tmp_path, proxy=proxy)
    server_log = log(tmp_path, "npm error code ENOTCACHED\nTraceback (most recent call last):\n" + "  x\n" * 2000)
    notes = failure.CallNotes(lambda: made, server_log)
    proxy.refused["example.org:443"] = "no `network` rule allows it"
    said = notes()
    assert "refused example.org:443 (no `network` rule allows it)" in said
    assert "used npm's registry offline" in said and '"registry.npmjs.org": allow' in said  # found kilobytes back
    assert notes() == ""  # said once
