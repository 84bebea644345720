"""A configuration that agents changed and that loosens what they may do waits for the person: by effect.

Each case lets a scripted model change `opencode.yaml` through a tool call the person allowed (bash with
`sandbox: off`, so the write lands; or the write tool, which no OS sandbox confines), then builds the next
workspace headless (nobody present: asks are refused) and runs a command that the loosened configuration
would let through. What is looked for is the command's effect on disk. Each case runs once as the attack
(the change is held: nothing happens) and once with the person's confirmation (`accept_config=True`: the
same command gets through), which shows the check can see the harm it guards against.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from opencode_nb import Workspace
from opencode_nb.config import ConfigWarning
from opencode_nb.provider import Scripted

LOOSE = {"model": "scripted/demo", "sandbox": "off", "permission": {"*": "allow"}}
"""What the agent writes: no sandbox, and everything allowed."""


class Project:
    def __init__(self, base: Path, config: dict[str, Any]) -> None:
        self.base = base
        self.root = base / "proj"
        (self.root / ".git").mkdir(parents=True)
        (self.root / "victim.txt").write_text("keep me\n")
        self.write_config(config)
        self.env = {"XDG_CONFIG_HOME": str(base / "xdg"), "HOME": str(base), "OPENCODE_NB_PERMISSION": "deny"}

    def write_config(self, config: dict[str, Any]) -> None:
        (self.root / "opencode.yaml").write_text(yaml.safe_dump(config, sort_keys=False))

    def workspace(self, **options: Any) -> Workspace:
        return Workspace(self.root, data_dir=self.base / "data", env=self.env, **options)

    async def call(self, ws: Workspace, tool: str, params: dict[str, Any]) -> Any:
        """One tool call by the model in a new session; its finished state."""
        ws.providers.register("scripted", Scripted([{"tool_calls": [{"name": tool, "input": params}]},
                                                    {"text": "done"}]))
        session = ws.sessions.create().id
        await asyncio.wait_for(ws.prompt(session, "go"), 60)
        return [p.state for m in ws.sessions.messages(session) for p in m.parts if p.type == "tool"][-1]

    async def agent_writes(self, config: dict[str, Any], *, via: str, before: dict[str, Any]) -> None:
        """A run in which the model rewrites opencode.yaml, every ask answered "once" by the person."""
        with self.workspace(on_ask=lambda request: "once") as ws:
            assert ws.config.sandbox == before.get("sandbox", "auto")
            text = yaml.safe_dump(config, sort_keys=False)
            if via == "bash":
                state = await self.call(ws, "bash", {"command": f"cat > opencode.yaml <<'EOF'\n{text}EOF"})
            else:
                state = await self.call(ws, "write", {"path": str(self.root / "opencode.yaml"), "content": text})
            assert state.status == "completed", state
        assert yaml.safe_load((self.root / "opencode.yaml").read_text()) == config  # the write landed


@pytest.fixture
def elsewhere() -> Iterator[Path]:
    """Outside the project and outside /tmp (which the sandbox replaces with its own)."""
    folder = Path(tempfile.mkdtemp(prefix="opencode-nb-config-test-", dir="/var/tmp"))
    yield folder
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()


@pytest.mark.parametrize("confirmed", [False, True], ids=["held", "accepted"])
async def test_rules_a_bash_call_loosened_during_a_run_still_ask_in_the_next_workspace(tmp_path, confirmed):
    before = {"model": "scripted/demo", "sandbox": "off", "permission": {"bash": {"*": "ask", "echo *": "allow"}}}
    project = Project(tmp_path, before)
    await project.agent_writes(LOOSE, via="bash", before=before)

    with pytest.warns(ConfigWarning) if not confirmed else contextlib.nullcontext(), \
            project.workspace(accept_config=confirmed) as ws:
        state = await project.call(ws, "bash", {"command": "rm victim.txt"})
    if confirmed:
        assert state.status == "completed" and not (project.root / "victim.txt").exists()
        return
    assert (project.root / "victim.txt").read_text() == "keep me\n", state
    assert state.status == "error"
    assert ws.config_held is not None and "permission" in ws.config_held.message()


@pytest.mark.parametrize("confirmed", [False, True], ids=["held", "accepted"])
async def test_a_sandbox_switched_off_by_the_write_tool_stays_on_in_the_next_workspace(
        tmp_path, bwrap, elsewhere, confirmed):
    before = {"model": "scripted/demo", "sandbox": "required",
              "permission": {"external_directory": "allow", "bash": {"*": "ask", "touch *": "allow"}}}
    project = Project(tmp_path, before)
    await project.agent_writes(LOOSE, via="write", before=before)

    escaped = elsewhere / f"escaped-{uuid.uuid4().hex}"
    with pytest.warns(ConfigWarning) if not confirmed else contextlib.nullcontext(), \
            project.workspace(accept_config=confirmed) as ws:
        touched = await project.call(ws, "bash", {"command": f"touch {escaped}"})
        removed = await project.call(ws, "bash", {"command": "rm victim.txt"})
        held = ws.config_held
    if confirmed:
        assert escaped.exists() and not (project.root / "victim.txt").exists()
        return
    assert not escaped.exists(), touched
    assert touched.metadata.get("sandbox") == "bwrap", touched
    assert (project.root / "victim.txt").exists(), removed
    assert held is not None
    shown = held.message()
    assert "opencode.yaml" in shown and "sandbox: required → off" in shown
    assert "opencode-nb config accept" in shown


async def test_a_tightening_made_during_a_run_applies_at_once(tmp_path):
    before = {"model": "scripted/demo", "sandbox": "off", "permission": {"bash": "allow"}}
    tighter = {"model": "scripted/demo", "sandbox": "off", "permission": {"bash": {"*": "allow", "rm *": "deny"}}}
    project = Project(tmp_path, before)
    await project.agent_writes(tighter, via="write", before=before)

    with project.workspace() as ws:
        state = await project.call(ws, "bash", {"command": "rm victim.txt"})
        assert ws.config_held is None
    assert (project.root / "victim.txt").exists(), state
    assert state.status == "error" and "prevents you" in state.error


@pytest.mark.parametrize("mode", ["off", "required"])
async def test_a_person_s_edit_between_runs_applies_at_once(tmp_path, mode, request):
    if mode == "required":
        request.getfixturevalue("bwrap")
    before = {"model": "scripted/demo", "sandbox": mode, "permission": {"bash": "ask"}}
    project = Project(tmp_path, before)
    with project.workspace() as ws:  # a run that changes nothing
        await project.call(ws, "bash", {"command": "echo hello"})
    project.write_config({**LOOSE, "sandbox": mode})

    with project.workspace() as ws:
        state = await project.call(ws, "bash", {"command": "rm victim.txt"})
        assert ws.config_held is None
    assert not (project.root / "victim.txt").exists(), state


async def test_a_held_change_is_kept_through_the_person_s_later_edits_until_it_no_longer_loosens(tmp_path):
    before = {"model": "scripted/demo", "sandbox": "off", "permission": {"bash": "ask"}}
    project = Project(tmp_path, before)
    await project.agent_writes(LOOSE, via="write", before=before)
    project.write_config({**LOOSE, "small_model": "scripted/small"})  # an unrelated edit on top

    with pytest.warns(ConfigWarning), project.workspace() as ws:
        assert ws.config_held is not None and ws.config.permission == {"bash": "ask"}
    project.write_config({**before, "small_model": "scripted/small"})  # the loosening taken out
    with project.workspace() as ws:
        assert ws.config_held is None and ws.config.small_model == "scripted/small"


def test_the_cli_accepts_a_held_change_and_the_next_workspace_applies_it(tmp_path):
    before = {"model": "scripted/demo", "sandbox": "off", "permission": {"bash": "ask"}}
    project = Project(tmp_path, before)
    asyncio.run(project.agent_writes(LOOSE, via="write", before=before))
    env = {**os.environ, **project.env, "OPENCODE_NB_DATA_DIR": str(tmp_path / "data")}

    status = _cli(project, env, "config")
    assert status.returncode == 0 and "permission" in status.stdout and "config accept" in status.stdout
    with pytest.warns(ConfigWarning), project.workspace() as ws:
        assert ws.config_held is not None
    accepted = _cli(project, env, "config", "accept")
    assert accepted.returncode == 0, accepted.stderr
    with project.workspace() as ws:
        assert ws.config_held is None and ws.config.permission == {"*": "allow"}


def test_a_run_of_another_process_in_flight_or_killed_leaves_a_change_unconfirmed(tmp_path):
    before = {"model": "scripted/demo", "sandbox": "off", "permission": {"bash": {"*": "ask", "sleep *": "allow"}}}
    project = Project(tmp_path, before)
    with project.workspace():
        pass  # the record starts from the person's configuration
    script = textwrap.dedent(f"""
        import asyncio
        from opencode_nb import Workspace
        from opencode_nb.provider import Scripted
        ws = Workspace({str(project.root)!r}, data_dir={str(tmp_path / 'data')!r}, env={project.env!r})
        ws.providers.register("scripted", Scripted([{{"tool_calls": [{{"name": "bash",
                                                     "input": {{"command": "sleep 60"}}}}]}}, {{"text": "done"}}]))
        asyncio.run(ws.prompt(ws.sessions.create().id, "go"))
    """)
    other = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    try:
        records = tmp_path / "data" / "config-guard"
        deadline = time.monotonic() + 30
        while '"runs":{}' in next(records.glob("*.json")).read_text():
            assert time.monotonic() < deadline and other.poll() is None, "the other process never started its run"
            time.sleep(0.1)
        project.write_config(LOOSE)  # while that run is in flight: who wrote it cannot be told
        with pytest.warns(ConfigWarning), project.workspace() as ws:
            assert ws.config_held is not None and ws.config.sandbox == "off" and ws.config.permission != {"*": "allow"}
    finally:
        os.killpg(other.pid, signal.SIGKILL)  # it never records its end
        other.wait()
    with pytest.warns(ConfigWarning), project.workspace() as ws:
        held = ws.config_held
        assert held is not None and held.sessions and held.sessions[0].startswith("ses")


def _cli(project: Project, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "opencode_nb.cli", "-C", str(project.root), *args],
                          capture_output=True, text=True, env=env, timeout=60)

