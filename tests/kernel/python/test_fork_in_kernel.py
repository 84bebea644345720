"""data-explorer's python in a real kernel: a fork that cannot change the person's data and shows nothing in
their notebook; runaway children killed at their deadline and memory budget while the kernel answers; the
polars gate falls back to a worker."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.timeout(120)
HEADLESS = {"OPENCODE_NB_HEADLESS": "1"}

EXPLORE = [
    {"tool_calls": [{"name": "task", "input": {"description": "Profile df", "subagent_type": "data-explorer",
                                               "prompt": "Profile df."}}]},
    {"tool_calls": [{"name": "python", "input": {"code": (
        "print('CHILD-MARKER', df['x'].isna().sum())\n"
        "import os; os.system('echo FD-MARKER')\n"
        "df['x'] = df['x'].fillna(0)\ndf.drop(columns=['y'], inplace=True)\nnew_name = 1\nlen(df.columns)")}}]},
    {"text": "The frame has one missing x."},
    {"text": "Profiled."},
]


def tool_outputs(fe) -> str:
    msg = fe.run_id("import opencode_nb.kernel as k\nws = k.current().workspace()\n"
                    "for s in ws.sessions.list(include_children=True):\n"
                    "    for m in ws.sessions.messages(s.id):\n"
                    "        for p in m.parts:\n"
                    "            if p.type == 'tool' and p.tool == 'python':\n"
                    "                print(p.state.status, getattr(p.state, 'output', None) or p.state.error)")
    return fe.text(msg)


def test_data_explorer_changes_df_only_in_its_fork_and_nothing_of_the_child_reaches_the_notebook(kernel):
    fe = kernel(EXPLORE, render_views=False, env=HEADLESS)
    fe.run("import pandas as pd\ndf = pd.DataFrame({'x': [1.0, None, 3.0], 'y': [1, 2, 3]})\nbefore = id(df)")
    msg = fe.execute("%%agent\nprofile df")
    assert fe.done(msg, timeout=60)["content"]["status"] == "ok"
    streams = [m["content"]["text"] for m in fe.outputs(msg) if m["msg_type"] == "stream"]
    assert not any("CHILD-MARKER" in s or "FD-MARKER" in s for s in streams)
    check = fe.run_id("print(df.shape, int(df['x'].isna().sum()), id(df) == before, 'new_name' in globals())")
    assert fe.text(check).strip() == "(3, 2) 1 True False"
    output = tool_outputs(fe)
    assert "completed" in output and "copy-on-write fork" in output
    assert "CHILD-MARKER 1" in output and "FD-MARKER" in output and "Out:\n1" in output
    assert "In the sandbox's copy (discarded), created: new_name" in output


def test_a_runaway_child_is_killed_at_its_deadline_while_the_kernel_answers(kernel):
    script = [{"tool_calls": [{"name": "python", "input": {"code": "while True:\n    pass", "timeout": 3}}]},
              {"text": "It ran too long."}]
    fe = kernel(script, render_views=False, env=HEADLESS, extra={"agent": {"build": {"permission": {
        "python": {"live": "deny", "sandbox": "allow"}}}}})
    fe.done(fe.execute("%%agent --bg\nspin"))
    time.sleep(0.5)  # the child is spinning now
    started = time.time()
    answered = []
    while time.time() - started < 2.5:
        t = time.time()
        fe.run("1 + 1")
        answered.append(time.time() - t)
    assert max(answered) < 0.5, answered  # the fork is waited on off the kernel's main thread
    fe.wait_for(lambda: "TimeoutError" in tool_outputs(fe), timeout=30, what="the deadline")
    assert fe.run("1 + 1")["content"]["status"] == "ok"


def test_a_child_past_its_memory_budget_is_killed_and_the_model_reads_why(kernel):
    script = [{"tool_calls": [{"name": "python", "input": {"code": (
        "blocks = []\nwhile True:\n    blocks.append(bytearray(50 * 2**20))")}}]}, {"text": "Too big."}]
    fe = kernel(script, render_views=False, env=HEADLESS, extra={"agent": {"build": {"permission": {
        "python": {"live": "deny", "sandbox": "allow"}}}}})
    fe.run("import opencode_nb.kernel as k\nk.current().workspace().kernel.sandbox_memory_mb = 300")
    assert fe.run("%agent fill memory", timeout=60)["content"]["status"] == "ok"
    assert "MemoryError" in tool_outputs(fe)
    assert fe.run("1 + 1")["content"]["status"] == "ok"


def test_polars_in_the_code_falls_back_to_a_worker_given_copies(kernel):
    script = [{"tool_calls": [{"name": "python", "input": {"code": "frame.group_by('k').agg(pl.col('v').sum())"
                                                                  ".sort('k')['v'].to_list()"}}]},
              {"text": "Summed."}]
    fe = kernel(script, render_views=False, env=HEADLESS, extra={"agent": {"build": {"permission": {
        "python": {"live": "deny", "sandbox": "allow"}}}}})
    fe.run("import polars as pl\nframe = pl.DataFrame({'k': ['a', 'b', 'a'], 'v': [1, 2, 3]})")
    assert fe.run("%agent sum by k", timeout=60)["content"]["status"] == "ok"
    output = tool_outputs(fe)
    assert "separate worker" in output and "Not forked" in output and "[4, 2]" in output


DASK_SETUP = ("import pandas as pd, dask.dataframe as dd\nfrom distributed import Client\n"
              "client = Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None)\n"
              "ddf = dd.from_pandas(pd.DataFrame({'x': range(100)}), npartitions=4)")


def test_a_sandbox_refuses_code_that_uses_a_dask_client_and_live_python_computes_on_dask(kernel):
    script = [
        {"tool_calls": [{"name": "task", "input": {"description": "Sum x", "subagent_type": "data-explorer",
                                                   "prompt": "Sum ddf.x using the client."}}]},
        {"tool_calls": [{"name": "python", "input": {"code": "client.compute(ddf.x.sum()).result()"}}]},
        {"text": "The sandbox cannot use the client."},
        {"text": "Then I'll compute it live.",
         "tool_calls": [{"name": "python", "input": {"code": "total = ddf.x.sum().compute()\ntotal"}}]},
        {"text": "The sum is 4950."},
    ]
    fe = kernel(script, render_views=False, env=HEADLESS, permission={"python": "allow"})
    assert fe.run(DASK_SETUP, timeout=60)["content"]["status"] == "ok"
    assert fe.run("%agent sum ddf.x", timeout=90)["content"]["status"] == "ok"
    output = tool_outputs(fe)
    assert "cannot run in a sandbox" in output and "dask distributed Client" in output
    assert "needs live mode" in output
    assert "Ran in the person's namespace (live)." in output and "Out:\nnp.int64(4950)" in output
    assert fe.text(fe.run_id("print(total)")).strip() == "4950"
    fe.run("client.close()")
