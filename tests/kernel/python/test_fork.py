"""The fork sandbox, with real forks of the test process: the code sees the person's variables and changes
only its copy, its output comes back and reaches nothing else, and runaway code is killed while the loop
goes on. The shell is a plain IPython shell standing in for the kernel's."""

from __future__ import annotations

import asyncio
import builtins
import os
import sqlite3
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

from opencode_nb.kernel.python.fork import run_forked
from opencode_nb.kernel.python.supervise import fit
from opencode_nb.values import CodeRun

from ..processes import gone, running, unreaped_children

pytestmark = [pytest.mark.timeout(60), pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux fork")]


def make_shell() -> Any:
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    return InteractiveShell.instance(config=config)


@pytest.fixture(scope="module")
def ipython() -> Iterator[Any]:
    """IPython's shell is a process-wide singleton that takes over `__main__` and adds builtins: undone after."""
    from IPython.core.interactiveshell import InteractiveShell

    main, added = sys.modules["__main__"], {"display", "__IPYTHON__"} - set(vars(builtins))
    shell = make_shell()
    yield shell
    InteractiveShell.clear_instance()
    sys.modules["__main__"] = main
    for name in added:
        vars(builtins).pop(name, None)


@pytest.fixture
def shell(ipython: Any) -> Iterator[Any]:
    before = set(ipython.user_ns)
    yield ipython
    for name in set(ipython.user_ns) - before:
        del ipython.user_ns[name]


async def eventually_gone(pid: int, within_s: float = 2.0) -> bool:
    deadline = time.monotonic() + within_s
    while not gone(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return gone(pid)


# ---------------------------------------------------------------------------------------------- isolation


async def test_the_code_changes_its_copy_of_a_frame_and_a_dict_while_the_persons_stay_identical(shell):
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": list("xyz")})
    config = {"threshold": 1}
    shell.user_ns.update(df=df, config=config)
    expected = df.copy()

    run = await run_forked("df['a'] *= 10\ndf.drop(columns='b', inplace=True)\nconfig['threshold'] = 99\n"
                           "made = df['a'].sum()\nmade", shell)

    assert run.mode == "fork" and run.error is None and run.result == {"text/plain": "np.float64(60.0)"}
    assert shell.user_ns["df"] is df and shell.user_ns["config"] is config
    pd.testing.assert_frame_equal(df, expected)
    assert config == {"threshold": 1} and "made" not in shell.user_ns
    assert run.changes.created == ["made"] and run.changes.mutated == ["config", "df"]


async def test_rebinding_and_deleting_in_the_copy_are_reported_and_leave_the_names_alone(shell):
    shell.user_ns.update(x=[1, 2], y="keep")
    run = await run_forked("x = x + [3]\ndel y", shell)
    assert run.changes.rebound == ["x"] and run.changes.deleted == ["y"]
    assert shell.user_ns["x"] == [1, 2] and shell.user_ns["y"] == "keep"


async def test_an_inherited_sqlite_connection_fails_in_the_child_and_the_database_is_unchanged(shell, tmp_path):
    path = tmp_path / "people.db"
    con = sqlite3.connect(path)
    con.execute("create table t (x integer)")
    con.execute("insert into t values (1)")
    con.commit()
    shell.user_ns["con"] = con

    run = await run_forked("con.execute('insert into t values (2)')\ncon.commit()", shell)

    assert run.error is not None and run.error.ename in ("OperationalError", "DatabaseError")
    assert sqlite3.connect(path).execute("select count(*) from t").fetchone() == (1,)
    assert con.execute("select x from t").fetchall() == [(1,)]  # the parent's connection still works


async def test_files_opened_by_the_code_never_take_an_inherited_descriptors_number(shell, tmp_path):
    kept = open(tmp_path / "person.txt", "w")  # noqa: SIM115
    shell.user_ns["kept"] = kept
    run = await run_forked("import tempfile, os\npath = os.path.join(tempfile.gettempdir(), 'child.txt')\n"
                           "with open(path, 'w') as f:\n    f.write('child')\nprint(open(path).read())\n"
                           "kept.write('from the child')\nkept.flush()", shell)
    kept.write("from the person")
    kept.close()
    assert run.error is not None and run.error.ename == "OSError"
    assert run.output == "child\n"  # its own file, in its scratch folder
    assert (tmp_path / "person.txt").read_text() == "from the person"


# ---------------------------------------------------------------------------------------------- output


async def test_prints_displays_shell_output_and_figures_come_back_and_nothing_reaches_the_kernels_stdout(
        shell, capfd):
    import matplotlib

    matplotlib.use("Agg")
    shell.user_ns["df"] = pd.DataFrame({"a": [1, 2]})
    code = ("import os, sys\nimport matplotlib.pyplot as plt\n"
            "print('python-print')\nprint('python-stderr', file=sys.stderr)\n"
            "os.system('echo from-the-shell')\nos.write(1, b'c-level-write\\n')\n"
            "display(df)\nplt.plot([1, 2, 3])\n'the-value'")
    streamed: list[str] = []

    run = await run_forked(code, shell, on_output=streamed.append)

    assert run.error is None
    for text in ("python-print", "python-stderr", "from-the-shell", "c-level-write"):
        assert text in run.output
    assert "python-print" in "".join(streamed)
    assert run.displays[0]["text/plain"].startswith("   a") and "<table" in run.displays[0]["text/html"]
    assert "image/png" in run.displays[1]
    assert run.result == {"text/plain": "'the-value'"}
    out, err = capfd.readouterr()
    for text in ("python-print", "python-stderr", "from-the-shell", "c-level-write", "the-value"):
        assert text not in out and text not in err


async def test_output_reaches_the_callback_while_the_code_still_runs(shell):
    seen: list[tuple[float, str]] = []
    started = time.monotonic()
    run = await run_forked("import time\nprint('first', flush=True)\ntime.sleep(0.6)\nprint('second')", shell,
                           on_output=lambda text: seen.append((time.monotonic() - started, text)))
    first = next(at for at, text in seen if "first" in text)
    assert first < run.duration_s - 0.4


async def test_a_flood_of_output_keeps_its_ends_and_says_what_was_cut(shell):
    run = await run_forked("print('START')\nfor i in range(300_000):\n    print('x' * 10)\nprint('END')", shell)
    assert run.output.startswith("START") and run.output.rstrip().endswith("END")
    assert "characters of output cut" in run.output and any("middle was cut" in n for n in run.notes)
    assert len(run.output) < 1.1 * 2**20


def test_a_result_too_big_to_send_keeps_the_text_of_its_largest_outputs():
    big = {"text/plain": "figure", "image/png": "A" * 3_000_000}
    run = CodeRun(mode="fork", displays=[big, {"text/plain": "small"}, big], result={"text/plain": "42"})
    fitted = fit(run, limit=4_000_000)
    assert len(fitted.model_dump_json()) <= 4_000_000
    assert {"text/plain": "small"} in fitted.displays and fitted.result == {"text/plain": "42"}
    assert sum("image/png" in d for d in fitted.displays) == 1 and "too large" in fitted.notes[-1]


async def test_syntax_errors_and_exceptions_come_back_as_code_errors(shell):
    syntax = await run_forked("def broken(:\n    pass", shell)
    assert syntax.error is not None and syntax.error.ename == "SyntaxError"
    raised = await run_forked("def f():\n    return {}['missing']\nf()", shell)
    assert raised.error is not None and raised.error.ename == "KeyError"
    assert 'File "your code", line 2' in raised.error.traceback


async def test_the_child_can_run_its_own_event_loop_and_subprocesses_but_cannot_ask_for_input(shell):
    code = ("import asyncio, subprocess\nasync def f():\n    await asyncio.sleep(0.01)\n    return 7\n"
            "print(asyncio.run(f()), subprocess.run(['echo', 'sub'], capture_output=True, text=True).stdout)\n"
            "input('name? ')")
    run = await run_forked(code, shell)
    assert "7 sub" in run.output
    assert run.error is not None and run.error.ename == "EOFError" and "no input" in run.error.evalue


async def test_no_fork_warning_reaches_the_caller(shell):
    threading.Thread(target=time.sleep, args=(0.5,), daemon=True).start()  # 3.12+ warns when threads exist
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        await run_forked("1", shell, timeout_s=5)
    assert not [w for w in caught if "fork" in str(w.message)]


# ---------------------------------------------------------------------------------------------- limits


async def test_an_endless_loop_is_killed_at_its_deadline_while_the_event_loop_keeps_ticking(shell):
    gaps: list[float] = []

    async def ticker() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticking = asyncio.create_task(ticker())
    marker = f"{os.getpid()}.{time.monotonic_ns() % 997}"
    run = await run_forked(f"import subprocess\nsubprocess.Popen(['sleep', '{marker}'])\nwhile True:\n    pass",
                           shell, timeout_s=1)
    ticking.cancel()

    assert run.error is not None and run.error.ename == "TimeoutError" and "1 s" in run.error.evalue
    assert 0.95 < run.duration_s < 2.0
    assert max(gaps) < 0.1 and len(gaps) > 40
    assert running(marker) == [] and unreaped_children() == []


async def test_a_memory_bomb_is_stopped_at_a_small_budget(shell):
    run = await run_forked("blocks = []\nwhile True:\n    blocks.append(b'x' * (20 * 2**20))", shell,
                           memory_mb=200, timeout_s=20)
    assert run.error is not None and run.error.ename == "MemoryError"
    assert run.duration_s < 5


async def test_pages_copied_from_the_person_count_against_the_budget(shell):
    shell.user_ns["big"] = np.zeros(300 * 2**20 // 8)  # 300 MB, shared with the child until it writes
    read = await run_forked("float(big.sum())", shell, memory_mb=100)
    assert read.error is None  # reading costs the child nothing
    written = await run_forked("big += 1\n'done'", shell, memory_mb=100, timeout_s=20)
    assert written.error is not None and written.error.ename == "MemoryError"
    assert "100 MB" in written.error.evalue and "was stopped" in written.error.evalue
    assert float(shell.user_ns["big"].sum()) == 0.0


async def test_cancelling_the_run_kills_the_child_and_what_it_started(shell):
    said: list[str] = []
    marker = f"{os.getpid()}.{time.monotonic_ns() % 997 + 1000}"
    task = asyncio.create_task(run_forked(
        f"import subprocess, time\nsleeper = subprocess.Popen(['sleep', '{marker}'])\n"
        "print('started', flush=True)\ntime.sleep(60)", shell, on_output=said.append))
    while "started" not in "".join(said):
        await asyncio.sleep(0.01)
    assert running(marker)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert running(marker) == [] and unreaped_children() == []  # killed and reaped: no zombie left


async def test_a_finished_child_is_reaped_soon_after_its_result_came_back(shell):
    run = await run_forked("import os\nos.getpid()", shell)
    assert run.result == {"text/plain": "1"}  # the first process of its own PID namespace
    deadline = time.monotonic() + 2
    while unreaped_children() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)  # collected in the background: the result does not wait for the exit
    assert unreaped_children() == []


async def test_two_forks_run_in_parallel_each_in_its_own_child(shell):
    shell.user_ns["n"] = 5
    code = "import time\ntime.sleep(0.5)\nn * {}"
    started = time.monotonic()
    one, two = await asyncio.gather(run_forked(code.format(2), shell), run_forked(code.format(3), shell))
    assert time.monotonic() - started < 0.95
    assert one.result == {"text/plain": "10"} and two.result == {"text/plain": "15"}
