"""The person's functions as tools in a real kernel: `@tool` and `%agent tool`, live calls, asks and rules.

Each test starts a kernel (jupyter_client) whose model replays a script; the function is defined in a cell, as
a person would, and the model's calls reach it through the loop.
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.timeout(120)

HEADLESS = {"OPENCODE_NB_HEADLESS": "1"}

QUERY_CELL = '''
import sqlite3
import pandas as pd
from opencode_nb import tool

db = sqlite3.connect(":memory:", check_same_thread=False)
db.executescript("create table sales(region text, amount int);"
                 "insert into sales values ('north', 10), ('south', 25), ('north', 7);")
calls = []

@tool
def query(sql: str, limit: int = 10) -> pd.DataFrame:
    """Run one read-only SQL query on the sales database.

    Args:
        sql: a single SELECT statement.
        limit: at most this many rows.
    """
    calls.append(sql)
    print("querying", sql)
    return pd.read_sql_query(sql, db).head(limit)
'''


def call(name: str, **arguments) -> dict:
    return {"tool_calls": [{"name": name, "input": arguments}]}


def tool_parts(fe) -> list[dict]:
    """The current session's tool calls: tool, status, output or error."""
    msg = fe.run_id("import json, opencode_nb.kernel as k\nws = k.current().workspace()\n"
                    "print(json.dumps([{'tool': p.tool, 'status': p.state.status, "
                    "'text': getattr(p.state, 'output', None) or getattr(p.state, 'error', None) or ''} "
                    "for m in ws.sessions.messages(k.current().session_id) for p in m.parts if p.type == 'tool']))")
    return json.loads(fe.text(msg))


def value(fe, expression: str) -> str:
    return fe.text(fe.run_id(f"print({expression})")).strip()


def of_workspace(fe, expression: str) -> str:
    """`expression` evaluated with `ws`, the kernel's workspace, and `json` at hand."""
    msg = fe.run_id(f"import json, opencode_nb.kernel as k\nws = k.current().workspace()\nprint({expression})")
    return fe.text(msg).strip()


def test_a_decorated_function_is_offered_with_its_schema_and_a_frame_comes_back_as_pythons_would(kernel):
    script = [call("query", sql="select region, sum(amount) as total from sales group by region"),
              call("python", code="pd.read_sql_query('select region, sum(amount) as total from sales "
                                  "group by region', db)"),
              {"text": "North 17, south 25."}]
    fe = kernel(script, permission={"query": "allow", "python": "allow"}, render_views=False, env=HEADLESS)
    defined = fe.run_id(QUERY_CELL)
    assert "New tool for agents: query(sql: str, limit: int = 10) -> DataFrame" in fe.text(defined)
    spec = json.loads(of_workspace(fe, "json.dumps(ws.tools.get('query').spec().parameters)"))
    assert spec["properties"] == {"sql": {"type": "string", "description": "a single SELECT statement."},
                                  "limit": {"type": "integer", "default": 10,
                                            "description": "at most this many rows."}}
    assert spec["required"] == ["sql"]
    listing = fe.text(fe.run_id("%agent tool list"))
    assert "query — query(sql: str, limit: int = 10) -> DataFrame  [@tool]" in listing
    assert "Run one read-only SQL query on the sales database." in listing
    assert "sql: string — a single SELECT statement." in listing and "limit: integer (optional)" in listing
    assert "rule: allow (query: allow)" in listing

    assert fe.run("%agent totals by region?")["content"]["status"] == "ok"
    person, python = tool_parts(fe)
    assert person["status"] == "completed" and python["status"] == "completed"
    assert "Called query(sql='select region, sum(amount) as total from sales group by region')." in person["text"]
    assert "Output:\nquerying select region" in person["text"]
    table = python["text"].split("Out:\n", 1)[1].split("\n\n", 1)[0]
    assert "north     17" in table and table in person["text"], "the frame is shown exactly as python shows it"
    assert value(fe, "len(calls)") == "1"


