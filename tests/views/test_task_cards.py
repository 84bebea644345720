"""A task call's card and its child section, live and in the saved transcript: how the child ended, where a
stop happened, and only what people should read."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from opencode_nb.provider.scripted import Scripted
from opencode_nb.views import SessionView, ViewHub, transcript_bundle
from opencode_nb.workspace import Workspace

from .test_session import html_of, wait_for


def survey(description: str = "Survey") -> dict[str, Any]:
    return {"tool_calls": [{"name": "task", "input": {"description": description, "prompt": "look around",
                                                      "subagent_type": "explore"}}]}


def by_agent(parent: list[dict[str, Any]], child: list[dict[str, Any]]):
    """A model answering the primary from `parent` and the explore subagent from `child`, turn by turn."""

    def respond(request):
        queue = child if "You are explore" in "\n".join(request.system) else parent
        return queue.pop(0)

    return respond


def workspace(tmp_path: Path, respond: Any, config: dict[str, Any] | None = None) -> Workspace:
    (tmp_path / "project").mkdir(exist_ok=True)
    ws = Workspace(tmp_path / "project", {"model": "scripted/test", "permission": {"*": "allow"}, **(config or {})},
                   data_dir=tmp_path / "data", env={})
    ws.providers.register("scripted", Scripted(respond=respond))
    return ws


def watch(ws: Workspace) -> tuple[ViewHub, str, SessionView]:
    hub = ViewHub(ws.bus)
    session = ws.sessions.create(str(ws.directory))
    return hub, session.id, SessionView(ws, hub, session.id, floor="")


async def test_a_task_whose_child_cannot_start_ends_as_an_error_live_and_in_the_transcript(tmp_path):
    ws = workspace(tmp_path, by_agent([survey(), {"text": "I will look myself."}], []),
                   {"agent": {"explore": {"model": "anthropic/claude-sonnet-4-5"}}})
    _, session_id, view = watch(ws)
    await ws.prompt(session_id, "survey")
    view.finish("done")
    [card] = view.cards.values()
    live = card.html.value
    assert 'class="ocnb-tool ocnb-error"' in live and "No API key for anthropic" in live and "running" not in live
    [child] = view.children.values()
    assert child.widget.get_title(0) == "@explore — Survey · 0 tools, failed"
    bundle = transcript_bundle(ws, session_id)
    assert 'class="ocnb-tool ocnb-error"' in bundle["text/html"] and "ocnb-running" not in bundle["text/html"]
    assert "@explore — Survey · 0 tools, failed" in bundle["text/html"]
    assert "✗ task Survey" in bundle["text/plain"] and "failed" in bundle["text/plain"]
    assert "running" not in bundle["text/plain"]
    await ws.aclose()


async def test_a_task_card_shows_the_childs_answer_without_the_block_meant_for_the_model(tmp_path):
    ws = workspace(tmp_path, by_agent([survey(), {"text": "Surveyed."}], [{"text": "One file: a.py."}]))
    _, session_id, view = watch(ws)
    await ws.prompt(session_id, "survey")
    view.finish("done")
    [card] = view.cards.values()
    assert "One file: a.py." in card.part.state.output and "task_metadata" in card.part.state.output
    assert "One file: a.py." in card.html.value and "task_metadata" not in card.html.value
    assert "answer (1 line)" in card.html.value
    bundle = transcript_bundle(ws, session_id, prompts=True)
    assert "task_metadata" not in bundle["text/html"] and "task_metadata" not in bundle["text/plain"]
    assert "task_metadata" not in html_of(view.widget)
    await ws.aclose()


async def test_a_stop_is_shown_where_it_happened_not_under_the_finished_child(tmp_path):
    slow = {"text": "Now I will write a long report " + "word " * 400, "delay": 0.02}
    ws = workspace(tmp_path, by_agent([survey(), slow], [{"text": "One file: a.py."}]))
    session_id = ws.sessions.create(str(ws.directory)).id
    run = asyncio.ensure_future(ws.prompt(session_id, "survey"))
    await wait_for(lambda: any("Now I will write" in getattr(p, "text", "") for m in ws.sessions.messages(session_id)
                               for p in m.parts))
    ws.abort(session_id)
    await asyncio.wait_for(run, 5)
    html = transcript_bundle(ws, session_id)["text/html"]
    child_end = html.index("</details>", html.index('class="ocnb-child"'))
    assert "■ stopped" not in html[:child_end], "the child had finished before the stop"
    assert html.index("Now I will write") < html.index("■ stopped"), "the stop ends the text it cut short"
    text = transcript_bundle(ws, session_id)["text/plain"]
    assert text.index("Now I will write") < text.index("(stopped)")
    await ws.aclose()


async def test_a_child_stopped_mid_run_says_so_in_its_section_title(tmp_path):
    ws = workspace(tmp_path, by_agent([survey()], [{"text": "Looking " + "slowly " * 400, "delay": 0.02}]))
    hub, session_id, view = watch(ws)
    run = asyncio.ensure_future(ws.prompt(session_id, "survey"))
    await wait_for(lambda: view.children)
    await asyncio.sleep(0.1)
    ws.abort(session_id)
    await asyncio.wait_for(run, 5)
    hub.flush_all()
    [child] = view.children.values()
    assert child.widget.get_title(0) == "@explore — Survey · 0 tools, stopped"
    html = transcript_bundle(ws, session_id)["text/html"]
    assert "@explore — Survey · 0 tools, stopped" in html
    await ws.aclose()
