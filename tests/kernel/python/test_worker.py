"""The worker sandbox, with real spawned workers: it receives copies of the variables the code names (frames
through Arrow, modules by name, notebook functions as source), gives back what the code printed, showed and
returned, refuses what holds a connection, samples what is too big, and is killed when it runs away."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest

from opencode_nb.kernel.python.copies import pack
from opencode_nb.kernel.python.worker import run_in_worker, worker_refusal

from ..processes import running
from .test_fork import ipython, shell  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.timeout(90), pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")]


async def test_pandas_numpy_and_polars_inputs_give_the_right_result_and_stay_unchanged():
    people = pd.DataFrame({"age": [31, 45, 27], "city": ["Oslo", "Lima", "Oslo"]},
                          index=pd.Index(["a", "b", "c"], name="id"))
    sales = pl.DataFrame({"region": ["n", "s", "n"], "amount": [10, 20, 30]})
    weights = np.array([0.5, 0.25, 0.25])
    namespace = {"pd": pd, "np": np, "pl": pl, "people": people, "sales": sales, "weights": weights,
                 "ages": people["age"], "unused": object()}
    code = ("people['age'] = people['age'] + 1\n"
            "by_region = sales.group_by('region').agg(pl.col('amount').sum()).sort('region')\n"
            "print(people.loc['b', 'age'], ages.name, by_region['amount'].to_list())\n"
            "float(np.dot(weights, people['age'].to_numpy()))")

    run = await run_in_worker(code, namespace)

    assert run.mode == "worker" and run.error is None, run.error
    assert "46 age [40, 20]" in run.output
    assert run.result == {"text/plain": "34.5"}
    assert people["age"].tolist() == [31, 45, 27]
    assert run.changes.created == ["by_region"] and run.changes.mutated == ["people"]


async def test_displays_figures_and_c_level_output_come_back_and_the_codes_stdout_cannot_corrupt_the_result():
    code = ("import os, sys\nimport matplotlib.pyplot as plt\nfrom IPython.display import display\n"
            "display(frame)\nplt.plot([1, 2])\nos.system('echo from-the-shell')\n"
            "os.write(1, b'\\x00\\x00raw bytes on fd 1\\n')\nsys.__stdout__.write('via __stdout__\\n')\n"
            "print('printed')\n'value'")
    run = await run_in_worker(code, {"frame": pd.DataFrame({"a": [1]})})
    assert run.error is None, run.error
    assert "<table" in run.displays[0]["text/html"] and "image/png" in run.displays[1]
    for text in ("printed", "from-the-shell", "raw bytes on fd 1", "via __stdout__"):
        assert text in run.output
    assert run.result == {"text/plain": "'value'"}


async def test_a_function_defined_in_the_notebook_is_sent_as_its_source_with_what_it_uses(shell):  # noqa: F811
    shell.run_cell("import pandas as pd\nRATE = 2\n\ndef scale(values):\n    return [v * RATE for v in values]\n\n"
                   "def total(values):\n    return sum(scale(values))")
    run = await run_in_worker("total([1, 2, 3])", shell.user_ns)
    assert run.error is None, (run.error, run.notes)
    assert run.result == {"text/plain": "12"}


async def test_a_sqlite_connection_is_refused_with_a_reason_that_points_to_live_mode(tmp_path):
    con = sqlite3.connect(tmp_path / "db.sqlite")
    reason = worker_refusal("pd.read_sql('select 1', con)", {"con": con, "pd": pd})
    assert reason is not None and "`con`" in reason and "sqlite3" in reason and "live mode" in reason
    assert "`tables`" in worker_refusal("tables['a']", {"tables": {"a": con}})
    assert worker_refusal("con2 = 1", {"con": con}) is None  # not named: not sent, not refused


def test_a_dask_distributed_client_is_refused():
    from distributed import Client

    with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client:
        reason = worker_refusal("client.submit(sum, [1, 2]).result()", {"client": client})
    assert reason is not None and "dask distributed Client" in reason and "live mode" in reason


async def test_a_big_frame_is_sampled_to_fit_and_the_notes_say_how_to_scale(tmp_path):
    big = pd.DataFrame({"x": np.arange(400_000, dtype="float64"), "y": np.ones(400_000)})  # about 6 MB
    run = await run_in_worker("print(len(big), big['x'].is_monotonic_increasing)\nbig['y'].sum()",
                              {"big": big}, max_bytes=2 * 2**20)
    assert run.error is None, run.error
    rows = int(run.output.split()[0])
    assert 100_000 < rows < 200_000 and "True" in run.output
    [note] = run.notes
    assert "random sample" in note and f"{rows:,} rows" in note and "scale counts and sums" in note


def test_a_frame_within_the_budget_is_sent_whole_as_arrow(tmp_path):
    job, notes = pack("a.sum(); p.height; s.mean()", {"a": pd.DataFrame({"x": [1]}), "p": pl.DataFrame({"x": [1]}),
                                                       "s": pd.Series([1.0])}, tmp_path, 2**20)
    assert notes == [] and sorted(e["kind"] for e in job["entries"]) == ["pandas", "pandas-series", "polars"]


async def test_what_cannot_be_copied_is_left_out_and_the_notes_say_why():
    namespace = {"lock": threading.Lock(), "rows": (i for i in range(3)), "fine": [1, 2]}
    run = await run_in_worker("print(fine)\nlock", namespace)
    assert "[1, 2]" in run.output
    assert run.error is not None and run.error.ename == "NameError"
    assert any("`lock`" in note and "cannot be copied" in note for note in run.notes)


async def test_an_endless_loop_is_killed_at_its_deadline_and_the_worker_is_gone():
    marker = f"{os.getpid()}.{time.monotonic_ns() % 1000}"
    started = time.monotonic()
    run = await run_in_worker(f"import subprocess\nsubprocess.Popen(['sleep', '{marker}'])\nwhile True:\n    pass",
                              {}, timeout_s=1)
    assert run.error is not None and run.error.ename == "TimeoutError"
    assert time.monotonic() - started < 5
    assert running(marker) == [] and running("opencode_nb.kernel.python.worker " + str(os.getpid())) == []


async def test_a_memory_bomb_in_the_worker_is_stopped():
    run = await run_in_worker("import numpy as np\nblocks = []\nwhile True:\n    blocks.append(np.ones(2**22))",
                              {}, memory_mb=200, timeout_s=30)
    assert run.error is not None and run.error.ename == "MemoryError"


async def test_cancelling_the_run_kills_the_worker_and_what_it_started():
    marker = f"{os.getpid()}.{time.monotonic_ns() % 1000 + 1000}"
    said: list[str] = []
    task = asyncio.create_task(run_in_worker(
        f"import subprocess, time\nsubprocess.Popen(['setsid', 'sleep', '{marker}'])\nprint('up', flush=True)\n"
        "time.sleep(60)", {}, on_output=said.append))
    while "up" not in "".join(said):
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.2)
    assert running(marker)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert running(marker) == [] and running("opencode_nb.kernel.python.worker " + str(os.getpid())) == []


async def test_the_worker_has_no_input_and_leaves_no_files_behind(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    mine = f"opencode-nb-worker-{os.getpid()}-*"
    before = set(Path("/dev/shm").glob(mine))
    run = await run_in_worker("input('name? ')", {"x": pd.DataFrame({"a": [1]})}, max_bytes=2**40)
    assert run.error is not None and run.error.ename == "EOFError"
    assert set(Path("/dev/shm").glob(mine)) == before and not list(tmp_path.iterdir())
