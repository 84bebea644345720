"""The notebook's own hook events in a real kernel: `AskWaiting` names the cell whose run waits for the person,
and `CellExecuted` tells of each cell an agent ran. The hooks are the person's own (their global config), run
as real commands; what they wrote is read from disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from .frontend import FakeExtension

pytestmark = pytest.mark.timeout(120)

SCRIPT = [
    {"text": "Checking.", "tool_calls": [{"name": "bash", "input": {"command": "echo hi", "description": "say hi"}}]},
    {"text": "Running the cell.", "tool_calls": [{"name": "notebook_run", "input": {"cell_ids": ["c1"]}}]},
    {"text": "Done."},
]


def global_hooks(tmp_path: Path, log: Path) -> None:
    def note(event: str) -> list[dict]:
        return [{"hooks": [{"type": "command", "command": f"cat >> {log}; echo >> {log}"}]}]

    folder = tmp_path / "xdg" / "opencode_nb"
    folder.mkdir(parents=True)
    (folder / "opencode.yaml").write_text(yaml.safe_dump({"hooks": {"AskWaiting": note("AskWaiting"),
                                                                    "CellExecuted": note("CellExecuted")}}))


def test_ask_waiting_names_the_cell_and_cell_executed_each_cell_an_agent_ran(kernel, tmp_path: Path):
    log = tmp_path / "project" / "hooks.jsonl"
    global_hooks(tmp_path, log)
    ext = FakeExtension(["%%agent\nsay hi, then run the next cell", "x = 41 + 1"])
    fe = kernel(SCRIPT, extension=ext, permission={"*": "allow", "bash": "ask"})
    msg = fe.execute_cell_async("c0")
    fe.click(fe.wait_button("Allow once"))
    assert fe.done(msg)["content"]["status"] == "ok"
    fe.wait_for(lambda: log.exists() and log.read_text().count("CellExecuted") >= 1, what="the CellExecuted hook")
    said = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    waiting = next(e for e in said if e["hook_event_name"] == "AskWaiting")
    assert waiting["cell_id"] == "c0" and waiting["message"] == "An agent needs permission to use bash"
    ran = next(e for e in said if e["hook_event_name"] == "CellExecuted")
    assert ran["cell_id"] == "c1" and ran["status"] == "ok"
