"""100,000 rules given through the Python API work as a few do: run for real through a workspace, an
allowed command runs, a denied one does not, and the model reads a denial of reasonable size."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from opencode_nb import Workspace
from opencode_nb.provider import Scripted

COUNT = 100_000


def run(tmp_path: Path, command: str, sandbox: str) -> tuple[Path, str, str]:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "victim.txt").write_text("keep me")
    rules = {"*": "allow", "bash": {"*": "allow", **{f"cmd{i} *": "deny" for i in range(COUNT)}, "rm *": "deny"}}
    ws = Workspace(root, {"model": "scripted/demo", "permission": rules, "sandbox": sandbox},
                   data_dir=tmp_path / "data", env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)})
    ws.providers.register("scripted", Scripted([{"tool_calls": [{"name": "bash", "input": {"command": command}}]},
                                                {"text": "done"}]))

    async def go() -> tuple[str, str]:
        await asyncio.wait_for(ws.prompt(ws.sessions.create().id, "go"), 60)
        [part] = [p for m in ws.sessions.messages(ws.sessions.list()[0].id) for p in m.parts if p.type == "tool"]
        said = part.state.output if part.state.status == "completed" else part.state.error
        return part.state.status, said

    try:
        return root, *asyncio.run(go())
    finally:
        ws.close()


@pytest.mark.parametrize("sandbox", ["off", "auto"])
def test_an_allowed_command_runs_under_a_hundred_thousand_rules(tmp_path, sandbox):
    root, status, output = run(tmp_path, "echo ok > made.txt && echo ok", sandbox)
    assert status == "completed" and output.startswith("ok")
    assert (root / "made.txt").read_text() == "ok\n"


@pytest.mark.parametrize("sandbox", ["off", "auto"])
@pytest.mark.parametrize("command", ["rm victim.txt", "cmd99999 x; rm victim.txt", "echo ok; cmd7"])
def test_a_denied_command_does_not_run_and_its_denial_quotes_a_few_rules(tmp_path, sandbox, command):
    root, status, error = run(tmp_path, command, sandbox)
    assert status == "error"
    assert (root / "victim.txt").read_text() == "keep me"
    assert "prevents you from using this specific tool call" in error
    quoted = re.search(r"\(the last 50 of (\d+)\)", error)
    assert quoted is not None and int(quoted[1]) > COUNT and len(error) < 10_000