def test_a_wrong_typed_argument_is_a_validation_error_and_the_function_is_not_called(kernel):
    script = [call("query", sql="select * from sales", limit="all of them"),
              call("query", sql="select * from sales", limit="2"),
              {"text": "Two rows."}]
    fe = kernel(script, permission={"query": "allow"}, render_views=False, env=HEADLESS)
    fe.run(QUERY_CELL)
    assert fe.run("%agent two rows please")["content"]["status"] == "ok"
    wrong, right = tool_parts(fe)
    assert wrong["status"] == "error" and "The query tool was not called" in wrong["text"]
    assert ('- limit: Input should be a valid integer, unable to parse string as an integer; got "all of them" '
            "(string)") in wrong["text"]
    assert right["status"] == "completed" and "limit=2" in right["text"]
    assert value(fe, "calls") == "['select * from sales']", "called once: by the second, coerced call"


def test_an_async_function_is_awaited_on_the_kernels_loop_and_its_prints_are_captured(kernel):
    script = [call("fetch_total", region="north"), {"text": "17."}]
    fe = kernel(script, permission={"fetch_total": "allow"}, render_views=False, env=HEADLESS)
    fe.run("import asyncio, threading\nfrom opencode_nb import tool\n"
           "@tool\nasync def fetch_total(region: str) -> int:\n"
           "    '''Total sales of a region, from the remote service.'''\n"
           "    await asyncio.sleep(0.05)\n"
           "    print('fetched', region, threading.current_thread() is threading.main_thread())\n"
           "    return 17\n")
    assert fe.run("%agent north total?")["content"]["status"] == "ok"
    [part] = tool_parts(fe)
    assert part["status"] == "completed"
    assert "Output:\nfetched north True" in part["text"] and "Out:\n17" in part["text"]


def test_an_exception_is_an_error_with_the_functions_frames_and_the_session_goes_on(kernel):
    script = [call("query", sql="select * from nowhere"), {"text": "That table does not exist."}]
    fe = kernel(script, permission={"query": "allow"}, render_views=False, env=HEADLESS)
    fe.run(QUERY_CELL)
    assert fe.run("%agent look")["content"]["status"] == "ok"
    [part] = tool_parts(fe)
    assert part["status"] == "error" and "no such table: nowhere" in part["text"]
    assert "return pd.read_sql_query(sql, db).head(limit)" in part["text"] and "calls.py" not in part["text"]
    assert value(fe, "1 + 1") == "2"


def test_the_ask_shows_the_call_and_a_rejection_means_the_function_is_not_called(kernel):
    script = [call("query", sql="delete from sales"), {"text": "Never reached."}]
    fe = kernel(script, permission={"*": "allow"})  # a catch-all allow does not reach the person's functions
    fe.run(QUERY_CELL)
    msg = fe.execute("%%agent\nclean up")
    reject = fe.wait_button("Reject")

    def the_ask() -> str | None:
        return next((str(state.get("value")) for state in list(fe.models.values())
                     if 'class="ocnb-ask"' in str(state.get("value", ""))), None)

    ask = fe.wait_for(the_ask, what="the permission prompt")
    assert "asks for <b>query</b>" in ask and "query(sql=&#x27;delete from sales&#x27;)" in ask
    assert "Calls the person&#x27;s own function, live in their kernel" in ask
    fe.click(reject)
    fe.done(msg, 60)
    assert value(fe, "calls") == "[]"
    assert value(fe, "db.execute('select count(*) from sales').fetchone()[0]") == "3"


