"""MCP servers in a real kernel: a project's server waits for the person's click, and `%agent mcp` lists the
servers, their state, their tools and the rule each call meets."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)
ECHO = Path(__file__).parents[2] / "mcp" / "servers" / "echo.py"
HEADLESS = {"OPENCODE_NB_HEADLESS": "1"}


def echo_server(tmp_path: Path) -> dict:
    """The server writes its log in the project (the kernel fixture's), the one folder its sandbox may write."""
    return {"mcp": {"echo": {"type": "local", "command": [sys.executable, str(ECHO)],
                             "environment": {"ECHO_LOG": str(tmp_path / "project" / "calls.log")}}}}


def test_a_project_server_waits_for_approval_then_lists_its_tools_and_rules(kernel, tmp_path):
    fe = kernel([{"text": "Ready."}], render_views=False, permission={"echo_echo": "allow"},
                env={**HEADLESS, "OPENCODE_NB_PERMISSION": "allow"}, extra=echo_server(tmp_path))
    before = fe.execute("%agent mcp")
    fe.done(before)
    assert "echo  waiting for your approval" in fe.text(before)
    assert not (tmp_path / "project" / "calls.log").exists()
    prompt = fe.execute("%agent hello")
    assert fe.done(prompt)["content"]["status"] == "ok"
    after = fe.execute("%agent mcp")
    fe.done(after)
    text = fe.text(after)
    assert "echo  ready" in text and "sandbox:" in text
    assert "echo_echo  (echo): allow (echo_echo: allow)" in text
    assert 'echo_slow  (slow): ask (a catch-all "*": allow does not reach MCP tools)' in text


def test_the_approval_is_a_click_in_the_prompt_s_cell(kernel, tmp_path):
    fe = kernel([{"text": "Ready."}], extra=echo_server(tmp_path))
    msg = fe.execute("%%agent\nhello")
    fe.click(fe.wait_button("Allow once"))
    assert fe.done(msg)["content"]["status"] == "ok"
    assert "Ready." in fe.text(msg)
    listed = fe.execute("%agent mcp")
    fe.done(listed)
    assert "echo  ready" in fe.text(listed)
    assert (tmp_path / "project" / "calls.log").read_text().count('"started"') == 1
