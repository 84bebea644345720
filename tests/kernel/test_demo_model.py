"""`scripted/demo` in a fresh notebook: listed by `%agent models`, answering with no script and no key,
and playing its scenario from the beginning in every new session."""

from __future__ import annotations

from importlib.resources import files

import pytest

from opencode_nb.provider.builtin import WEATHER_PROMPT

pytestmark = pytest.mark.timeout(120)
NO_SCRIPT = {"provider": {}}
"""The project's opencode.yaml names no scripted turns: the notebook is as fresh as a new user's."""
SAMPLE = {name: files("opencode_nb.demo").joinpath("sample", name).read_text(encoding="utf-8")
          for name in ("stats.py", "check_stats.py", "readings.csv")}


def test_the_listed_demo_model_answers_in_a_fresh_notebook(kernel):
    fe = kernel([], render_views=False, extra=NO_SCRIPT)
    models = fe.execute("%agent models")
    fe.done(models)
    assert "scripted/demo" in fe.text(models)
    fe.run('%config Agent.model = "scripted/demo"')
    msg = fe.execute("%agent what can you do?")
    assert fe.done(msg)["content"]["status"] == "ok"
    text = fe.text(msg)
    assert "offline demo model" in text and "no more turns" not in text


def test_a_new_session_plays_the_demo_from_its_beginning(kernel):
    fe = kernel([], render_views=False, extra=NO_SCRIPT, files=SAMPLE)
    fe.run('%config Agent.model = "scripted/demo"')
    fe.run('%config Agent.permission = "allow"')
    first = fe.execute(f"%%agent\n{WEATHER_PROMPT}")
    assert fe.done(first, timeout=60)["content"]["status"] == "ok"
    assert "I'll get an overview first" in fe.text(first) and "Fixed:" in fe.text(first)
    second = fe.execute(f"%%agent --new\n{WEATHER_PROMPT}")
    assert fe.done(second, timeout=60)["content"]["status"] == "ok"
    text = fe.text(second)
    assert "I'll get an overview first" in text, "the new session starts the scenario afresh"
    assert "Fixed:" not in text and "Perhaps it is fixed already" in text, "the fix is in: the edit finds no bug"
