"""Package managers' caches in the sandbox: every confined process finds its own writable caches through the
environment, the person's caches stay read-only, and a registry the rules do not allow is used offline.

The by-effect part runs real bubblewrap: a command run as the bash tool runs it writes where the variables
point and cannot write the (temporary) HOME's caches; the control runs it without the variables and sees the
write into the person's cache refused, so the test can tell the two apart.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from opencode_nb.permission import from_config
from opencode_nb.sandbox import caches
from opencode_nb.sandbox.hosts import for_command
from opencode_nb.sandbox.policy import Backend, SandboxCall, ShellSandbox, find_backend

OFFLINE = {"UV_OFFLINE": "1", "npm_config_offline": "true", "NPM_CONFIG_OFFLINE": "true"}


def network(rules: dict) -> list:
    return for_command("uvx x", from_config({"network": rules}))


def test_the_registries_are_pypi_s_and_npm_s_hosts_unless_the_environment_names_others():
    pypi, npm = caches.registries({})
    assert pypi.hosts == ("pypi.org", "files.pythonhosted.org") and npm.hosts == ("registry.npmjs.org",)
    pypi, npm = caches.registries({"UV_INDEX_URL": "https://mirror.example/simple",
                                   "npm_config_registry": "https://npm.example:8443/"})
    assert pypi.hosts == ("mirror.example",) and npm.hosts == ("npm.example",)
    pypi, _ = caches.registries({"PIP_INDEX_URL": "file:///opt/pypi/simple"})
    assert pypi.hosts == ()  # a local index is no host: never offline for it


def test_a_registry_is_used_offline_unless_the_rules_allow_each_of_its_hosts(tmp_path):
    cache = caches.Caches(tmp_path)
    closed = dict(cache.env(caches.nothing_reachable, {}))
    assert {k: closed[k] for k in OFFLINE} == OFFLINE
    assert closed["UV_CACHE_DIR"] == str(tmp_path / "uv") and closed["npm_config_cache"] == str(tmp_path / "npm")
    only_pypi = dict(cache.env(caches.reachable_by(network({"pypi.org": "allow"}), asking=False), {}))
    assert only_pypi["UV_OFFLINE"] == "1"  # files.pythonhosted.org is not allowed: downloads would fail
    pypi = dict(cache.env(caches.reachable_by(network({"pypi.org": "allow", "files.pythonhosted.org": "allow"}),
                                              asking=False), {}))
    assert "UV_OFFLINE" not in pypi and pypi["npm_config_offline"] == "true"


def test_an_ask_opens_a_registry_only_where_a_call_can_put_the_question():
    rules = network({"*": "ask"})
    assert caches.reachable_by(rules, asking=True)("pypi.org")
    assert not caches.reachable_by(rules, asking=False)("pypi.org")  # a server starting: nobody to ask
    assert not caches.reachable_by(network({"pypi.org": "deny"}), asking=True)("pypi.org")


def test_each_project_and_each_server_has_a_folder_of_its_own(tmp_path):
    one = caches.project_folder(tmp_path, Path("/work/a/proj"))
    other = caches.project_folder(tmp_path, Path("/work/b/proj"))
    assert one != other and one.parent == other.parent == tmp_path / "caches"
    assert caches.user_name("fetch") == "mcp-fetch"
    odd = caches.user_name("../../x y")
    assert "/" not in odd and odd != caches.user_name("x_y")


SANDBOX = isinstance(find_backend(), Backend)


@pytest.mark.skipif(not SANDBOX, reason="no OS sandbox on this machine")
@pytest.mark.parametrize("own_caches", [True, False], ids=["own caches", "control: none"])
async def test_a_sandboxed_command_writes_its_own_cache_and_not_the_person_s(tmp_path, monkeypatch, own_caches):
    home = Path("/var/tmp") / f"opencode-nb-caches-{os.getpid()}-{own_caches}"  # /tmp is the sandbox's own
    (home / ".cache" / "pip").mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PIP_CACHE_DIR", raising=False)
    if not own_caches:
        monkeypatch.setattr(caches.Caches, "variables", lambda self: {})  # the guard weakened
    root = tmp_path / "proj"
    root.mkdir()
    sandbox = ShellSandbox("required", writable=[root], caches=caches.project_folder(tmp_path / "data", root))
    try:
        launch = await SandboxCall(sandbox, "s").prepare("x", _no_ask)
        confined = launch.confinement
        assert confined is not None
        line = ('d="${PIP_CACHE_DIR:-$HOME/.cache/pip}"; echo "$d"; echo "${UV_OFFLINE:-online}"; '
                'mkdir -p "$d" && touch "$d/written"')
        argv = confined.wrap(["/bin/sh", "-c", line], cwd=root)
        done = await asyncio.to_thread(subprocess.run, argv, capture_output=True, text=True, env=dict(os.environ),
                                       timeout=30)
        where, offline = done.stdout.split()[:2]
        if own_caches:
            assert done.returncode == 0, done.stderr
            assert Path(where) == confined.caches.folder / "pip" and (Path(where) / "written").exists()
            assert offline == "1"  # no network rule: uv works from the cache
        else:
            assert done.returncode != 0 and "Read-only file system" in done.stderr
        assert not (home / ".cache" / "pip" / "written").exists()  # the person's cache is untouched either way
    finally:
        shutil.rmtree(home, ignore_errors=True)


async def _no_ask(*args, **kwargs) -> None:
    raise AssertionError("nothing should be asked")


@pytest.mark.skipif(not SANDBOX or shutil.which("npm") is None, reason="needs bubblewrap and npm")
async def test_the_bash_tool_s_npm_uses_the_project_s_cache_offline_without_a_registry_rule(tmp_path):
    from tests.safety.test_sandbox import Run

    made = Run(tmp_path)  # build's rules: `network: deny`
    try:
        state = await made.bash("npm config get cache; npm config get offline; npm view left-pad version")
    finally:
        made.ws.close()
    # npm warns on stderr about config it does not know (a machine's `npm_config_nodedir`, say): not our lines
    cache, offline = [line for line in state.output.splitlines() if not line.startswith("npm warn")][:2]
    assert Path(cache) == caches.project_folder(tmp_path / "data", made.root.resolve()) / caches.COMMANDS / "npm"
    assert offline == "true" and "ENOTCACHED" in state.output
    assert "without network access" in state.output  # the note that tells the model which rule would help
