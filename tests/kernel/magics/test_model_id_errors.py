"""In a notebook, a model id that cannot be served fails the prompt's cell before anything runs, saying the id
meant and where the id came from (`--model`, `%config Agent.model`, the file's line), never "config"."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.timeout(90)
HEADLESS = {"OPENCODE_NB_HEADLESS": "1"}


def refusal(fe, code: str) -> str:
    msg = fe.execute(code)
    reply = fe.done(msg)
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "UsageError", code
    return reply["content"]["evalue"]


def test_a_misspelt_or_bare_model_id_is_refused_with_the_id_meant_and_its_source(kernel):
    keys = {"ANTHROPIC_API_KEY": "sk-test", "OPENAI_API_KEY": "sk-test"}  # only the id can be wrong here
    fe = kernel([{"text": "Ran with the model meant."}], render_views=False, env={**HEADLESS, **keys})
    assert refusal(fe, "%agent --model gpt-5 explain this") == (
        "--model: 'gpt-5' is not a model id (provider/model): did you mean openai/gpt-5?")
    fe.run('%config Agent.model = "anthropic/claude-sonet-4-6"')
    said = refusal(fe, "%%agent\nexplain this")
    assert said.startswith("%config Agent.model: 'anthropic/claude-sonet-4-6' is not a model the catalog knows: "
                           "did you mean anthropic/claude-sonnet-4-6?")
    sessions = fe.text(fe.run_id("import json, opencode_nb.kernel as k\n"
                                 "print(json.dumps([s.id for s in k.current().workspace().sessions.list()]))"))
    assert json.loads(sessions) == [], "nothing started"
    fe.run("%config Agent.model = None")
    ran = fe.execute("%agent explain this")
    assert fe.done(ran)["content"]["status"] == "ok" and "Ran with the model meant." in fe.text(ran)
