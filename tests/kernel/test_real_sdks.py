"""A notebook prompt on the real anthropic and openai SDKs, against a loopback server that speaks their wire
protocol: the kernel streams from it, the person approves a command, and the tool result goes back."""

from __future__ import annotations

import json

import pytest

from tests.provider.wire_anthropic import anthropic_stream
from tests.provider.wire_openai import openai_stream
from tests.provider.wire_server import WireServer

pytestmark = pytest.mark.timeout(90)
TITLES = {"small_model": "scripted/title"}  # titles come from the scripted model: only steps reach the server
NO_KEYS = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "OPENAI_BASE_URL": "http://127.0.0.1:9"}


def test_anthropic_in_a_notebook_streams_asks_and_sends_the_tool_result_back(kernel):
    with WireServer() as server:
        server.queue(
            anthropic_stream({"text": "Checking over the wire."},
                             {"tool": "bash", "id": "toolu_1", "json": json.dumps(
                                 {"command": "echo wire-ok", "description": "Check the shell"})}, stop="tool_use"),
            anthropic_stream({"text": "The shell said **wire-ok**."}))
        fe = kernel([], env=NO_KEYS, extra={
            **TITLES, "model": "anthropic/claude-sonnet-4-6",
            "provider": {"scripted": {"script": []}, "anthropic": {"base_url": server.url, "api_key": "sk-test"}}})
        msg = fe.execute("%%agent\ncheck the shell")
        fe.click(fe.wait_button("Allow once"))
        assert fe.done(msg)["content"]["status"] == "ok"
        text = fe.text(msg)
        assert "anthropic/claude-sonnet-4-6" in text and "The shell said **wire-ok**." in text
        assert "build asked for bash echo wire-ok: allowed once" in text
        sent = server.received[1].body["messages"]
        result = next(b for m in sent for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
        assert "wire-ok" in json.dumps(result)


def test_openai_in_a_notebook_streams_and_answers(kernel):
    with WireServer() as server:
        server.queue(openai_stream("Hello from the OpenAI wire."))
        fe = kernel([], render_views=False, env={**NO_KEYS, "OPENCODE_NB_HEADLESS": "1"}, extra={
            **TITLES, "model": "openai/gpt-5",
            "provider": {"scripted": {"script": []}, "openai": {"base_url": f"{server.url}/v1", "api_key": "sk-t"}}})
        msg = fe.execute("%agent say hello")
        assert fe.done(msg)["content"]["status"] == "ok"
        assert "Hello from the OpenAI wire." in fe.text(msg)
        assert server.received[0].path.endswith("/chat/completions") or "responses" in server.received[0].path
