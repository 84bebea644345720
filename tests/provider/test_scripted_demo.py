"""`scripted/demo`, the built-in offline model: listed, working anywhere, and honest about what happened.

It needs no script and no key. Each session plays its scenario from the beginning, and every move follows
from the session's own history: a rejected edit or a failing check is never reported as a fix.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from opencode_nb import Workspace
from opencode_nb.demo import DEMO_PERMISSIONS
from opencode_nb.demo.scratch import copy_sample
from opencode_nb.permission import PermissionAsked
from opencode_nb.provider.builtin import WEATHER_PROMPT
from opencode_nb.question import QuestionAsked


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_sample(tmp_path)


def workspace(project: Path, *, policy: str = "allow") -> Workspace:
    return Workspace(project, {"model": "scripted/demo", "permission": DEMO_PERMISSIONS},
                     data_dir=project.parent / "data", env={"OPENCODE_NB_PERMISSION": policy})


def person(ws: Workspace, *, edit: str) -> None:
    """A person at the keyboard: says Yes to every question, answers edits of stats.py with `edit`, allows
    the rest once."""
    def on_ask(event: PermissionAsked) -> None:
        request = event.request
        wanted = edit if request.permission == "edit" and request.patterns == ["stats.py"] else "once"
        ws.permissions.reply(request.id, wanted)

    ws.bus.subscribe(PermissionAsked, on_ask)
    ws.bus.subscribe(QuestionAsked, lambda e: ws.questions.reply(e.request.id, [["Yes"] for _ in e.request.questions]))


def said(ws: Workspace, session_id: str) -> list[str]:
    """Every text the agents said in the session, in order."""
    return [p.text for m in ws.sessions.messages(session_id) if m.message.role == "assistant"
            for p in m.parts if p.type == "text" and p.text]


async def test_the_demo_model_is_listed_and_answers_with_no_script_and_no_key(tmp_path):
    ws = Workspace(tmp_path, {"model": "scripted/demo"}, data_dir=tmp_path / "data", env={})
    assert "scripted/demo" in ws.providers.models()
    session = ws.sessions.create(str(tmp_path))
    result = await ws.prompt(session.id, "hello, what can you do?")
    assert result.error is None
    assert "offline demo model" in result.text and "scripted/demo" in result.text
    assert "anthropic/claude-sonnet-4-6" in result.text, "it says how to get a real model"
    await ws.aclose()


async def test_another_scripted_model_without_a_script_says_how_to_get_one(tmp_path):
    ws = Workspace(tmp_path, {"model": "scripted/other"}, data_dir=tmp_path / "data", env={})
    session = ws.sessions.create(str(tmp_path))
    result = await ws.prompt(session.id, "hello")
    assert result.error is not None
    assert "scripted/other has no script" in result.error.message and "scripted/demo" in result.error.message
    await ws.aclose()


async def test_the_scenario_fixes_the_sample_and_checks_the_fix(project):
    ws = workspace(project)
    session = ws.sessions.create(str(project))
    result = await ws.prompt(session.id, WEATHER_PROMPT)
    assert result.text.startswith("Fixed:")
    assert "return sum(values) / len(values)" in (project / "stats.py").read_text()
    await ws.aclose()


async def test_a_rejected_edit_is_reported_as_not_applied_never_as_fixed(project):
    ws = workspace(project)
    person(ws, edit="reject")
    session = ws.sessions.create(str(project))
    await ws.prompt(session.id, WEATHER_PROMPT)  # a plain reject ends the run
    after = await ws.prompt(session.id, "go on")
    assert after.text.startswith("I did not change `stats.py`: the edit was rejected")
    assert not any("Fixed" in text for text in said(ws, session.id))
    assert "(len(values) - 1)" in (project / "stats.py").read_text()
    again = await ws.prompt(session.id, "and now?")
    assert "finished" in again.text and "--new" in again.text, "the scenario does not pick up mid-way"
    await ws.aclose()


async def test_an_edit_refused_by_policy_is_reported_and_the_run_carries_on_to_say_so(project):
    ws = workspace(project, policy="deny")
    session = ws.sessions.create(str(project))
    result = await ws.prompt(session.id, WEATHER_PROMPT)
    assert "No plan, then" in said(ws, session.id)[-2], "the dismissed plan question is taken as a no"
    assert result.text.startswith("I did not change `stats.py`: the edit was refused")
    await ws.aclose()


async def test_a_failing_self_check_is_reported_as_a_failure(project):
    (project / "check_stats.py").write_text("raise SystemExit('summary check failed: 7 days expected')\n")
    ws = workspace(project)
    session = ws.sessions.create(str(project))
    result = await ws.prompt(session.id, WEATHER_PROMPT)
    assert result.text.startswith("The fix is in, but the self-check did not pass")
    assert "summary check failed" in result.text
    assert not any("Fixed" in text for text in said(ws, session.id))
    await ws.aclose()


async def test_each_new_session_plays_the_scenario_from_its_beginning(project):
    ws = workspace(project)
    person(ws, edit="reject")
    first = ws.sessions.create(str(project))
    await ws.prompt(first.id, WEATHER_PROMPT)
    second = ws.sessions.create(str(project))
    await ws.prompt(second.id, WEATHER_PROMPT)
    opening = "I'll get an overview first, then plan the fix with you."
    assert said(ws, first.id)[0] == opening and said(ws, second.id)[0] == opening
    survey = list(ws.sessions.children(second.id))
    assert len(survey) == 1 and said(ws, survey[0].id)[-1].startswith("Three files matter"), \
        "the child session plays explore's part from its beginning too"
    await ws.aclose()


async def test_a_directory_without_the_sample_is_said_to_be_one(tmp_path):
    (tmp_path / "main.py").write_text("print('hello')\n")
    ws = Workspace(tmp_path, {"model": "scripted/demo"}, data_dir=tmp_path / "data",
                   env={"OPENCODE_NB_PERMISSION": "allow"})
    session = ws.sessions.create(str(tmp_path))
    result = await ws.prompt(session.id, WEATHER_PROMPT)
    assert "did not find the sample project" in result.text
    assert not any(p.tool == "edit" for m in ws.sessions.messages(session.id) for p in m.parts if p.type == "tool")
    await ws.aclose()
