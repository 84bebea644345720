"""The administrator's managed file holds against every lower layer: checked by effect, through a real workspace
whose scripted model calls the tools and a person (or a headless policy) who says yes to everything."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from opencode_nb import Workspace
from opencode_nb.config import managed as managed_module
from opencode_nb.errors import ConfigError, person_summary
from opencode_nb.provider import Scripted


@pytest.fixture
def managed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The managed file, as the process would have found it named in its environment at start."""
    path = tmp_path / "etc" / "managed.yaml"
    path.parent.mkdir()
    monkeypatch.setattr(managed_module, "AT_START", str(path))
    return path


def workspace(tmp_path: Path, config: dict[str, Any] | None = None, *, project: str = "", env: Any = None,
              on_ask: Any = None) -> Workspace:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / "opencode.yaml").write_text(project or 'model: scripted/demo\npermission:\n  "*": allow\n')
    return Workspace(root, config, data_dir=tmp_path / "data", on_ask=on_ask,
                     env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path), **(env or {})})


async def bash(ws: Workspace, command: str, session: str | None = None) -> Any:
    session = session or ws.sessions.create().id
    ws.providers.register("scripted", Scripted([{"tool_calls": [{"name": "bash", "input": {"command": command}}]},
                                                {"text": "done"}]))
    await asyncio.wait_for(ws.prompt(session, "go"), 60)
    return [p.state for m in ws.sessions.messages(session) for p in m.parts if p.type == "tool"][-1]


async def test_a_managed_deny_holds_against_project_in_kernel_agent_rules_and_a_person_saying_always(
        tmp_path, managed):
    managed.write_text('permission:\n  bash:\n    "rm *": deny\n')
    victim = tmp_path / "proj" / "keep.txt"
    asked: list[Any] = []
    in_kernel = {"permission": {"bash": {"rm *": "allow"}},
                 "agent": {"build": {"permission": {"bash": {"rm *": "allow", "*": "allow"}}}}}
    with pytest.warns(Warning, match="managed by"):
        ws = workspace(tmp_path, in_kernel, on_ask=lambda request: asked.append(request) or "always")
    with ws:
        victim.parent.mkdir(parents=True, exist_ok=True)
        victim.write_text("kept")
        state = await bash(ws, f"rm {victim}")
        assert state.status == "error" and str(managed) in state.error, state
        assert person_summary(state.error) == (
            f"Denied by the administrator's managed rule bash 'rm *': deny ({managed})")
        assert victim.read_text() == "kept"
        assert asked == []  # refused before anybody was asked: there is nothing to say yes to
        assert any("allow does not loosen" in w and str(managed) in w for w in ws.warnings)
        state = await bash(ws, "echo fine")
        assert state.status == "completed", state  # the rest of the project's allow stands


async def test_a_managed_ask_is_never_answered_by_the_headless_allow_policy(tmp_path, managed):
    managed.write_text('permission:\n  bash:\n    "touch *": ask\n')
    with workspace(tmp_path, env={"OPENCODE_NB_PERMISSION": "allow"}) as ws:
        state = await bash(ws, "touch made")
        assert state.status == "error", state
        assert not (tmp_path / "proj" / "made").exists()
        state = await bash(ws, "echo allowed")
        assert state.status == "completed", state  # the policy still allows what the managed file does not hold


async def test_always_to_a_managed_ask_counts_once_and_the_next_call_asks_again(tmp_path, managed):
    managed.write_text('permission:\n  bash:\n    "touch *": ask\n')
    asked: list[Any] = []
    with workspace(tmp_path, on_ask=lambda request: asked.append(request) or "always") as ws:
        session = ws.sessions.create().id
        await bash(ws, "touch one", session)
        await bash(ws, "touch two", session)
        assert (tmp_path / "proj" / "one").exists() and (tmp_path / "proj" / "two").exists()
        assert len(asked) == 2


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux-only")
async def test_managed_sandbox_required_is_not_loosened_by_a_project_sandbox_off(tmp_path, managed):
    managed.write_text("sandbox: required\n")
    project = 'model: scripted/demo\nsandbox: off\npermission:\n  "*": allow\n'
    with pytest.warns(Warning, match="sandbox is managed by"):
        ws = workspace(tmp_path, {"sandbox": "off"}, project=project, env={"OPENCODE_NB_BWRAP": "/nonexistent/bwrap"})
    with ws:
        assert ws.config.sandbox == "required"
        state = await bash(ws, "touch unconfined")
        assert state.status == "error", state  # no sandbox on this "machine", and required refuses to run without
        assert not (tmp_path / "proj" / "unconfined").exists()


def test_managed_approvals_owner_is_not_loosened_by_a_project_or_in_kernel_anyone(tmp_path, managed):
    managed.write_text("approvals: owner\n")
    project = 'model: scripted/demo\napprovals: anyone\n'
    with pytest.warns(Warning, match="approvals is managed by"):
        ws = workspace(tmp_path, {"approvals": "anyone"}, project=project, env={"JUPYTERHUB_USER": "alice"})
    with ws:
        assert ws.config.approvals == "owner"
        assert ws.approvers is not None and ws.approvers.owner == "alice"


async def test_a_model_outside_the_managed_list_is_refused_naming_the_file(tmp_path, managed):
    managed.write_text("models: [scripted/demo]\nproviders: [scripted]\n")
    with workspace(tmp_path) as ws:
        session = ws.sessions.create().id
        with pytest.raises(ConfigError, match=rf"provider 'anthropic' is not allowed by the managed configuration "
                                              rf"{managed}"):
            await ws.prompt(session, "hello", model="anthropic/claude-sonnet-4-5")
        with pytest.raises(ConfigError, match=r"model 'scripted/other' is not allowed"):
            await ws.prompt(session, "hello", model="scripted/other")
        ws.providers.register("scripted", Scripted([{"text": "fine"}]))
        assert (await ws.prompt(session, "hello")).text == "fine"


