"""In a real kernel, a configuration change made while an agent ran and that loosens its rules waits for the
person: the next `%agent` cell shows what loosens, the previous rules stay in force (an `rm` still asks, and
nobody being present, is refused), and only `%agent config accept` or the prompt's Apply puts it in force.

The change is written by the test while the agent's `sleep` runs: who writes it does not matter, when does.
Every prompt runs in a freshly read workspace, so each replays the script from its start: sleep, then rm.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.timeout(120)

SCRIPT = [
    {"tool_calls": [{"name": "bash", "input": {"command": "sleep 3"}}]},
    {"tool_calls": [{"name": "bash", "input": {"command": "rm victim.txt"}}]},
    {"text": "done"},
]
RULES = {"bash": {"*": "ask", "sleep *": "allow"}}
HEADLESS = {"OPENCODE_NB_HEADLESS": "1"}


def run_in_flight(data: Path) -> bool:
    """The config guard has recorded a run in flight: from now on a change is one made while agents ran."""
    for record in (data / "config-guard").glob("*.json"):
        try:
            if json.loads(record.read_text()).get("runs"):
                return True
        except (OSError, ValueError):
            pass  # being replaced right now
    return False


def loosen_while_the_agent_runs(fe, project: Path) -> None:
    msg = fe.execute("%%agent\nwait a little, then tidy up")
    deadline = time.monotonic() + 60  # a loaded machine may take seconds to build the workspace and start
    while not run_in_flight(project.parent / "data") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert run_in_flight(project.parent / "data"), "the run never started"
    assert fe.reply_or_none(msg) is None, "the agent must still be running"
    config = yaml.safe_load((project / "opencode.yaml").read_text())
    config["permission"] = {"*": "allow"}
    (project / "opencode.yaml").write_text(yaml.safe_dump(config))
    assert fe.done(msg, timeout=60)["content"]["status"] == "ok"
    assert (project / "victim.txt").exists(), "the rules in force when it started still ask for rm"


def test_the_next_cell_shows_the_change_and_keeps_the_old_rules_until_config_accept(kernel, tmp_path):
    fe = kernel(SCRIPT, permission=RULES, env=HEADLESS, files={"victim.txt": "keep me\n"})
    project = tmp_path / "project"
    loosen_while_the_agent_runs(fe, project)

    msg = fe.execute("%%agent\ntidy up again")
    assert fe.done(msg, timeout=60)["content"]["status"] == "ok"
    shown = fe.text(msg)
    assert "changed while agents ran" in shown and 'permission."*"."*": allow added' in shown, shown
    assert "%agent config accept" in shown
    assert any("application/vnd.jupyter.widget-view+json" in m["content"].get("data", {})
               for m in fe.outputs(msg)), "the prompt is a widget where widgets render"
    assert (project / "victim.txt").exists(), "the held change must not be in force"
    assert "waits for you" in fe.text(fe.run_id("%agent config"))

    accepted = fe.run_id("%agent config accept")
    assert "Applied" in fe.text(accepted)
    msg = fe.execute("%%agent\ntidy up, now allowed")
    assert fe.done(msg, timeout=60)["content"]["status"] == "ok"
    assert not (project / "victim.txt").exists(), fe.text(msg)


def test_the_prompt_s_keep_previous_holds_and_its_apply_puts_the_change_in_force_at_the_next_cell(kernel, tmp_path):
    fe = kernel(SCRIPT, permission=RULES, env=HEADLESS, files={"victim.txt": "keep me\n"})
    project = tmp_path / "project"
    loosen_while_the_agent_runs(fe, project)

    msg = fe.execute("%agent agents")  # any %agent line reads the configuration again and shows the prompt
    assert fe.done(msg)["content"]["status"] == "ok"
    fe.click(fe.wait_button("Keep previous"))
    fe.wait_for(lambda: not fe.buttons("Apply") or all(fe.models[b].get("disabled") for b in fe.buttons("Apply")),
                what="the prompt to take the answer")
    msg = fe.execute("%%agent\ntidy up again")
    assert fe.done(msg, timeout=60)["content"]["status"] == "ok"
    assert "changed while agents ran" not in fe.text(msg), "kept: not asked again for the same change"
    assert (project / "victim.txt").exists()

    fe.run("%agent config accept")
    msg = fe.execute("%%agent\ntidy up, now allowed")
    assert fe.done(msg, timeout=60)["content"]["status"] == "ok"
    assert not (project / "victim.txt").exists(), fe.text(msg)


def test_the_prompt_s_apply_puts_the_change_in_force_at_the_next_cell(kernel, tmp_path):
    fe = kernel(SCRIPT, permission=RULES, env=HEADLESS, files={"victim.txt": "keep me\n"})
    project = tmp_path / "project"
    loosen_while_the_agent_runs(fe, project)

    assert fe.done(fe.execute("%agent agents"))["content"]["status"] == "ok"
    fe.click(fe.wait_button("Apply"))
    fe.wait_for(lambda: all(fe.models[b].get("disabled") for b in fe.buttons("Apply")),
                what="the prompt to take the answer")
    msg = fe.execute("%%agent\ntidy up, now allowed")
    assert fe.done(msg, timeout=60)["content"]["status"] == "ok"
    assert "the change you applied is in force" in fe.text(msg)
    assert not (project / "victim.txt").exists(), fe.text(msg)
