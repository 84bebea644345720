"""The OS sandbox holds where the rules let a command through: checked by effect, with real bubblewrap.

Every command here runs through a real workspace and the bash tool under `{"*": allow}`, so nothing but the
sandbox stands between it and the machine. What must not happen is checked outside the sandbox afterwards: the
file is not there, the loopback server saw no request, the other process is alive, the background job is gone.
`OPENCODE_NB_BWRAP=/nonexistent` in the workspace's environment plays a machine without bubblewrap.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from opencode_nb import Workspace
from opencode_nb.errors import ConfigError
from opencode_nb.provider import Scripted
from opencode_nb.sandbox.policy import BWRAP_ENV

from .harness import Loopback

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux-only")

MISSING = {BWRAP_ENV: "/nonexistent/bwrap"}


class Run:
    """One workspace whose model calls the bash tool with the commands it is given, one prompt each."""

    def __init__(self, tmp_path: Path, config: dict[str, Any] | None = None, env: dict[str, str] | None = None,
                 on_ask: Any = None) -> None:
        self.root = tmp_path / "proj"
        (self.root / ".git").mkdir(parents=True, exist_ok=True)
        settings = {"model": "scripted/demo", "permission": {"*": "allow"}, **(config or {})}
        self.ws = Workspace(self.root, settings, data_dir=tmp_path / "data", on_ask=on_ask,
                            env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path), **(env or {})})
        self.session = self.ws.sessions.create().id

    async def bash(self, command: str, *, timeout: float | None = None, session: str | None = None) -> Any:
        """The finished tool state of one bash call (`.status`, `.output` or `.error`, `.metadata`)."""
        session = session or self.session
        call = {"command": command, **({"timeout": timeout} if timeout else {})}
        self.ws.providers.register("scripted", Scripted([{"tool_calls": [{"name": "bash", "input": call}]},
                                                         {"text": "done"}]))
        await asyncio.wait_for(self.ws.prompt(session, "go"), 60)
        return self.tool_states(session)[-1]

    def tool_states(self, session: str) -> list[Any]:
        return [p.state for m in self.ws.sessions.messages(session) for p in m.parts if p.type == "tool"]


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    made = Run(tmp_path)
    yield made
    made.ws.close()


@pytest.fixture
def elsewhere() -> Iterator[Path]:
    """A directory outside the project and outside /tmp (which the sandbox replaces with its own)."""
    folder = Path(tempfile.mkdtemp(prefix="opencode-nb-sandbox-test-", dir="/var/tmp"))
    yield folder
    for path in sorted(folder.rglob("*"), reverse=True):
        path.unlink() if not path.is_dir() else path.rmdir()
    folder.rmdir()


@pytest.fixture
def loopback() -> Iterator[Loopback]:
    server = Loopback()
    yield server
    server.close()


def alive_with(marker: str) -> list[int]:
    """PIDs of processes (anywhere on the machine) whose command line contains `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if marker in cmdline and state != "Z" and int(entry.name) != os.getpid():
                found.append(int(entry.name))
    return found


# ---------------------------------------------------------------------------------------------- files


async def test_a_command_writes_inside_the_project_and_to_the_tool_output_and_temp_folders(bwrap, run):
    shared = Path(tempfile.gettempdir()) / "opencode_nb" / f"{run.session}.txt"
    state = await run.bash(f"echo made > inside.txt && touch {run.ws.data_dir}/tool-output/ok && "
                           f"echo shared > {shared}")
    try:
        assert state.status == "completed" and state.metadata["sandbox"] == "bwrap", state
        assert (run.root / "inside.txt").read_text() == "made\n"
        assert (run.ws.data_dir / "tool-output" / "ok").exists()
        assert shared.read_text() == "shared\n"
    finally:
        shared.unlink(missing_ok=True)


@pytest.mark.parametrize("target", ["elsewhere", "home", "etc"])
async def test_a_write_outside_the_project_fails_though_the_rules_allow_it(bwrap, run, elsewhere, target):
    name = f"sandbox-{uuid.uuid4().hex}.txt"
    folder = {"elsewhere": elsewhere, "home": Path.home(), "etc": Path("/etc")}[target]
    targets = [folder / name, folder / f"{name}.2", folder / f"{name}.3"]
    try:
        state = await run.bash(f"echo escaped > {targets[0]}; cp /etc/hostname {targets[1]}; "
                               f"ln -s {targets[2]} link-out && echo escaped >> link-out; ls -l link-out")
        assert state.status == "completed"
        assert state.output.count("Read-only file system") == 3
        assert not any(path.exists() for path in targets)
        assert (run.root / "link-out").is_symlink()  # the link itself is inside the project
    finally:
        for leftover in targets:
            leftover.unlink(missing_ok=True)


@pytest.mark.parametrize("knob", ["/proc/sys/kernel/core_pattern", "/proc/sys/vm/overcommit_memory",
                                  "/sys/kernel/mm/transparent_hugepage/defrag"])
async def test_kernel_settings_cannot_be_written_even_by_root(bwrap, run, knob):
    if not Path(knob).exists():
        pytest.skip(f"{knob} does not exist on this kernel")
    before = Path(knob).read_text()
    # Writes back what is there (the selected word for sysfs lists), so a sandbox that failed changes nothing.
    state = await run.bash(f"v=$(sed -n 's/.*\\[\\(.*\\)\\].*/\\1/p;t;p' {knob}); echo \"$v\" > {knob}")
    assert "Read-only file system" in state.output, state.output
    assert Path(knob).read_text() == before


async def test_a_write_to_tmp_stays_in_the_commands_private_tmp(bwrap, run, tmp_path):
    outside = tmp_path / "outside.txt"  # the project's own parent folder, under the real /tmp
    state = await run.bash(f"echo escaped > {outside} && cat {outside}")
    assert state.status == "completed" and "escaped" in state.output
    assert not outside.exists()


async def test_a_template_command_is_confined_too(bwrap, tmp_path, elsewhere):
    target = elsewhere / "from-template.txt"
    made = Run(tmp_path, {"command": {"probe": {"template": f"Say: !`echo escaped > {target}; echo ran`"}}})
    made.ws.providers.register("scripted", Scripted([{"text": "ok"}]))
    try:
        await asyncio.wait_for(made.ws.command(made.session, "probe"), 60)
        prompt = next(p.text for m in made.ws.sessions.messages(made.session) for p in m.parts if p.type == "text")
        assert "Read-only file system" in prompt and "ran" in prompt
        assert not target.exists()
    finally:
        made.ws.close()


# ---------------------------------------------------------------------------------------------- network


@pytest.mark.parametrize("client", ["curl -sS -m 3 {url}/curl", "python3 -c \"import urllib.request as u; "
                                    "print(u.urlopen('{url}/python', timeout=3).read())\""])
async def test_no_request_reaches_a_loopback_server_without_a_network_rule(bwrap, run, loopback, client):
    state = await run.bash(client.format(url=loopback.url))
    assert state.status == "completed" and state.metadata["sandbox"] == "bwrap"
    assert "reached" not in state.output
    assert loopback.requests == []


@pytest.fixture
def unix_server(elsewhere: Path) -> Iterator[tuple[str, list[str]]]:
    """A Unix socket outside /run and /tmp (which the sandbox masks anyway), noting each connection."""
    import socket
    import threading

    path = str(elsewhere / "s.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen()
    server.settimeout(0.1)
    accepted: list[str] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            accepted.append("connected")
            connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path, accepted
    stop.set()
    thread.join()
    server.close()
    Path(path).unlink(missing_ok=True)


CONNECT_UNIX = ("python3 -c \"import socket, asyncio; asyncio.run(asyncio.sleep(0)); print('socketpair ok'); "
                "s = socket.socket(socket.AF_UNIX); s.connect('{path}'); print('connected')\"")


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "off"])
async def test_no_unix_socket_on_disk_is_reachable_without_the_network(tmp_path, unix_server, sandboxed, request):
    if sandboxed:
        request.getfixturevalue("bwrap")
    path, accepted = unix_server
    made = Run(tmp_path, {"permission": {"*": "allow"}, "sandbox": "auto" if sandboxed else "off"})
    try:
        state = await made.bash(CONNECT_UNIX.format(path=path))
    finally:
        made.ws.close()
    await asyncio.sleep(0.2)
    assert "socketpair ok" in state.output  # asyncio's own socket pair still works
    assert (accepted == []) is sandboxed, state.output
    if sandboxed:
        assert "Operation not permitted" in state.output


async def test_a_network_rule_naming_the_host_lets_the_command_reach_it(bwrap, tmp_path, loopback):
    made = Run(tmp_path, {"permission": {"*": "allow", "network": {"127.0.0.1": "allow"}}})
    try:
        state = await made.bash(f"curl -sS -m 5 {loopback.url}/allowed")
        assert state.metadata["sandbox"] == "bwrap+network" and "reached" in state.output
        assert loopback.requests == ["/hit/allowed"]
        state = await made.bash("echo escaped > /etc/escaped-with-network; echo $?")  # still read-only
        assert "Read-only file system" in state.output and not Path("/etc/escaped-with-network").exists()
    finally:
        made.ws.close()


async def test_network_ask_asks_once_per_host_and_a_refusal_still_runs_the_command(bwrap, tmp_path, loopback):
    asked: list[Any] = []
    answers = iter(["once", "reject"])

    def person(request: Any) -> str:
        asked.append(request)
        return next(answers)

    made = Run(tmp_path, {"permission": {"*": "allow", "network": {"127.0.0.1": "ask"}}}, on_ask=person)
    try:
        command = f"curl -sS -m 5 {loopback.url}/a; curl -sS -m 5 {loopback.url}/b"
        state = await made.bash(command)
        assert [(r.permission, r.patterns) for r in asked] == [("network", ["127.0.0.1"])]
        assert loopback.requests == ["/hit/a", "/hit/b"] and state.metadata["sandbox"] == "bwrap+network"

        state = await made.bash(f"curl -sS -m 5 {loopback.url}/c; touch ran.txt")
        assert len(asked) == 2 and loopback.requests == ["/hit/a", "/hit/b"]
        assert state.status == "completed" and (made.root / "ran.txt").exists()
    finally:
        made.ws.close()


# ---------------------------------------------------------------------------------------------- processes


async def test_the_kernel_and_other_processes_cannot_be_signalled_or_read(bwrap, run):
    secret = f"SECRET-{uuid.uuid4().hex}"
    victim = subprocess.Popen(["sleep", "60"], env={**os.environ, "VICTIM_SECRET": secret})
    try:
        state = await run.bash(f"kill -9 {victim.pid}; kill -0 {os.getpid()}; cat /proc/{victim.pid}/environ; "
                               f"cat /proc/{os.getpid()}/environ; echo procs=$(ls /proc | grep -c '^[0-9]')")
        assert victim.poll() is None
        assert secret not in state.output
        assert state.output.count("No such process") == 2
        seen = int(re.search(r"procs=(\d+)", state.output).group(1))
        assert seen <= 5  # bwrap's init, the shell, ls, grep: nothing of the machine
    finally:
        victim.kill()
        victim.wait()


async def gone(pattern: str) -> bool:
    """No process matches `pattern` within 2 s: the kill is immediate, but the kernel tears a PID namespace
    down after bwrap has already been reaped."""
    for _ in range(40):
        if not alive_with(pattern):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_a_background_job_does_not_survive_the_timeout(bwrap, run):
    marker = f"{time.time_ns() % 10**6 + 10**6}.5"  # a sleep length nothing else uses
    started = time.monotonic()
    state = await run.bash(f"sleep {marker} & (setsid sleep {marker} > /dev/null 2>&1 &); "
                           f"(trap '' TERM; while :; do date +%s%N > beat.txt; sleep 0.05; done) & sleep {marker}",
                           timeout=1)
    assert state.status == "completed" and state.metadata["timed_out"]
    assert time.monotonic() - started < 10
    assert await gone(f"sleep {marker}")
    beat = (run.root / "beat.txt").read_text()
    await asyncio.sleep(0.3)
    assert (run.root / "beat.txt").read_text() == beat  # the TERM-proof loop stopped too


async def test_a_background_job_ends_with_the_command_that_started_it(bwrap, run):
    marker = f"{time.time_ns() % 10**6 + 2 * 10**6}.5"
    state = await run.bash(f"nohup sleep {marker} > /dev/null 2>&1 & echo started")
    assert "started" in state.output
    assert await gone(f"sleep {marker}")


async def test_stopping_the_run_kills_the_sandboxed_command(bwrap, run):
    marker = f"{time.time_ns() % 10**6 + 3 * 10**6}.5"
    command = f"(setsid sleep {marker} &); touch up; sleep {marker}"
    run.ws.providers.register("scripted", Scripted([{"tool_calls": [{"name": "bash", "input": {"command": command}}]},
                                                    {"text": "done"}]))
    task = asyncio.create_task(run.ws.prompt(run.session, "go"))
    for _ in range(200):
        if (run.root / "up").exists() and len(alive_with(f"sleep {marker}")) == 2:
            break
        await asyncio.sleep(0.05)
    assert alive_with(f"sleep {marker}"), "the command never started"
    assert run.ws.abort(run.session)
    await asyncio.wait_for(task, 10)
    for _ in range(40):  # the kill is immediate; the kernel may take a moment to tear the namespace down
        if not alive_with(f"sleep {marker}"):
            break
        await asyncio.sleep(0.05)
    assert alive_with(f"sleep {marker}") == []


# ---------------------------------------------------------------------------------------------- no sandbox


async def test_auto_without_bubblewrap_runs_unconfined_and_says_so_once_per_session(tmp_path, elsewhere):
    made = Run(tmp_path, env=MISSING)
    try:
        first = await made.bash(f"echo unconfined > {elsewhere}/out.txt")
        assert first.status == "completed" and first.metadata["sandbox"] == "none"
        assert (elsewhere / "out.txt").read_text() == "unconfined\n"
        note = first.metadata["sandbox_note"]  # shown on the card, for the person
        assert "without an OS sandbox" in note and "/nonexistent/bwrap" in note
        assert "apt-get install bubblewrap" in note and "sandbox: off" in note
        assert "without an OS sandbox" not in first.output

        second = await made.bash("echo again")
        assert "sandbox_note" not in second.metadata and "without an OS sandbox" not in second.output

        other = made.ws.sessions.create().id
        third = await made.bash("echo new session", session=other)
        assert "without an OS sandbox" in third.metadata["sandbox_note"]
    finally:
        made.ws.close()


async def test_off_runs_unconfined_and_says_nothing(tmp_path, elsewhere):
    made = Run(tmp_path, {"sandbox": "off"})
    try:
        state = await made.bash(f"echo unconfined > {elsewhere}/off.txt")
        assert state.metadata["sandbox"] == "none" and "sandbox" not in state.output
        assert "sandbox_note" not in state.metadata
        assert (elsewhere / "off.txt").exists()
    finally:
        made.ws.close()


async def test_required_without_bubblewrap_refuses_to_run_and_says_how_to_get_a_sandbox(tmp_path):
    made = Run(tmp_path, {"sandbox": "required"}, env=MISSING)
    try:
        state = await made.bash("touch ran.txt")
        assert state.status == "error" and not (made.root / "ran.txt").exists()
        assert "sandbox: required" in state.error and "apt-get install bubblewrap" in state.error
        assert "sandbox: auto" in state.error
    finally:
        made.ws.close()


async def test_required_with_bubblewrap_confines(bwrap, tmp_path, elsewhere):
    made = Run(tmp_path, {"sandbox": "required"})
    try:
        state = await made.bash(f"echo x > {elsewhere}/req.txt; touch ran.txt")
        assert state.metadata["sandbox"] == "bwrap" and (made.root / "ran.txt").exists()
        assert not (elsewhere / "req.txt").exists()
    finally:
        made.ws.close()


# ---------------------------------------------------------------------------------------------- config


@pytest.mark.parametrize(("written", "said"), [
    ("sandbox: maybe", "'maybe' is not one of off, auto, required"),
    ("sandbox: on", "on/yes/true is not a sandbox mode"),
    ("sandbox: [auto]", "['auto'] is not one of off, auto, required"),
])
def test_a_bad_sandbox_value_names_the_file_line_and_allowed_values(tmp_path, written, said):
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "opencode.yaml").write_text(f"model: scripted/demo\n{written}\n")
    with pytest.raises(ConfigError) as caught:
        Workspace(root, data_dir=tmp_path / "data", env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert f"opencode.yaml:2 sandbox: {said}" in str(caught.value)


@pytest.mark.parametrize(("written", "mode"), [("sandbox: off", "off"), ("sandbox: required", "required"),
                                                ("", "auto")])
def test_sandbox_modes_read_from_yaml(tmp_path, written, mode):
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "opencode.yaml").write_text(f"model: scripted/demo\n{written}\n")
    with Workspace(root, data_dir=tmp_path / "data", env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")}) as ws:
        assert ws.config.sandbox == mode and ws.sandbox.mode == mode
