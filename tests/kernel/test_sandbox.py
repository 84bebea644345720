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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pytest

from opencode_nb.kernel.sandbox import fork_refusal, run_forked
from opencode_nb.kernel.supervise import fit
from opencode_nb.values import CodeRun

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


def gone(pid: int) -> bool:
    """Not running: no such process, or a zombie its new parent (init) has yet to reap."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


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
    run = await run_forked(f"with open({str(tmp_path / 'child.txt')!r}, 'w') as f:\n    f.write('child')\n"
                           "kept.write('from the child')\nkept.flush()", shell)
    kept.write("from the person")
    kept.close()
    assert run.error is not None and run.error.ename == "OSError"
    assert (tmp_path / "person.txt").read_text() == "from the person"
    assert (tmp_path / "child.txt").read_text() == "child"  # files are not isolated: a fork is not a jail


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
    pids: list[str] = []
    run = await run_forked("import os\nprint(os.getpid(), flush=True)\nwhile True:\n    pass", shell,
                           timeout_s=1, on_output=pids.append)
    ticking.cancel()

    assert run.error is not None and run.error.ename == "TimeoutError" and "1 s" in run.error.evalue
    assert 0.95 < run.duration_s < 2.0
    assert max(gaps) < 0.1 and len(gaps) > 40
    child = int("".join(pids).split()[0])
    assert child != os.getpid() and gone(child)


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
    pids: list[str] = []
    task = asyncio.create_task(run_forked(
        "import os, subprocess, time\nsleeper = subprocess.Popen(['sleep', '60'])\n"
        "print(os.getpid(), sleeper.pid, flush=True)\ntime.sleep(60)", shell, on_output=pids.append))
    while "\n" not in "".join(pids):
        await asyncio.sleep(0.01)
    child, grandchild = (int(p) for p in "".join(pids).split())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not Path(f"/proc/{child}").exists()  # killed and reaped: no zombie left
    assert await eventually_gone(grandchild)


async def test_a_finished_child_is_reaped(shell):
    pids: list[str] = []
    await run_forked("import os\nprint(os.getpid())", shell, on_output=pids.append)
    assert not Path(f"/proc/{int(''.join(pids))}").exists()


async def test_two_forks_run_in_parallel_each_in_its_own_child(shell):
    shell.user_ns["n"] = 5
    code = "import os, time\ntime.sleep(0.5)\nprint(os.getpid())\nn * {}"
    started = time.monotonic()
    one, two = await asyncio.gather(run_forked(code.format(2), shell), run_forked(code.format(3), shell))
    assert time.monotonic() - started < 0.95
    assert one.result == {"text/plain": "10"} and two.result == {"text/plain": "15"}
    assert one.output != two.output


# ---------------------------------------------------------------------------------------------- the gate


def test_polars_in_the_code_or_in_the_variables_it_names_refuses_the_fork():
    namespace = {"pl": pl, "frame": pl.DataFrame({"a": [1]}), "frames": {"x": pl.DataFrame({"a": [1]})},
                 "pdf": pd.DataFrame({"a": [1]})}
    assert "polars" in fork_refusal("import polars as pl2\npl2.DataFrame()", namespace)
    assert "polars" in fork_refusal("pl.col('a')", namespace)
    assert "`frame`" in fork_refusal("frame.group_by('a').len()", namespace)
    assert "`frames`" in fork_refusal("frames['x'].height", namespace)
    assert "polars" in fork_refusal("pdf.to_polars()", namespace)
    assert fork_refusal("pdf.describe()", namespace) is None


def test_a_notebook_function_that_uses_polars_refuses_the_fork():
    namespace: dict[str, Any] = {"__name__": "__main__", "pl": pl}
    exec("def summarise(rows):\n    return pl.DataFrame(rows).describe()", namespace)
    assert "`summarise`" in fork_refusal("summarise([1, 2])", namespace)


def test_thread_pools_the_kernel_already_used_refuse_the_fork():
    with ThreadPoolExecutor(1) as pool:
        pool.submit(int).result()
        assert "thread pool" in fork_refusal("pool.submit(len, [])", {"pool": pool})
    assert "dask" in fork_refusal("import dask.array as da\nda.ones(3).sum().compute()", {})


def test_a_busy_thread_refuses_the_fork_and_a_waiting_one_does_not():
    stop = threading.Event()
    waiting = threading.Thread(target=stop.wait, name="waiting-thread", daemon=True)
    waiting.start()
    try:
        time.sleep(0.05)
        assert fork_refusal("1", {}) is None

        def spin() -> None:
            while not stop.is_set():
                sum(range(1000))

        busy = threading.Thread(target=spin, name="busy-thread", daemon=True)
        busy.start()
        time.sleep(0.05)
        reason = fork_refusal("1", {})
        assert reason is not None and "busy-thread" in reason and "waiting-thread" not in reason
        assert fork_refusal("1", {}, allowed_threads=[busy]) is None
    finally:
        stop.set()
        for thread in threading.enumerate():
            if thread.name in ("waiting-thread", "busy-thread"):
                thread.join()


def test_the_fork_is_refused_off_the_main_thread():
    reasons: list[str | None] = []
    thread = threading.Thread(target=lambda: reasons.append(fork_refusal("1", {})))
    thread.start()
    thread.join()
    assert reasons[0] is not None and "main thread" in reasons[0]


def test_magics_are_read_for_the_names_they_use():
    namespace = {"lazy": pl.DataFrame({"a": [1]}).lazy()}
    assert "`lazy`" in fork_refusal("%timeit lazy.collect()", namespace)
    assert fork_refusal("!ls\n%time x = 1", namespace) is None
