"""MCP servers' tools through the real loop: a real server built with the SDK, run as the config says, called
by the scripted model; the server's own log shows what it was asked to do."""

from __future__ import annotations

import asyncio

import pytest

from opencode_nb.sandbox.policy import Backend, find_backend
from opencode_nb.views.asks import permission_html
from opencode_nb.views.render import tool_card_html

from .conftest import called, calls, local_entry, tool_parts

pytestmark = pytest.mark.timeout(90)


def answering(ws, reply: str, asked: list):
    def person(event):
        asked.append(event.request)
        asyncio.get_running_loop().call_soon(ws.permissions.reply, event.request.id, reply)

    ws.bus.subscribe("permission.asked", person)


async def test_a_tool_a_rule_allows_is_called_and_its_text_comes_back(project):
    ws = project.workspace({"mcp": {"echo": local_entry(project.log)}, "permission": {"echo_*": "allow"}})
    project.script({"tool_calls": [{"name": "echo_echo", "input": {"text": "hi"}}]}, {"text": "done"})
    session = ws.sessions.create()
    result = await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    [part] = tool_parts(ws, session.id)
    assert result.text == "done"
    assert part.state.status == "completed" and part.state.output == "echo: hi"
    assert part.state.metadata["structured"] == {"result": "echo: hi"}
    assert called(project.log) == ["echo"]
    await ws.aclose()


async def test_a_catch_all_allow_still_asks_and_the_prompt_names_server_tool_and_arguments(project):
    ws = project.workspace({"mcp": {"echo": local_entry(project.log)}})  # build's rules: "*": allow
    asked: list = []
    answering(ws, "reject", asked)
    project.script({"tool_calls": [{"name": "echo_echo", "input": {"text": "secret plan"}}]}, {"text": "done"})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    [request] = asked
    assert request.permission == "echo_echo"
    assert request.metadata["server"] == "echo" and request.metadata["tool"] == "echo"
    assert request.metadata["arguments"] == {"text": "secret plan"}
    html = permission_html(request)  # what the person sees: the server, the tool and the arguments
    assert "MCP server echo, tool echo" in html and "secret plan" in html
    [part] = tool_parts(ws, session.id)
    assert part.state.status == "error"
    assert called(project.log) == []  # rejected: the server never saw the call
    await ws.aclose()


async def test_a_tool_a_rule_denies_is_not_offered_and_never_called(project):
    ws = project.workspace({"mcp": {"echo": local_entry(project.log)},
                            "permission": {"echo_*": "allow", "echo_echo": "deny"}})
    project.script({"tool_calls": [{"name": "echo_echo", "input": {"text": "hi"}}]}, {"text": "done"})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    offered = {t.name for t in project.model.requests[0].tools}
    assert "echo_slow" in offered and "echo_echo" not in offered
    [part] = tool_parts(ws, session.id)
    assert part.state.status == "error"
    assert called(project.log) == []
    await ws.aclose()


async def test_an_agent_s_tools_switch_turns_a_server_s_tools_off(project):
    ws = project.workspace({"mcp": {"echo": local_entry(project.log)}, "permission": {"echo_*": "allow"},
                            "agent": {"build": {"tools": {"echo_*": False}}}})
    project.script({"text": "done"})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    assert not [t for t in project.model.requests[0].tools if t.name.startswith("echo_")]
    await ws.aclose()


async def test_a_server_that_crashes_mid_call_is_an_error_and_is_restarted_at_the_next_call(project):
    ws = project.workspace({"mcp": {"echo": local_entry(project.log)}, "permission": {"echo_*": "allow"}})
    project.script({"tool_calls": [{"name": "echo_crash", "input": {}}]},
                   {"tool_calls": [{"name": "echo_echo", "input": {"text": "again"}}]}, {"text": "done"})
    session = ws.sessions.create()
    result = await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    crashed, echoed = tool_parts(ws, session.id)
    assert crashed.state.status == "error"
    assert "stopped working during the call of crash" in crashed.state.error
    assert "starts again at the next call" in crashed.state.error
    assert echoed.state.status == "completed" and echoed.state.output == "echo: again"
    assert result.text == "done"
    assert [c["tool"] for c in calls(project.log)] == ["started", "crash", "started", "echo"]
    await ws.aclose()


async def test_a_server_slower_than_its_call_timeout_is_an_error_and_the_session_goes_on(project):
    ws = project.workspace({"mcp": {"echo": local_entry(project.log, call_timeout=1000)},
                            "permission": {"echo_*": "allow"}})
    project.script({"tool_calls": [{"name": "echo_slow", "input": {"seconds": 30}}]},
                   {"tool_calls": [{"name": "echo_echo", "input": {"text": "after"}}]}, {"text": "done"})
    session = ws.sessions.create()
    started = asyncio.get_running_loop().time()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    assert asyncio.get_running_loop().time() - started < 20
    slow, echoed = tool_parts(ws, session.id)
    assert slow.state.status == "error" and "did not answer the call of slow within 1 s" in slow.state.error
    assert echoed.state.output == "echo: after"
    await ws.aclose()


async def test_a_server_that_speaks_garbage_is_an_error_and_is_restarted(project):
    ws = project.workspace({"mcp": {"echo": local_entry(project.log, call_timeout=20000)},
                            "permission": {"echo_*": "allow"}})
    project.script({"tool_calls": [{"name": "echo_garbage", "input": {}}]},
                   {"tool_calls": [{"name": "echo_echo", "input": {"text": "clean"}}]}, {"text": "done"})
    session = ws.sessions.create()
    started = asyncio.get_running_loop().time()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    assert asyncio.get_running_loop().time() - started < 15  # not the call timeout: garbage ends it at once
    garbage, echoed = tool_parts(ws, session.id)
    assert garbage.state.status == "error" and "not MCP" in garbage.state.error
    assert echoed.state.output == "echo: clean"
    await ws.aclose()


