"""The python tool in a real kernel: live runs ask, say what they bound, and can be undone; Stop and the
kernel's interrupt end running code and the session goes on."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.timeout(120)

MAKE_CLEAN = [
    {"text": "I'll make a cleaned copy.",
     "tool_calls": [{"name": "python", "input": {
         "code": "clean = [x for x in raw if x is not None]\nprint('kept', len(clean))\nlen(clean)",
         "description": "Drop the missing readings"}}]},
    {"text": "Made `clean`."},
]


def namespace_has(fe, expression: str) -> str:
    msg = fe.run_id(f"print({expression})")
    return fe.text(msg).strip()


def the_tool_call(fe) -> str:
    """The session's one tool call, as `status output-or-error`."""
    msg = fe.run_id("import opencode_nb.kernel as k\nws = k.current().workspace()\n"
                    "[p] = [p for m in ws.sessions.messages(k.current().session_id) for p in m.parts "
                    "if p.type == 'tool']\nprint(p.state.status, getattr(p.state, 'output', None) or p.state.error)")
    return fe.text(msg)


def test_live_python_asks_then_binds_a_new_name_that_undo_takes_back(kernel):
    fe = kernel(MAKE_CLEAN, permission={"python": {"live": "ask", "sandbox": "allow"}})
    assert fe.run("raw = [1, None, 3]")["content"]["status"] == "ok"
    msg = fe.execute("%%agent\nclean the readings")
    fe.click(fe.wait_button("Allow once"))
    assert fe.done(msg)["content"]["status"] == "ok"
    assert namespace_has(fe, "clean") == "[1, 3]"
    output = the_tool_call(fe)
    assert "Ran in the person's namespace (live)." in output and "kept 2" in output
    assert "Out:\n2" in output and "created: clean" in output
    undo = fe.run_id("%agent undo")
    assert "Unbound clean." in fe.text(undo)
    assert namespace_has(fe, "'clean' in globals()") == "False"
    assert namespace_has(fe, "raw") == "[1, None, 3]"


def test_a_rebinding_is_undone_to_the_very_object_it_replaced_and_in_place_changes_are_named(kernel):
    script = [{"tool_calls": [{"name": "python", "input": {
        "code": "first = data\ndata = sorted(data)\nlog.append('sorted')"}}]}, {"text": "Sorted."}]
    fe = kernel(script, permission={"python": "allow"}, render_views=False, env={"OPENCODE_NB_HEADLESS": "1"})
    fe.run("data = [3, 1, 2]\noriginal_id = id(data)\nlog = []")
    assert fe.run("%agent sort it")["content"]["status"] == "ok"
    assert namespace_has(fe, "data, log") == "[1, 2, 3] ['sorted']"
    undo = fe.run_id("%agent undo")
    text = fe.text(undo)
    assert text == ("Unbound first; data is back to [3, 1, 2].\n"
                    "Could not take back the in-place changes this run made to log."), text
    assert namespace_has(fe, "data, id(data) == original_id") == "[3, 1, 2] True"


def test_an_exception_is_a_tool_error_the_model_reads_and_the_kernel_stays_healthy(kernel):
    script = [{"tool_calls": [{"name": "python", "input": {"code": "def f():\n    return 1 / 0\nf()"}}]},
              {"text": "It divided by zero."}]
    fe = kernel(script, permission={"python": "allow"}, render_views=False, env={"OPENCODE_NB_HEADLESS": "1"})
    assert fe.run("%agent try it")["content"]["status"] == "ok"
    text = the_tool_call(fe)
    assert text.startswith("error") and "ZeroDivisionError: division by zero" in text and "return 1 / 0" in text
    assert namespace_has(fe, "1 + 1") == "2"


def test_an_interrupt_ends_a_busy_loop_at_once_and_the_session_goes_on(kernel):
    script = [{"tool_calls": [{"name": "python", "input": {"code": "n = 0\nwhile True:\n    n += 1"}}]},
              {"text": "Back again."}]
    fe = kernel(script, permission={"python": "allow"})
    msg = fe.execute("%%agent\nspin")
    fe.wait_for(lambda: any("ocnb-tool ocnb-running" in str(s.get("value", "")) for s in list(fe.models.values())),
                what="the running tool card")
    time.sleep(0.3)
    started = time.time()
    fe.interrupt()
    reply = fe.done(msg)
    assert time.time() - started < 3
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "AgentStopped"
    assert namespace_has(fe, "n > 0") == "True"  # the loop ran in the person's namespace until stopped
    again = fe.execute("%agent are you there?")
    assert fe.done(again)["content"]["status"] == "ok"
    assert "Back again." in fe.text(again)
    time.sleep(0.5)
    assert namespace_has(fe, "n == n") == "True"
    first = namespace_has(fe, "n")
    time.sleep(0.3)
    assert namespace_has(fe, "n") == first, "the loop's thread has ended"


