"""What a configuration change lets reach the model, or takes from undo, is judged like a loosened rule: by effect.

Each case lets a scripted model rewrite `opencode.yaml` in a run the person approved (the harness of
`test_config_changes.py`), then builds the next workspace and looks at the effect the change is after: a deletion
that undo can no longer take back, or a file's or a variable's text in the request the next run sends to the model
(the scripted provider keeps every request). Each case runs as the attack (the change is held) and with the
person's confirmation (`accept_config=True`), which shows the test can see the harm; what the person confirms then
still reaches the model only through redaction, and a control with redaction switched off shows that too.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

from opencode_nb import secrets
from opencode_nb.config import ConfigWarning
from opencode_nb.provider import Scripted

from .test_config_changes import Project

pytestmark = pytest.mark.timeout(120)

BEFORE: dict[str, Any] = {"model": "scripted/demo", "sandbox": "off", "permission": {"*": "allow"}}
KEY_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQAAACDk"
TOKEN = "tok-7f3a9c1e5b2d4f6a8e0c"
NOTES = "the person's private notes outside the project: launch date moved to May"


def _held(confirmed: bool) -> contextlib.AbstractContextManager[Any]:
    return contextlib.nullcontext() if confirmed else pytest.warns(ConfigWarning, match="loosens")


def _sent(model: Scripted) -> str:
    """Everything the requests carried that the model reads besides the history: system blocks and tools."""
    return json.dumps([[*r.system, *(t.description for t in r.tools)] for r in model.requests])


async def _first_request(project: Project, **options: Any) -> tuple[str, Any]:
    with project.workspace(**options) as ws:
        model = Scripted([{"text": "done"}])
        ws.providers.register("scripted", model)
        await ws.prompt(ws.sessions.create().id, "hello")
        return _sent(model), ws.config_held


@pytest.fixture
def home_secrets(tmp_path: Path) -> Path:
    """A fake `$HOME` (the harness's `HOME` is `tmp_path`) holding a private key and private notes."""
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_ed25519").write_text(
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}\n-----END OPENSSH PRIVATE KEY-----\n")
    (tmp_path / "notes.txt").write_text(NOTES + "\n")
    return tmp_path


# ---------------------------------------------------------------------------------------------- checkpoints


@pytest.mark.parametrize("confirmed", [False, True], ids=["held", "accepted"])
@pytest.mark.parametrize("change", [{"enabled": False}, {"keep_turns": 1}], ids=["off", "fewer-turns"])
async def test_checkpoints_cut_down_by_the_agent_still_let_undo_take_a_deletion_back(tmp_path, change, confirmed):
    project = Project(tmp_path, BEFORE)
    await project.agent_writes({**BEFORE, "checkpoints": change}, via="write", before=BEFORE)

    with _held(confirmed), project.workspace(accept_config=confirmed) as ws:
        ws.providers.register("scripted", Scripted([
            {"tool_calls": [{"name": "bash", "input": {"command": "rm victim.txt"}}]}, {"text": "done"},
            {"tool_calls": [{"name": "bash", "input": {"command": "echo later > later.txt"}}]}, {"text": "done"}]))
        session = ws.sessions.create().id
        await ws.prompt(session, "go")
        await ws.prompt(session, "and then")  # a second turn: with one turn kept, the first one's record is gone
        assert not (project.root / "victim.txt").exists()
        await ws.undo(session, to=1)
    if confirmed:  # the harm the guard is there for: the deletion is for good
        assert not (project.root / "victim.txt").exists()
        return
    assert (project.root / "victim.txt").read_text() == "keep me\n"


# ---------------------------------------------------------------------------------------------- prompts


@pytest.mark.parametrize("confirmed", [False, True], ids=["held", "accepted"])
@pytest.mark.parametrize("where", ["agent-prompt", "instructions"])
async def test_a_file_outside_the_project_named_by_the_agent_reaches_the_model_only_when_confirmed(
        tmp_path, home_secrets, where, confirmed):
    project = Project(tmp_path, BEFORE)
    change = ({"agent": {"build": {"prompt": "Be brief.\n{file:~/notes.txt}"}}} if where == "agent-prompt" else
              {"instructions": ["~/notes.txt"]})
    await project.agent_writes({**BEFORE, **change}, via="write", before=BEFORE)

    with _held(confirmed):
        sent, held = await _first_request(project, accept_config=confirmed)
    if confirmed:
        assert NOTES in sent  # what the guard keeps out: confirmed, it is the person's choice
        return
    assert NOTES not in sent
    assert held is not None
    shown = held.message()
    assert str(home_secrets / "notes.txt") in shown and "outside the project" in shown, shown
    assert NOTES not in shown


@pytest.mark.parametrize("confirmed", [False, True], ids=["held", "accepted"])
@pytest.mark.parametrize("what", ["env", "key-file"])
async def test_a_secret_pulled_into_the_agent_prompt_is_held_and_when_confirmed_reaches_the_model_redacted(
        tmp_path, home_secrets, what, confirmed):
    project = Project(tmp_path, BEFORE)
    project.env["DEPLOY_TOKEN"] = TOKEN
    reference = "{env:DEPLOY_TOKEN}" if what == "env" else "{file:~/.ssh/id_ed25519}"
    secret = TOKEN if what == "env" else KEY_BODY
    await project.agent_writes({**BEFORE, "agent": {"build": {"prompt": f"Use {reference} when asked."}}},
                               via="write", before=BEFORE)

    with _held(confirmed):
        sent, held = await _first_request(project, accept_config=confirmed)
    assert secret not in sent
    if confirmed:
        assert "[redacted:" in sent  # it was substituted, and the redaction hid it
        return
    assert held is not None
    shown = held.message()
    assert "agent.build.prompt" in shown and secret not in shown
    assert ("$DEPLOY_TOKEN" in shown) if what == "env" else (str(home_secrets / ".ssh" / "id_ed25519") in shown)
    assert "redacted" in shown, shown


async def test_control_without_the_redaction_a_confirmed_secret_reaches_the_model_in_clear(
        tmp_path, home_secrets, monkeypatch):
    """The redaction of system prompts is what hides it: with the redactor knowing nothing, the token is sent."""
    project = Project(tmp_path, BEFORE)
    project.env["DEPLOY_TOKEN"] = TOKEN
    await project.agent_writes({**BEFORE, "agent": {"build": {"prompt": "Use {env:DEPLOY_TOKEN}."}}},
                               via="write", before=BEFORE)
    monkeypatch.setattr(secrets, "active", lambda: secrets.Redactor({}))
    monkeypatch.setattr(secrets, "redact", lambda text: text)
    sent, _ = await _first_request(project, accept_config=True)
    assert TOKEN in sent


async def test_a_secret_file_of_the_project_named_in_instructions_reaches_the_model_redacted(tmp_path):
    project = Project(tmp_path, {**BEFORE, "instructions": [".env"]})
    (project.root / ".env").write_text(f"DEPLOY_TOKEN={TOKEN}\n")
    sent, held = await _first_request(project)  # the person's own configuration: no change to judge
    assert held is None and ".env" in sent and TOKEN not in sent
