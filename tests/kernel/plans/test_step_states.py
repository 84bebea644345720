"""A step cell's transcript shows the state its step ended in: ticked on the todo list once done (the last
step too), and a step a person refused reads "rejected", never "done"."""

from __future__ import annotations

import pytest

from .test_steps import planned, step_source  # noqa: F401  (`planned` is a fixture)

pytestmark = pytest.mark.timeout(120)

REJECT_EVERY_ASK = """from opencode_nb.kernel import current
_ws = current().workspace()
_ws.permissions.policy = None  # as in a notebook with a person, who refuses every ask
_ws.bus.subscribe("permission.asked", lambda e: _ws.permissions.reply(e.request.id, "reject"))
"""


def todo_lines(text: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index("todo:") + 1
    return [line.strip() for line in lines[start:] if line.startswith("  [")]


def test_each_step_is_ticked_in_its_own_transcript_and_after_the_last_nothing_is_in_progress(planned):  # noqa: F811
    fe, nb, _ = planned
    texts = []
    for number in (1, 2, 3):
        msg = fe.execute(step_source(nb, number))
        assert fe.done(msg, 60)["content"]["status"] == "ok", fe.text(msg)
        texts.append(fe.text(msg))
    assert todo_lines(texts[0]) == ["[x] Write `hello.txt` containing the words hello plan cells.",
                                    "[ ] Count the words in `hello.txt`.", "[ ] Say goodbye."]
    last = todo_lines(texts[2])
    assert last == ["[x] Write `hello.txt` containing the words hello plan cells.",
                    "[x] Count the words in `hello.txt`.", "[x] Say goodbye."]
    assert all("[~]" not in text for text in texts)
    assert " · done · " in texts[2].splitlines()[1]


def test_a_step_whose_call_the_person_refused_reads_rejected_and_is_back_to_not_done(planned):  # noqa: F811
    fe, nb, _ = planned
    assert fe.run(REJECT_EVERY_ASK)["content"]["status"] == "ok"
    msg = fe.execute(step_source(nb, 1))
    reply = fe.done(msg, 60)
    assert reply["content"]["status"] == "error" and "did not finish" in reply["content"]["evalue"]
    text = fe.text(msg)
    header = next(line for line in text.splitlines() if line.startswith("@build"))
    assert " · rejected · " in header and " · done · " not in header
    assert "Stopped by your reply: you rejected the bash call" in text
    assert todo_lines(text)[0] == "[ ] Write `hello.txt` containing the words hello plan cells."
