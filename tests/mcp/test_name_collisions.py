"""Two servers' tools that would share one name get names of their own, the same on every start.

`mcp` + `external_directory` and `external` + `directory` are both `mcp_external_directory` (the second after the
reserved-name prefix). Were the first to list its tools to keep the name and the next to get `_2`, the name would
follow start order, and an "always" given to one server's tool would let the other's run on the next start. Run
for real with two servers (`servers/named.py`) started in both orders: the person says "always" to `mcp`'s tool;
after a restart in the other order, `external`'s tool still asks. The control judges collisions by start order
again and sees `external`'s tool run without asking.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from opencode_nb.mcp import servers as mcp_servers
from opencode_nb.mcp.tool import could_collide, distinct_name, tool_name

from .conftest import tool_parts

pytestmark = pytest.mark.timeout(120)

NAMED = Path(__file__).parent / "servers" / "named.py"
PAIR = {"mcp": "external_directory", "external": "directory"}


def entries(log: Path, first: str) -> dict[str, Any]:
    """Both servers, `first` listing its tools well before the other."""
    return {server: {"type": "local", "command": [sys.executable, str(NAMED)],
                     "environment": {"NAMED_LOG": str(log.with_suffix(f".{server}")), "NAMED_TOOLS": tool,
                                     "NAMED_DELAY": "0" if server == first else "2.5"}, "timeout": 20000}
            for server, tool in PAIR.items()}


def ids(ws: Any) -> dict[str, str]:
    return {s.entry.name: s.tools[0][0] for s in ws.mcp.states() if s.tools}


async def run(project, first: str, person, call: str, session_id: str | None = None) -> tuple[dict[str, str], Any]:
    """A workspace with both servers started `first` first; the model calls `call`'s tool. Returns the tool ids
    and the session."""
    ws = project.workspace({"mcp": entries(project.root / "named", first)}, on_ask=person)
    session = ws.sessions.get(session_id) if session_id else ws.sessions.create()
    try:
        await asyncio.wait_for(ws.mcp.prepare(session.id, "build"), 60)
        names = ids(ws)
        assert set(names) == set(PAIR), ws.mcp.states()
        project.script({"tool_calls": [{"name": names[call], "input": {}}]}, {"text": "done"})
        await asyncio.wait_for(ws.prompt(session.id, "go"), 60)
        assert tool_parts(ws, session.id)
    finally:
        await ws.aclose()
    return names, session


def ran(project, server: str) -> list[str]:
    log = (project.root / "named").with_suffix(f".{server}")
    return [json.loads(line)["tool"] for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "control"])
async def test_always_for_one_servers_tool_never_lets_the_others_run(project, monkeypatch, weakened):
    if weakened:  # collisions judged by who listed first, as a `_2` suffix would
        monkeypatch.setattr(mcp_servers, "could_collide", lambda *args: False)
    names1, session = await run(project, "mcp", lambda request: "always", "mcp")
    assert ran(project, "mcp") == ["external_directory"]
    asked: list[Any] = []

    def person(request: Any) -> str:
        asked.append(request.permission)
        return "reject"

    names2, _ = await run(project, "external", person, "external", session.id)
    if weakened:
        assert names2["external"] == names1["mcp"]  # the name moved with the start order...
        assert ran(project, "external") == ["directory"] and asked == []  # ...and the grant with it: the harm
        return
    assert names1 == names2  # the same names, whichever started first
    assert names1["mcp"] != names1["external"]
    assert asked == [names2["external"]] and ran(project, "external") == []  # it asked, was refused, never ran


def test_the_name_of_a_colliding_tool_is_its_own_and_stable():
    servers = ["a", "a_b", "mcp", "external", "other"]
    assert could_collide("a_b", "c", servers) and could_collide("a", "b_c", servers)
    assert distinct_name("a_b", "c") != distinct_name("a", "b_c")
    assert distinct_name("a_b", "c") == distinct_name("a_b", "c")
    assert could_collide("mcp", "external_directory", servers) and could_collide("external", "directory", servers)
    assert distinct_name("mcp", "external_directory") != distinct_name("external", "directory")
    assert not could_collide("other", "tool", servers) and not could_collide("a", "x", servers)
    long = "x" * 70
    assert len(distinct_name("a", long)) == 64 and distinct_name("a", long) != distinct_name("a", long + "y")
    assert tool_name("a", "x") == "a_x"
