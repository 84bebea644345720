"""A session is named after the first prompt that got an answer: a prompt that failed says nothing about
what the session turned out to be about."""

from __future__ import annotations

import pytest

from opencode_nb.errors import OpencodeNbError
from opencode_nb.session.title import DEFAULT_PREFIXES

AUTH_FAILED = {"error": {"message": "invalid x-api-key", "status": 401}}


async def test_a_first_prompt_that_failed_does_not_name_the_session(h):
    h.script(AUTH_FAILED)
    await h.prompt("summarise teh data (typo, and the key is wrong)")
    await h.ws.loop.titles.wait()
    assert h.ws.sessions.get(h.session.id).title.startswith(DEFAULT_PREFIXES)


async def test_the_first_prompt_that_got_an_answer_names_the_session_after_one_that_failed(h):
    h.script(AUTH_FAILED, {"text": "The mean is 4.2."})
    await h.prompt("typo prmpt that failed")
    await h.prompt("Summarise the sales data")
    await h.ws.loop.titles.wait()
    assert h.ws.sessions.get(h.session.id).title == "Summarise the sales data"


async def test_a_later_prompt_does_not_rename_a_session_its_first_answer_named(h):
    h.script({"text": "Done."}, {"text": "Also done."})
    await h.prompt("Fix the mean function")
    await h.ws.loop.titles.wait()
    await h.prompt("Now the median")
    await h.ws.loop.titles.wait()
    assert h.ws.sessions.get(h.session.id).title == "Fix the mean function"


async def test_a_prompt_that_failed_before_any_answer_does_not_name_the_session(make):
    h = make({"model": "scripted/demo", "agent": {"build": {"model": "nowhere/unknown-model"}}})
    with pytest.raises(OpencodeNbError):
        await h.prompt("this one cannot start")
    await h.ws.loop.titles.wait()
    assert h.ws.sessions.get(h.session.id).title.startswith(DEFAULT_PREFIXES)