async def test_an_image_result_is_attached_and_its_caption_is_text(project):
    ws = project.workspace({"mcp": {"echo": local_entry(project.log)}, "permission": {"echo_*": "allow"}})
    project.script({"tool_calls": [{"name": "echo_picture", "input": {}}]}, {"text": "done"})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    [part] = tool_parts(ws, session.id)
    assert part.state.output.startswith("a red pixel")
    [image] = part.state.attachments
    assert image.mime == "image/png" and image.url.startswith("data:image/png;base64,iVBOR")
    assert f'<img src="{image.url}"' in tool_card_html(part)  # the card shows it
    await ws.aclose()


async def test_a_changed_tool_list_is_offered_from_the_next_step(project):
    """The list the server announces during a run is what the model is offered at the run's next step."""
    ws = project.workspace({"mcp": {"echo": local_entry(project.log)}, "permission": {"echo_*": "allow"}})
    project.script({"tool_calls": [{"name": "echo_grow", "input": {}}]},
                   {"tool_calls": [{"name": "echo_fresh", "input": {}}]}, {"text": "done"})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "grow, then use it"), 30)
    steps = [{t.name for t in r.tools} for r in project.model.requests if r.tools]  # titles are asked with none
    assert "echo_fresh" not in steps[0] and "echo_fresh" in steps[1]
    _, fresh = tool_parts(ws, session.id)
    assert fresh.state.output == "fresh!"
    await ws.aclose()


@pytest.mark.skipif(not isinstance(find_backend(), Backend), reason="no OS sandbox on this machine")
async def test_a_local_server_runs_in_the_os_sandbox_with_the_project_as_its_folder(project):
    ws = project.workspace({"mcp": {"echo": local_entry(project.log)}, "permission": {"echo_*": "allow"}})
    project.script({"tool_calls": [{"name": "echo_where", "input": {}}]}, {"text": "done"})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    [part] = tool_parts(ws, session.id)
    assert '"wrote_outside": false' in part.state.output
    assert f'"cwd": "{ws.root}"' in part.state.output
    [state] = ws.mcp.states()
    assert state.sandbox == "bwrap"
    await ws.aclose()


async def test_a_remote_server_over_streamable_http_is_called(project, http_server):
    url, log = http_server
    ws = project.workspace({"mcp": {"web": {"type": "remote", "url": url,
                                            "headers": {"Authorization": "Bearer {env:WEB_TOKEN}"}}},
                            "permission": {"web_*": "allow"}}, env={"WEB_TOKEN": "tok-1234567890abcdef"})
    project.script({"tool_calls": [{"name": "web_echo", "input": {"text": "over http"}}]}, {"text": "done"})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    [part] = tool_parts(ws, session.id)
    assert part.state.output == "echo: over http"
    assert called(log) == ["echo"]
    await ws.aclose()


async def test_a_remote_server_that_speaks_only_sse_is_reached_over_sse(project, sse_server):
    url, log = sse_server
    ws = project.workspace({"mcp": {"old": {"type": "remote", "url": url}}, "permission": {"old_*": "allow"}})
    project.script({"tool_calls": [{"name": "old_echo", "input": {"text": "over sse"}}]}, {"text": "done"})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    [part] = tool_parts(ws, session.id)
    assert part.state.output == "echo: over sse"
    assert called(log) == ["echo"]
    await ws.aclose()


async def test_a_server_that_cannot_start_is_listed_as_failed_with_why_and_the_prompt_runs(project):
    ws = project.workspace({"mcp": {"gone": {"type": "local", "command": [str(project.root / "no-such-server")]},
                                    "off": {**local_entry(project.log), "enabled": False}}})
    project.script({"text": "done"})
    session = ws.sessions.create()
    result = await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    assert result.text == "done"
    gone, off = ws.mcp.states()
    assert gone.status == "failed" and "no-such-server" in gone.error
    assert off.status == "disabled" and not project.log.exists()
    await ws.aclose()


@pytest.mark.skipif(not isinstance(find_backend(), Backend), reason="no OS sandbox on this machine")
async def test_a_local_server_reaches_only_the_hosts_the_network_rules_allow(project):
    import http.server
    import threading

    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"hello from the host")

        def log_message(self, *args):
            pass

    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{web.server_address[1]}/"
    try:
        for rules, expected in (({"network": {"127.0.0.1": "allow"}}, "hello from the host"),
                                ({}, "failed")):
            ws = project.workspace({"mcp": {"echo": local_entry(project.log)},
                                    "permission": {"echo_*": "allow", **rules}})
            project.script({"tool_calls": [{"name": "echo_fetch", "input": {"url": url}}]}, {"text": "done"})
            session = ws.sessions.create()
            await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
            [part] = tool_parts(ws, session.id)
            assert part.state.output.startswith(expected)
            await ws.aclose()
    finally:
        web.shutdown()


async def test_stop_during_a_call_ends_the_run_at_once(project):
    ws = project.workspace({"mcp": {"echo": local_entry(project.log)}, "permission": {"echo_*": "allow"}})
    project.script({"tool_calls": [{"name": "echo_slow", "input": {"seconds": 20}}]}, {"text": "never"})
    session = ws.sessions.create()
    running = asyncio.ensure_future(ws.prompt(session.id, "go"))
    while called(project.log) != ["slow"]:
        await asyncio.sleep(0.05)
    loop = asyncio.get_running_loop()
    stopped_at = loop.time()
    ws.abort(session.id)
    await asyncio.wait_for(running, 10)
    assert loop.time() - stopped_at < 5
    [part] = tool_parts(ws, session.id)
    assert part.state.status == "error"
    await ws.aclose()
