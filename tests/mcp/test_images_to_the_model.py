"""An MCP tool's image reaches the model, over the real SDK's wire format, where the provider takes images."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.provider.wire_anthropic import anthropic_stream
from tests.provider.wire_server import WireServer

from .conftest import local_entry

pytestmark = pytest.mark.timeout(90)


async def test_an_image_from_a_server_is_in_the_tool_result_anthropic_receives(project, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with WireServer() as server:
        server.queue(
            anthropic_stream({"tool": "echo_picture", "id": "toolu_1", "json": "{}"}, stop="tool_use"),
            anthropic_stream({"text": "A red pixel."}))
        ws = project.workspace({
            "model": "anthropic/claude-sonnet-4-6", "small_model": "scripted/demo",
            "provider": {"anthropic": {"base_url": server.url, "api_key": "sk-test"}},
            "mcp": {"echo": local_entry(project.log)}, "permission": {"echo_*": "allow"}})
        session = ws.sessions.create()
        result = await asyncio.wait_for(ws.prompt(session.id, "show me"), 60)
        await ws.aclose()
    assert result.text == "A red pixel."
    offered = [t["name"] for t in server.received[0].body["tools"]]
    assert "echo_picture" in offered
    sent = server.received[1].body["messages"]
    [tool_result] = [b for m in sent for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    kinds = [block["type"] for block in tool_result["content"]]
    assert "image" in kinds and "a red pixel" in json.dumps(tool_result)
    [image] = [block for block in tool_result["content"] if block["type"] == "image"]
    assert image["source"]["media_type"] == "image/png" and image["source"]["data"].startswith("iVBOR")
