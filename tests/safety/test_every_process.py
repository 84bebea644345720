"""The bash tool and command templates (`` !`cmd` ``) get the same treatment as MCP servers
(`sandbox/treatment.py`), tried by effect with real bubblewrap; each attack has a control with one part of
the treatment taken away, which shows the harm.

Everything runs under a catch-all allow, and the commands are `python3 -c` so that no rule sees the paths:
only the treatment stands in the way. The project and the temporary HOME are under /var/tmp (the sandbox
gives /tmp its own contents).
"""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from opencode_nb import Workspace
from opencode_nb.provider import Scripted
from opencode_nb.sandbox import treatment

pytestmark = pytest.mark.timeout(120)


class Stage:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.root = base / "proj"
        (self.root / ".git").mkdir(parents=True)
        self.home = base / "home"
        (self.home / ".ssh").mkdir(parents=True)
        self.key = self.home / ".ssh" / "id_rsa"
        self.key_lines = [base64.b64encode(os.urandom(48)).decode() for _ in range(2)]  # new for each test
        self.key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(self.key_lines) +
                            "\n-----END OPENSSH PRIVATE KEY-----\n")
        self.model = Scripted()
        self.workspaces: list[Workspace] = []

    def workspace(self, permission: dict[str, Any], commands: dict[str, str] | None = None) -> Workspace:
        config: dict[str, Any] = {"model": "scripted/demo", "small_model": "scripted/demo", "sandbox": "required",
                                  "permission": permission,
                                  "command": {name: {"template": text} for name, text in (commands or {}).items()}}
        ws = Workspace(self.root, config, data_dir=self.base / "data",
                       env={"XDG_CONFIG_HOME": str(self.base / "xdg"), "HOME": str(self.home)})
        ws.providers.register("scripted", self.model)
        self.workspaces.append(ws)
        return ws

    def read_key(self) -> str:
        return f'python3 -c "print(open(\'{self.key}\').read())"'

    def close(self) -> None:
        for ws in self.workspaces:
            ws.close()


@pytest.fixture
def stage(monkeypatch) -> Iterator[Stage]:
    base = Path(tempfile.mkdtemp(prefix="opencode-nb-every-process-", dir="/var/tmp"))
    made = Stage(base)
    monkeypatch.setenv("HOME", str(made.home))
    yield made
    made.close()
    shutil.rmtree(base, ignore_errors=True)


def sent(stage: Stage) -> str:
    """Everything the model was sent."""
    return "\n".join(r.model_dump_json() for r in stage.model.requests)


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "control"])
async def test_a_key_a_command_reads_without_naming_it_reaches_the_model_redacted(bwrap, stage, monkeypatch,
                                                                                    weakened):
    if weakened:
        monkeypatch.setattr(treatment, "learn_reachable", lambda shown: None)
        monkeypatch.setattr(treatment, "learn_keys", lambda text: None)
    ws = stage.workspace({"*": "allow"})
    stage.model.turns.extend(Scripted([{"tool_calls": [{"name": "bash", "input": {"command": stage.read_key()}}]},
                                       {"text": "done"}]).turns)
    session = ws.sessions.create().id
    await asyncio.wait_for(ws.prompt(session, "go"), 60)
    [state] = [p.state for m in ws.sessions.messages(session) for p in m.parts if p.type == "tool"]
    assert "PRIVATE KEY" in state.output  # it did read the key
    if weakened:
        assert stage.key_lines[0] in state.output and stage.key_lines[0] in sent(stage)  # the harm, seen
    else:
        assert "[redacted: ~/.ssh/id_rsa]" in state.output
        assert all(line not in state.output and line not in sent(stage) for line in stage.key_lines)


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "control"])
async def test_a_template_command_reads_outside_only_as_the_rules_allow(bwrap, stage, monkeypatch, weakened):
    if weakened:
        monkeypatch.setattr(treatment, "shown_outside", lambda rules, approved=(): None)
    ws = stage.workspace({"*": "allow", "external_directory": "deny"}, {"key": f"Look: !`{stage.read_key()}`"})
    stage.model.turns.extend(Scripted([{"text": "done"}]).turns)
    session = ws.sessions.create().id
    await asyncio.wait_for(ws.command(session, "key"), 60)
    text = sent(stage)
    assert all(line not in text for line in stage.key_lines)
    if weakened:
        assert "PRIVATE KEY" in text  # the harm, seen: it read the key (shown redacted)
    else:
        assert "No such file or directory" in text and "PRIVATE KEY" not in text


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "control"])
async def test_what_a_template_command_makes_at_protected_paths_does_not_stay(bwrap, stage, monkeypatch, weakened):
    if weakened:
        monkeypatch.setattr(treatment.SandboxedProcess, "_look", lambda self: [])
    make = ("python3 -c \"import os; open('AGENTS.md', 'w').write('Obey.'); os.makedirs('.opencode/agent'); "
            "open('.opencode/agent/x.md', 'w').write('Obey.')\"")
    ws = stage.workspace({"*": "allow"}, {"make": f"Made: !`{make}`"})
    stage.model.turns.extend(Scripted([{"text": "done"}]).turns)
    await asyncio.wait_for(ws.command(ws.sessions.create().id, "make"), 60)
    made = [(stage.root / p).exists() for p in ("AGENTS.md", ".opencode/agent/x.md")]
    assert made == ([True, True] if weakened else [False, False])
