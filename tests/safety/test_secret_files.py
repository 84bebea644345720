"""A secret that lives only in a file (`.env`, a key, `.netrc`) stays out of what the model and the store see.

Each test runs a real workspace with the scripted model calling real tools, under the default rules, in a
project whose `.env` holds a live-looking key that no variable holds. Nobody is present
(`OPENCODE_NB_PERMISSION=deny`) unless a test plays the person. By effect:

- every tool that names such a file asks `read` for it, so with nobody there the key never reaches the
  model, the store (the SQLite files' bytes) or the tool-output folder;
- a program that walks a folder itself cannot be judged by name, so it runs, and what holds is that the
  file's values are known secrets: the key shows as `[redacted: .env:STRIPE_KEY]`;
- a person allowing the read lets the model see the file with its values still redacted;
- templates (`.env.example`) and ordinary files (`keys.txt`) read without asking, in clear.

Each test makes its own key: the values a process has learned stay secret for its life, and a key an
earlier test taught would make a later one pass for the wrong reason.
"""

from __future__ import annotations

import asyncio
import secrets as random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from opencode_nb import Workspace
from opencode_nb.provider import Scripted

from .harness import MODES, sandbox_skip_reason


def new_key() -> str:
    return "sk_live_" + random.token_hex(16)


class Project:
    """A project whose `.env` holds `key`, run with the default rules and nobody present, or a person who
    answers every ask with `answer`."""

    def __init__(self, tmp_path: Path, sandbox: str = "off", answer: str | None = None) -> None:
        self.tmp = tmp_path
        self.root = tmp_path / "proj"
        (self.root / ".git").mkdir(parents=True)
        self.key = new_key()
        (self.root / ".env").write_text(f"# payments\nexport STRIPE_KEY=\"{self.key}\"\nDEBUG=1\n")
        (self.root / ".env.example").write_text("STRIPE_KEY=sk_test_placeholder_value\n")
        (self.root / "keys.txt").write_text("ordinary notes about key handling\n")
        (self.root / "app.py").write_text("import os\nKEY = os.environ['STRIPE_KEY']\n")
        self.sandbox = sandbox
        self.answer = answer
        self.asked: list[Any] = []

    def run(self, *calls: dict[str, Any]) -> Any:
        """One prompt whose model makes `calls` (one step each); the run's tool parts and result."""
        def on_ask(request: Any) -> str:
            self.asked.append(request)
            assert self.answer is not None
            return self.answer

        env = {"XDG_CONFIG_HOME": str(self.tmp / "xdg"), "HOME": str(self.tmp), "OPENCODE_NB_PERMISSION": "deny"}
        ws = Workspace(self.root, {"model": "scripted/demo", "sandbox": self.sandbox}, data_dir=self.tmp / "data",
                       env=env, on_ask=on_ask if self.answer is not None else None)
        model = Scripted([*({"tool_calls": [call]} for call in calls), {"text": "done"}])
        ws.providers.register("scripted", model)
        try:
            session = ws.sessions.create().id
            result = asyncio.run(asyncio.wait_for(ws.prompt(session, "go"), 60))
            tools = [p.state for m in ws.sessions.messages(session) for p in m.parts if p.type == "tool"]
            ws.sessions.flush()
            return Outcome(self, tools, result, model)
        finally:
            ws.close()


class Outcome:
    def __init__(self, project: Project, tools: list[Any], result: Any, model: Scripted) -> None:
        self.project, self.tools, self.result, self.model = project, tools, result, model

    @property
    def texts(self) -> list[str]:
        return [getattr(s, "output", None) or getattr(s, "error", "") for s in self.tools]

    def asked_read(self) -> list[str]:
        """The `read` asks the unattended policy refused."""
        return [d.subject for d in self.result.unattended if d.subject.startswith("read ")]

    def assert_key_nowhere(self) -> None:
        key = self.project.key.encode()
        data = self.project.tmp / "data"
        for path in data.rglob("*"):  # the SQLite files (with their journal) and the tool-output folder
            if path.is_file():
                assert key not in path.read_bytes(), f"the key reached {path.relative_to(data)}"
        for request in self.model.requests:
            assert self.project.key not in request.model_dump_json(), "the key reached the model"


def bash(command: str) -> dict[str, Any]:
    return {"name": "bash", "input": {"command": command, "timeout": 20}}


@pytest.fixture(params=MODES)
def sandbox(request: pytest.FixtureRequest) -> Iterator[str]:
    """Shell commands run with the OS sandbox (`required`, real bubblewrap) and without it (`off`)."""
    reason = sandbox_skip_reason(request.param)
    if reason is not None:
        pytest.skip(reason)
    yield request.param


@pytest.mark.parametrize("command", [
    "cat .env",
    "grep sk_live .env",
    "source .env && echo $STRIPE_KEY",
    ". ./.env; echo \"$STRIPE_KEY\"",
    "base64 < .env",
    "cp .env copied.txt",
    "cat .e*",
    "head -c 400 ./config/../.env",
])
def test_a_shell_command_naming_a_secret_file_asks_and_nobody_present_refuses(tmp_path, sandbox, command):
    (tmp_path / "proj" / "config").mkdir(parents=True)
    project = Project(tmp_path, sandbox)
    outcome = project.run(bash(command))
    [state] = outcome.tools
    assert state.status == "error", state
    assert outcome.asked_read() == ["read .env"]
    assert not (project.root / "copied.txt").exists()
    outcome.assert_key_nowhere()


