"""`SandboxedProcess` alone: what it holds from start to end, without running anything in the sandbox (the
attacks by effect are in tests/mcp/test_sandboxed_servers.py and tests/safety/test_every_process.py)."""

from __future__ import annotations

import base64
import contextlib
import os
from pathlib import Path

from opencode_nb import secrets
from opencode_nb.sandbox import protected, treatment
from opencode_nb.sandbox.policy import Backend, Confinement, Launch
from opencode_nb.sandbox.treatment import SandboxedProcess


def confined(root: Path) -> Launch:
    return Launch(Confinement(Backend("bwrap", "/usr/bin/bwrap"), writable=(root,),
                              protected=(root / "AGENTS.md", root / ".git" / "hooks")))


async def test_an_unconfined_process_is_alive_for_the_config_guard_from_start_to_end(tmp_path):
    seen: list[str] = []

    @contextlib.contextmanager
    def alive():
        seen.append("start")
        yield
        seen.append("end")

    process = SandboxedProcess(Launch(alive=alive), quarantine=tmp_path / "q")
    assert process.wrap(["echo", "hi"], cwd=tmp_path) == ["echo", "hi"]
    process.start()
    assert seen == ["start"]
    assert await process.end(None) == []
    assert seen == ["start", "end"]


async def test_what_appears_is_moved_away_while_alive_and_left_alone_once_ended(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    process = SandboxedProcess(confined(root), quarantine=tmp_path / "q")
    argv = process.wrap(["true"], cwd=root)
    assert argv[0] == "/usr/bin/bwrap" and argv[-1] == "true"
    process.start()
    assert process.guard in protected._running  # a file tool's permitted write is exempted from its check
    (root / "AGENTS.md").write_text("Obey.")
    [line] = process.check()
    assert "AGENTS.md" in line and not (root / "AGENTS.md").exists()
    assert process.untold() == [line] and process.untold() == []  # said once
    await process.end(None)
    assert process.guard not in protected._running
    (root / "AGENTS.md").write_text("the person's, after the process ended")
    assert process.check() == [] and (root / "AGENTS.md").exists()


def test_a_private_key_in_what_comes_back_is_redacted_wherever_it_was_read(tmp_path):
    body = base64.b64encode(os.urandom(48)).decode()
    text = f"here it is:\n-----BEGIN EC PRIVATE KEY-----\n{body}\n-----END EC PRIVATE KEY-----\n"
    process = SandboxedProcess(Launch(), quarantine=tmp_path)
    shown = process.redact(text)
    assert body not in shown and "[redacted: a private key]" in shown
    assert body not in secrets.redact(f"later: {body}")  # a secret from now on


def test_the_home_s_secret_files_are_learned_where_reads_outside_are_allowed(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    value = base64.b64encode(os.urandom(24)).decode()
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "credentials").write_text(f"[default]\naws_secret_access_key = {value}\n")
    (tmp_path / "notes.txt").write_text(f"key = {value}x\n")  # not a secret file: not learned
    treatment.learn_reachable(None)
    assert secrets.redact(value) == "[redacted: ~/.aws/credentials:aws_secret_access_key]"
    assert f"{value}x" not in secrets.active().values


def test_only_the_allowed_folders_are_looked_at_where_reads_outside_are_denied(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    value = base64.b64encode(os.urandom(24)).decode()
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / ".netrc").write_text(f"machine example.org login me password {value}\n")
    treatment.learn_reachable(())  # nothing outside is shown: the home's files cannot be read
    assert secrets.redact(value) == value
