"""Workspaces with MCP servers from `servers/echo.py`, on the scripted model, and what the server logged."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from opencode_nb import Workspace
from opencode_nb.provider import Scripted

ECHO = Path(__file__).parent / "servers" / "echo.py"


def local_entry(log: Path, **extra: Any) -> dict[str, Any]:
    return {"type": "local", "command": [sys.executable, str(ECHO)], "environment": {"ECHO_LOG": str(log)}, **extra}


def calls(log: Path) -> list[dict[str, Any]]:
    """What the server logged: one entry per start (`started`) and per tool call."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def called(log: Path) -> list[str]:
    return [c["tool"] for c in calls(log) if c["tool"] != "started"]


class Project:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.root = tmp_path / "proj"
        (self.root / ".git").mkdir(parents=True)
        self.log = self.root / "calls.log"
        self.model = Scripted()
        self.env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)}

    def workspace(self, config: dict[str, Any] | None = None, **kwargs: Any) -> Workspace:
        ws = Workspace(self.root, {"model": "scripted/demo", "small_model": "scripted/demo", **(config or {})},
                       data_dir=self.tmp / "data", env={**self.env, **kwargs.pop("env", {})}, **kwargs)
        ws.providers.register("scripted", self.model)
        return ws

    def script(self, *turns: dict[str, Any]) -> None:
        self.model.turns.extend(Scripted(list(turns)).turns)


@pytest.fixture
def project(tmp_path):
    return Project(tmp_path)


def tool_parts(ws: Workspace, session_id: str) -> list[Any]:
    return [p for m in ws.sessions.messages(session_id) for p in m.parts if p.type == "tool"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(transport: str, tmp_path: Path):
    port = free_port()
    log = tmp_path / f"{transport}-calls.log"
    process = subprocess.Popen([sys.executable, str(ECHO), transport, str(port)], env={"ECHO_LOG": str(log),
                               "PATH": "/usr/bin:/bin"}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    return process, port, log


@pytest.fixture
def http_server(tmp_path):
    """The echo server over streamable HTTP on loopback; yields (url, log)."""
    process, port, log = serve("http", tmp_path)
    try:
        yield f"http://127.0.0.1:{port}/mcp", log
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def sse_server(tmp_path):
    """The echo server over the older SSE transport on loopback; yields (url, log)."""
    process, port, log = serve("sse", tmp_path)
    try:
        yield f"http://127.0.0.1:{port}/sse", log
    finally:
        process.terminate()
        process.wait(10)