def test_redefining_updates_the_tool_and_removing_or_deleting_takes_it_away(kernel):
    script = [call("version"), {"text": "Two."}, call("version"), {"text": "Gone."}]
    fe = kernel(script, permission={"version": "allow"}, render_views=False, env=HEADLESS)
    fe.run("from opencode_nb import tool\n@tool\ndef version() -> int:\n    return 1\n")
    updated = fe.run_id("@tool\ndef version() -> int:\n    return 2\n")
    assert "Updated tool for agents: version() -> int" in fe.text(updated)
    assert fe.run("%agent which version?")["content"]["status"] == "ok"
    assert "Out:\n2" in tool_parts(fe)[0]["text"]

    removed = fe.run_id("%agent tool remove version")
    assert "version is no longer a tool for agents" in fe.text(removed)
    assert "version" not in of_workspace(fe, "ws.tools.ids()")
    assert "No functions of yours are tools yet" in fe.text(fe.run_id("%agent tools"))
    assert fe.run("%agent again?")["content"]["status"] == "ok"
    assert tool_parts(fe)[1]["status"] == "error", "the model's call of a removed tool is refused"

    fe.run("def total(x: int) -> int:\n    return x\n")
    added = fe.run_id("%agent tool add total")
    assert "New tool for agents: total(x: int) -> int" in fe.text(added)
    deleted = fe.run_id("del total")
    assert "total is no longer a tool for agents: its function is gone from the namespace." in fe.text(deleted)


def test_a_name_taken_by_a_built_in_tool_is_an_error_naming_the_clash(kernel):
    fe = kernel([], render_views=False, env=HEADLESS)
    reply = fe.run("from opencode_nb import tool\n@tool\ndef read(path: str) -> str:\n    return path\n")
    assert reply["content"]["status"] == "error"
    assert "`read` is the name of a built-in tool" in reply["content"]["evalue"]
    fe.run("def grep(pattern: str) -> str:\n    return pattern\n")
    refused = fe.execute("%agent tool add grep")
    assert "`grep` is the name of a built-in tool" in fe.text(refused) or \
        "`grep` is the name of a built-in tool" in str(fe.done(refused)["content"])


def test_a_function_deleted_while_agents_run_is_a_clear_error_and_the_tool_is_dropped(kernel):
    script = [call("python", code="del query"), call("query", sql="select 1"), {"text": "It is gone."}]
    fe = kernel(script, permission={"query": "allow", "python": "allow"}, render_views=False, env=HEADLESS)
    fe.run(QUERY_CELL)
    assert fe.run("%agent forget it")["content"]["status"] == "ok"
    _, gone = tool_parts(fe)
    assert gone["status"] == "error"
    assert "The query tool is gone: the function query is no longer defined in the person's namespace" in gone["text"]
    assert value(fe, "calls") == "[]"
    assert "query" not in of_workspace(fe, "ws.tools.ids()")


def test_a_function_past_its_timeout_is_stopped_and_the_kernel_stays_healthy(kernel):
    script = [call("spin"), {"text": "It took too long."}]
    fe = kernel(script, permission={"spin": "allow"}, render_views=False, env=HEADLESS)
    fe.run("from opencode_nb import tool\nturns = 0\n@tool(timeout=0.5)\ndef spin() -> None:\n"
           "    global turns\n    while True:\n        turns += 1\n")
    assert fe.run("%agent spin")["content"]["status"] == "ok"
    [part] = tool_parts(fe)
    assert part["status"] == "error" and "TimeoutError: stopped after 0.5 s" in part["text"]
    assert "@tool(timeout=...)" in part["text"]
    first = value(fe, "turns")
    assert value(fe, "turns") == first != "0", "the function's thread was stopped"


def test_a_figure_drawn_by_the_function_comes_back_as_an_image_as_pythons_do(kernel):
    script = [call("chart", title="sales"), {"text": "Drawn."}]
    fe = kernel(script, permission={"chart": "allow"}, render_views=False, env=HEADLESS)
    fe.run("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nfrom opencode_nb import tool\n"
           "@tool\ndef chart(title: str) -> None:\n    '''Draw the sales chart.'''\n"
           "    plt.figure()\n    plt.plot([1, 3, 2])\n    plt.title(title)\n")
    assert fe.run("%agent draw it")["content"]["status"] == "ok"
    [part] = tool_parts(fe)
    assert part["status"] == "completed" and "Display 1:\n<Figure 1>\n[image/png, attached]" in part["text"]
    assert "It returned None." in part["text"]
    attached = of_workspace(fe, "[a.mime for m in ws.sessions.messages(k.current().session_id) for p in m.parts "
                                "if p.type == 'tool' for a in p.state.attachments]")
    assert attached == "['image/png']"