@pytest.mark.parametrize(("code", "expected"), [
    ("x = (", "SyntaxError"),
    ("undefined_name + 1", "NameError: name 'undefined_name' is not defined"),
    ("import sys\nsys.exit(3)", "SystemExit"),
    ("raise KeyboardInterrupt", "KeyboardInterrupt"),
])
def test_bad_code_is_an_error_the_model_reads_and_the_next_cell_runs(kernel, code, expected):
    script = [{"tool_calls": [{"name": "python", "input": {"code": code}}]}, {"text": "Noted."}]
    fe = kernel(script, permission={"python": "allow"}, render_views=False, env={"OPENCODE_NB_HEADLESS": "1"})
    assert fe.run("%agent run it")["content"]["status"] == "ok"
    text = the_tool_call(fe)
    assert text.startswith("error") and expected in text
    assert namespace_has(fe, "1 + 1") == "2"


HISTORY = ("import json\nip = get_ipython()\nprint(json.dumps({'_': repr(_), '__': repr(__), '___': repr(___), "
           "'Out': {k: repr(v) for k, v in Out.items()}, 'same_oh': _oh is Out, 'In': In, 'count': ip.execution_count, "
           "'raw': ip.history_manager.input_hist_raw, 'numbered': sorted(k for k in globals() if k[:1] == '_' "
           "and k[1:].isdigit())}))")


def history(fe) -> dict:
    import json

    return json.loads(fe.text(fe.run_id(HISTORY)))


def test_a_live_run_leaves_the_persons_last_values_out_and_history_as_they_were(kernel):
    script = [{"tool_calls": [{"name": "python", "input": {"code": "print('looking')\n7"}}]}, {"text": "It is 7."}]
    fe = kernel(script, permission={"python": "allow"}, render_views=False, env={"OPENCODE_NB_HEADLESS": "1"})
    fe.run("41 + 1")
    fe.run("'answer'")
    fe.run("[1, 2]")
    before = history(fe)
    assert (before["_"], before["__"], before["___"]) == ("[1, 2]", "'answer'", "42")
    assert fe.run("%%agent\nwhat is seven?")["content"]["status"] == "ok"
    after = history(fe)
    for kept in ("_", "__", "___", "Out", "same_oh", "numbered"):
        assert after[kept] == before[kept], kept
    # Only the person's own cells moved the count and the history: the agent's cell and the one reading it.
    assert after["count"] == before["count"] + 2 and len(after["In"]) == len(before["In"]) + 2
    assert after["In"][: len(before["In"])] == before["In"] and after["raw"][: len(before["raw"])] == before["raw"]
    assert not any("looking" in cell for cell in after["In"] + after["raw"])
    assert "Out:\n7" in the_tool_call(fe), "the model still reads the value"


def test_a_long_value_reaches_the_model_cut_with_what_is_missing_and_the_whole_saved(kernel):
    import re
    from pathlib import Path

    script = [{"tool_calls": [{"name": "python", "input": {"code": "stamps"}}]}, {"text": "Read them."}]
    fe = kernel(script, permission={"python": "allow"}, render_views=False, env={"OPENCODE_NB_HEADLESS": "1"})
    fe.run("import pandas as pd\npd.set_option('display.max_seq_items', None)\n"
           "stamps = pd.date_range('2024-01-01 08:00', periods=400, freq='h', name='taken')")
    assert fe.run("%agent list the timestamps")["content"]["status"] == "ok"
    output = the_tool_call(fe)
    note = re.search(r"\n… ([\d,]+) more characters \(of ([\d,]+)\); the whole output is saved at (\S+) — read it "
                     r"with the read tool \(offset (\d+) picks up where this stops; set a limit\) or grep it", output)
    assert note is not None, output[-600:]
    head = output.split("Out:\n", 1)[1][: note.start() - output.index("Out:\n") - 5]
    path = Path(note.group(3))
    whole = path.read_text()
    shown_by_a_cell = fe.text(fe.run_id("print(get_ipython().display_formatter.format(stamps)[0]['text/plain'])"))
    assert whole == shown_by_a_cell.rstrip("\n") and whole.count("2024-") == 400
    assert whole.startswith(head) and len(head) <= 4000 and whole[len(head)] == "\n"
    assert int(note.group(1).replace(",", "")) == len(whole) - len(head)
    assert int(note.group(2).replace(",", "")) == len(whole)
    assert whole.splitlines()[int(note.group(4)) - 1] == whole[len(head) + 1:].splitlines()[0]