def test_a_base_url_outside_the_managed_list_is_refused(tmp_path, managed):
    managed.write_text('base_urls: ["https://llm.example.edu/*"]\n')
    project = 'model: openai/gpt-5\nprovider:\n  openai:\n    base_url: "http://127.0.0.1:9/v1"\n    api_key: k\n'
    with pytest.warns(Warning, match="base URL"), workspace(tmp_path, project=project) as ws, \
            pytest.raises(ConfigError, match=str(managed)):
        ws.providers.resolve("openai/gpt-5")


async def _prompt_with_server(tmp_path: Path, marker: Path) -> Workspace:
    server = [sys.executable, "-c", f"open({str(marker)!r}, 'w').write('x')"]
    with workspace(tmp_path, {"mcp": {"rogue": {"type": "local", "command": server}}}) as ws:
        ws.providers.register("scripted", Scripted([{"text": "done"}]))
        await ws.prompt(ws.sessions.create().id, "go")
        for _ in range(50):  # a server that starts writes its marker at once
            if marker.exists():
                break
            await asyncio.sleep(0.1)
        return ws


async def test_an_unlisted_mcp_server_never_starts(tmp_path, managed):
    marker = tmp_path / "proj" / "started"  # inside the project: a sandboxed server could write it there
    managed.write_text("mcp: [approved]\n")
    with pytest.warns(Warning, match="mcp.rogue: not started"):
        ws = await _prompt_with_server(tmp_path, marker)
    assert "rogue" not in ws.config.mcp
    assert not marker.exists()


async def test_a_listed_mcp_server_starts_so_the_unlisted_case_can_fail(tmp_path, managed):
    marker = tmp_path / "proj" / "started"
    managed.write_text("mcp: [rogue]\n")
    ws = await _prompt_with_server(tmp_path, marker)
    assert "rogue" in ws.config.mcp
    assert marker.exists()


async def test_a_feature_turned_off_is_not_offered_to_the_model(tmp_path, managed):
    managed.write_text("disabled: [webfetch, python_live]\n")
    offered: list[list[str]] = []

    def respond(request: Any) -> dict[str, Any]:
        offered.append([tool.name for tool in request.tools])
        return {"text": "done"}

    with workspace(tmp_path, {"agent": {"build": {"permission": {"webfetch": "allow"}}}}) as ws:
        ws.providers.register("scripted", Scripted(respond=respond))
        await ws.prompt(ws.sessions.create().id, "go")
        assert offered and "webfetch" not in offered[0] and "bash" in offered[0]
        assert ws.permissions.managed is not None
        assert ws.permissions.managed.decide("python", ["live"])[0] == "deny"


def test_a_broken_managed_file_fails_closed_naming_file_line_and_key(tmp_path, managed):
    managed.write_text("sandbox: required\npermision:\n  bash: deny\n")
    with pytest.raises(ConfigError, match=rf"{managed}:2 permision: is not a key of the managed configuration"):
        workspace(tmp_path)
    with pytest.raises(ConfigError, match=r"did you mean permission\?"):
        workspace(tmp_path)
    managed.write_text("sandbox: requird\n")
    with pytest.raises(ConfigError, match=rf"{managed}:1 sandbox: 'requird' is not one of .*did you mean required\?"):
        workspace(tmp_path)


def test_a_named_managed_file_that_is_missing_fails_closed(tmp_path, monkeypatch):
    monkeypatch.setattr(managed_module, "AT_START", str(tmp_path / "nowhere.yaml"))
    with pytest.raises(ConfigError, match="managed configuration"):
        workspace(tmp_path)


def test_the_variable_set_after_start_is_not_read(tmp_path, monkeypatch):
    monkeypatch.setattr(managed_module, "AT_START", None)
    monkeypatch.setenv("OPENCODE_NB_MANAGED_CONFIG", str(tmp_path / "agent-written.yaml"))
    assert managed_module.managed_path() in (None, managed_module.DEFAULT_PATH)


def test_the_config_view_marks_managed_values_and_says_what_they_override(tmp_path, managed):
    from opencode_nb.config.explain import explain

    managed.write_text("sandbox: required\n")
    project = "model: scripted/demo\nsandbox: off\n"
    with pytest.warns(Warning, match="sandbox is managed by"), workspace(tmp_path, project=project) as ws:
        shown = {s.path: s.source for s in explain(ws.loaded)}
        assert shown[("sandbox",)] == f"managed: {managed}:1"
        assert shown[("model",)].endswith("opencode.yaml:1")
        notices = ws.managed_notices()
        assert str(managed) in notices[0]
        assert any("opencode.yaml:2: sandbox: off is not applied" in n for n in notices), notices


async def test_the_agent_cannot_write_the_managed_file_even_when_everything_is_allowed(tmp_path, managed):
    managed.write_text("sandbox: auto\n")
    with workspace(tmp_path, {"permission": {"*": "allow", "agent_config": "allow", "external_directory": "allow"}},
                   on_ask=lambda request: "always") as ws:
        ws.providers.register("scripted", Scripted([
            {"tool_calls": [{"name": "write", "input": {"path": str(managed), "content": "{}\n"}}]}, {"text": "done"}]))
        session = ws.sessions.create().id
        await ws.prompt(session, "go")
        assert managed.read_text() == "sandbox: auto\n"
        state = [p.state for m in ws.sessions.messages(session) for p in m.parts if p.type == "tool"][-1]
        assert state.status == "error" and "managed configuration" in state.error, state
