"""While a mistake in a restriction stands (`permisions: {bash: deny}`, a misspelt `permission:`), no agent run
starts, whatever would start it: a prompt cell, a one-line prompt, a slash command, `%agent plan run` and a
plan's step cell are refused with the same message, and the command the model would have run never runs.
In a real kernel, headless, with the notebook file as the cell store."""

from __future__ import annotations

import re

import yaml

from tests.kernel.plans.scripted_plan import MODEL
from tests.kernel.plans.test_steps import SAVE_AS_CELLS, SETUP, cells_of, notebook_file, source

TOUCHING = MODEL + '''
COMMANDS["1"] = "touch x"
_planning = respond


def respond(request):
    """Asked to touch, it runs `touch x`; a step runs step 1's `touch x` too."""
    texts, done = last_turn(request)
    if not done and any("please touch" in t for t in texts):
        return {"tool_calls": [{"name": "bash", "input": {"command": "touch x", "description": "touch"}}]}
    return _planning(request)
'''

PLAN_CELL = "%%agent --agent plan\nPlan how to write and count a greeting."


def test_every_way_of_starting_an_agent_is_refused_alike_while_a_restriction_is_misspelt(kernel, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    nb = notebook_file(project, [PLAN_CELL])
    fe = kernel([], render_views=False, files={"plan_model.py": TOUCHING}, permission={"*": "allow"},
                extra={"command": {"touchit": {"template": "please touch it"}}},
                env={"OPENCODE_NB_HEADLESS": "1", "OPENCODE_NB_NOTEBOOK": str(nb)})
    assert fe.run(SETUP)["content"]["status"] == "ok"
    assert fe.run(SAVE_AS_CELLS)["content"]["status"] == "ok"
    assert fe.run(PLAN_CELL, 60)["content"]["status"] == "ok"
    step = next(source(c) for c in cells_of(nb) if source(c).startswith("%%agent --plan"))
    plan_id = re.match(r"%%agent --plan (\S+) --step 1", step).group(1)

    config = project / "opencode.yaml"
    good = config.read_text()
    config.write_text(yaml.safe_dump({**yaml.safe_load(good), "permisions": {"bash": "deny"}}))
    said = []
    for cell in ("%%agent\nplease touch x", "%agent please touch x", "%agent /touchit", f"%agent plan run {plan_id}",
                 step):
        msg = fe.execute(cell)
        reply = fe.done(msg, 60)["content"]
        assert reply["status"] == "error", (cell, fe.text(msg))
        said.append(reply["evalue"])
    assert "opencode.yaml:" in said[0] and "prompts are blocked" in said[0] and "permission" in said[0], said[0]
    assert said == [said[0]] * len(said), "every way in is refused with the same message"
    assert not (project / "x").exists(), "no command ran"

    config.write_text(good)
    assert "Configuration read again" in fe.text(fe.run_id("%agent sessions"))
    assert fe.run(SETUP)["content"]["status"] == "ok"  # the workspace read anew has its own providers
    fixed = fe.execute("%agent please touch x")
    assert fe.done(fixed, 60)["content"]["status"] == "ok", fe.text(fixed)
    assert (project / "x").exists(), "fixed, the same prompt runs its command"