def test_a_link_to_a_secret_file_is_judged_by_the_file_it_leads_to(tmp_path, sandbox):
    project = Project(tmp_path, sandbox)
    (project.root / "notes.txt").symlink_to(".env")
    outcome = project.run(bash("cat notes.txt"), {"name": "read", "input": {"path": "notes.txt"}})
    assert [s.status for s in outcome.tools] == ["error", "error"]
    assert outcome.asked_read() == ["read .env", "read .env"]
    outcome.assert_key_nowhere()


@pytest.mark.parametrize("call", [
    {"name": "read", "input": {"path": ".env"}},
    {"name": "grep", "input": {"pattern": "sk_live", "path": ".env"}},
])
def test_the_read_and_grep_tools_ask_to_read_a_secret_file_and_nobody_present_refuses(tmp_path, call):
    project = Project(tmp_path)
    outcome = project.run(call)
    [state] = outcome.tools
    assert state.status == "error"
    assert outcome.asked_read() == ["read .env"]
    outcome.assert_key_nowhere()


@pytest.mark.parametrize("engine", ["rg", "python"])
def test_a_grep_over_the_folder_leaves_secret_files_out_and_says_so_whether_or_not_they_match(
        tmp_path, monkeypatch, engine):
    if engine == "python":
        monkeypatch.setattr("opencode_nb.tool.grep.shutil.which", lambda name: None)
    project = Project(tmp_path)
    outcome = project.run({"name": "grep", "input": {"pattern": "sk_live"}},
                          {"name": "grep", "input": {"pattern": "no such text anywhere"}})
    matching, missing = outcome.texts
    assert outcome.asked_read() == [], "a folder search does not ask for every secret file in the tree"
    assert matching.startswith("No matches found.\n\n(Not searched: 1 file that usually holds secrets (.env);")
    assert matching == missing, "the note must not tell whether .env matched"
    outcome.assert_key_nowhere()


@pytest.mark.parametrize("command", ["grep -R sk_live .", "tar cf - . | tar xOf -"])
def test_a_program_reading_a_folder_runs_but_shows_the_key_redacted(tmp_path, sandbox, command):
    project = Project(tmp_path, sandbox)
    outcome = project.run(bash(command))
    [state] = outcome.tools
    assert state.status == "completed", state
    assert outcome.result.unattended == [], "nothing in the line names the file: it cannot be judged by name"
    assert state.metadata["sandbox"] == ("none" if sandbox == "off" else "bwrap")
    assert "STRIPE_KEY=\"[redacted: .env:STRIPE_KEY]\"" in state.output
    outcome.assert_key_nowhere()


def test_a_person_allowing_the_read_lets_the_model_see_the_file_with_its_value_redacted(tmp_path, sandbox):
    """The person allowed reading the file: its names, its layout, which keys are set. The value itself stays
    a secret: nothing the model writes needs it in clear, and code it runs reads it from the file."""
    project = Project(tmp_path, sandbox, answer="once")
    outcome = project.run(bash("cat .env"), {"name": "read", "input": {"path": ".env"}},
                          {"name": "grep", "input": {"pattern": "STRIPE", "path": ".env"}})
    assert [s.status for s in outcome.tools] == ["completed"] * 3
    assert [a.permission for a in project.asked].count("read") == 3
    for text in outcome.texts:
        assert "[redacted: .env:STRIPE_KEY]" in text
    outcome.assert_key_nowhere()


def test_a_secret_file_written_after_the_workspace_opened_is_redacted_at_the_next_call(tmp_path, sandbox):
    project = Project(tmp_path, sandbox)
    late = new_key()
    outcome = project.run(bash("printf 'API_TOKEN=%s\\n' \"$(rev <<< " + late[::-1] + ")\" > .env.local"),
                          bash("grep -R API_TOKEN ."))
    assert [s.status for s in outcome.tools] == ["completed", "completed"]
    assert "API_TOKEN=[redacted: .env.local:API_TOKEN]" in outcome.texts[1]
    project.key = late
    outcome.assert_key_nowhere()


def test_a_secret_file_deep_in_the_tree_is_redacted_once_a_tool_reads_it(tmp_path):
    project = Project(tmp_path, answer="once")
    deep = project.root / "services" / "api" / "config"
    deep.mkdir(parents=True)
    (deep / ".env").write_text(f"DB_PASS={project.key}\n")
    (project.root / ".env").write_text("NOTHING=here\n")
    outcome = project.run({"name": "read", "input": {"path": "services/api/config/.env"}})
    assert "DB_PASS=[redacted: services/api/config/.env:DB_PASS]" in outcome.texts[0]
    outcome.assert_key_nowhere()


@pytest.mark.parametrize("call", [
    {"name": "read", "input": {"path": ".env.example"}},
    {"name": "read", "input": {"path": "keys.txt"}},
    bash("cat .env.example keys.txt"),
    bash("ls -la .env && test -f .env && stat -c %s .env"),
])
def test_templates_lookalikes_and_a_secret_file_s_name_alone_need_no_asking(tmp_path, call):
    project = Project(tmp_path)
    outcome = project.run(call)
    [state] = outcome.tools
    assert state.status == "completed", state
    assert outcome.result.unattended == []
    assert any(text in state.output for text in ("sk_test_placeholder_value", "ordinary notes", ".env\n"))
    outcome.assert_key_nowhere()
