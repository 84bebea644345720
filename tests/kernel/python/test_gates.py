"""The fork gate: a fork is refused when the copy could hang, whatever the code's spelling, and allowed when
the other threads are only waiting. Library pools and clusters change the whole process for good, so those
cases run in a fresh interpreter standing in for the kernel, and the refusals are checked by forcing the fork."""

from __future__ import annotations

import importlib
import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from time import sleep
from typing import Any

import pandas as pd
import polars as pl
import pytest

from opencode_nb.kernel.python import gates
from opencode_nb.kernel.python.gates import fork_refusal, reaches_modules

pytestmark = [pytest.mark.timeout(120), pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux fork")]

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def no_pool_has_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Other tests in this process start polars' and dask's pools, which would refuse every fork here: the
    in-process tests check the rest of the gate, and the pools are tried in fresh interpreters below."""
    monkeypatch.setattr(gates, "started_pools", lambda: [])


def run_python(tmp_path: Path, source: str) -> dict[str, Any]:
    """Run a script in a fresh interpreter; what it printed last, as JSON."""
    script = tmp_path / "kernel_stand_in.py"
    script.write_text(textwrap.dedent(source))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=110, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


KERNEL_STAND_IN = """
    import asyncio, json, sys, threading, time
    import pandas as pd
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config
    from opencode_nb.kernel.python.fork import fork_refusal, run_forked

    seen = {}

    def make_shell():
        config = Config()
        config.HistoryManager.enabled = False
        shell = InteractiveShell.instance(config=config)
        shell.user_ns["pdf"] = pd.DataFrame({"a": [1, 2, 1]})
        return shell

    def result(run):
        return run.result["text/plain"] if run.result else run.error.ename
"""


# ---------------------------------------------------------------------------------------------- the code


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


def test_magics_are_read_for_the_names_they_use():
    namespace = {"lazy": pl.DataFrame({"a": [1]}).lazy()}
    assert "`lazy`" in fork_refusal("%timeit lazy.collect()", namespace)
    assert fork_refusal("!ls\n%time x = 1", namespace) is None


def test_every_computed_way_to_a_module_is_seen_however_it_is_spelled():
    for code in ("import sys\nsys.modules['pol' + 'ars']", "importlib.import_module('po' + 'lars')",
                 "__import__(name)", "getattr(sys.modules['x'], 'y')", "eval('pl' + '.col')", "df.__class__",
                 "pd.compat._optional.import_optional_dependency('polars')", "%timeit sys.modules", "%run other.py",
                 "from importlib import import_module", "get_ipython().user_ns", "pd.read_pickle(path)"):
        assert reaches_modules(code, {}) is not None, code


def test_a_way_to_modules_kept_under_another_name_in_the_notebook_is_seen_too():
    namespace: dict[str, Any] = {"__name__": "__main__", "il": importlib, "attr": getattr, "mods": sys.modules,
                                 "helpers": [importlib.import_module]}
    exec("def load(name):\n    return mods[name]", namespace)
    for name in ("il", "attr", "mods", "helpers", "load"):
        assert reaches_modules(f"{name}('x')", namespace) == name


def test_plain_code_magics_and_shell_lines_reach_no_module():
    for code in ("df.x.sum()", "import pandas as pd\npd.DataFrame(rows).describe()", "%timeit df.x.sum()",
                 "!ls", "files = !ls", "%matplotlib inline", "df.groupby('a').agg(total=('b', 'sum'))"):
        assert reaches_modules(code, {"df": pd.DataFrame()}) is None, code


# ---------------------------------------------------------------------------------------------- the kernel's libraries


def test_polars_refuses_every_fork_once_its_pool_has_run_and_none_before(tmp_path):
    seen = run_python(tmp_path, KERNEL_STAND_IN + """
    CODE = "import sys\\nsys.modules['pol' + 'ars'].from_pandas(pdf).group_by('a').len().height"
    FRESH = "import importlib\\nimportlib.import_module('po' + 'lars').from_pandas(pdf).group_by('a').len().height"

    async def main():
        shell = make_shell()
        seen["loaded"] = "polars" in sys.modules
        seen["fresh"] = fork_refusal(FRESH, shell.user_ns), result(await run_forked(FRESH, shell, timeout_s=20))
        import polars as pl
        seen["imported"] = fork_refusal(CODE, shell.user_ns), result(await run_forked(CODE, shell, timeout_s=20))
        pl.from_pandas(shell.user_ns["pdf"]).group_by("a").len()
        seen["started"] = fork_refusal(CODE, shell.user_ns), fork_refusal("pdf.describe()", shell.user_ns)
        seen["forced"] = result(await run_forked(CODE, shell, timeout_s=2))
        print(json.dumps(seen))

    asyncio.run(main())
    """)
    assert seen["loaded"] is False
    assert seen["fresh"] == [None, "2"]  # imported for the first time in the copy: its pool starts there
    assert seen["imported"] == [None, "2"]
    for reason in seen["started"]:
        assert "the thread pool of polars has run in this kernel" in reason
    assert seen["forced"] == "TimeoutError"


def test_dask_refuses_every_fork_once_its_threaded_scheduler_has_run(tmp_path):
    seen = run_python(tmp_path, KERNEL_STAND_IN + """
    CODE = "import sys\\nsys.modules['da' + 'sk'].delayed(int)('4').compute()"

    async def main():
        shell = make_shell()
        import dask
        seen["imported"] = fork_refusal(CODE, shell.user_ns), result(await run_forked(CODE, shell, timeout_s=20))
        dask.delayed(int)("4").compute()  # one thread made; it waits for work ever after
        seen["started"] = fork_refusal("pdf.describe()", shell.user_ns)
        seen["forced"] = result(await run_forked(CODE, shell, timeout_s=2))
        print(json.dumps(seen))

    asyncio.run(main())
    """)
    assert seen["imported"] == [None, "4"]
    assert "the thread pool of dask has run" in seen["started"]
    assert seen["forced"] == "TimeoutError"


def test_an_idle_process_based_dask_cluster_lets_pandas_fork_and_refuses_what_could_reach_it(tmp_path):
    seen = run_python(tmp_path, KERNEL_STAND_IN + """
    from distributed import Client, LocalCluster
    from distributed.profile import watch

    def spin(stop):
        while not stop.is_set():
            sum(range(1000))

    async def main(client):
        shell = make_shell()
        import dask.dataframe as dd
        seen["computed"] = int(dd.from_pandas(shell.user_ns["pdf"], npartitions=2).a.sum().compute())
        watch(interval="20ms")  # distributed's sampling profiler, sleeping between samples
        time.sleep(1)
        seen["threads"] = sorted(t.name for t in threading.enumerate())
        seen["pandas"] = [fork_refusal("df.a.sum()", shell.user_ns | {"df": shell.user_ns["pdf"]})
                          for _ in range(200)]
        seen["forked"] = result(await run_forked("int(pdf.a.sum())", shell, timeout_s=20))
        seen["named"] = fork_refusal("client.submit(len, [])", {"client": client})
        seen["computed_name"] = fork_refusal("import sys\\nsys.modules['distri' + 'buted'].default_client()", {})
        stop = threading.Event()
        spinner = threading.Thread(target=spin, args=(stop,), name="spinner")
        spinner.start()
        seen["spinning"] = fork_refusal("pdf.a.sum()", shell.user_ns)
        stop.set()
        spinner.join()
        print(json.dumps(seen))

    if __name__ == "__main__":
        with LocalCluster(processes=True, n_workers=1, threads_per_worker=1, dashboard_address=None) as cluster:
            with Client(cluster) as client:
                asyncio.run(main(client))
    """)
    assert seen["computed"] == 4
    assert {"IO loop", "Profile", "Dask-Offload_0"} <= set(seen["threads"])
    assert seen["pandas"] == [None] * 200
    assert seen["forked"] == "4"
    assert "`client` involves a dask distributed client" in seen["named"]
    assert "can reach any loaded module by a computed name, and distributed is loaded" in seen["computed_name"]
    assert "other threads are running (" in seen["spinning"] and "spinner" in seen["spinning"]


# ---------------------------------------------------------------------------------------------- threads


@pytest.fixture
def stop() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    end_test_threads(event)


def end_test_threads(stop: threading.Event) -> None:
    stop.set()
    for thread in threading.enumerate():
        if thread.name.startswith("gate-test"):
            thread.join()


def start(target: Any, name: str) -> None:
    threading.Thread(target=target, name=f"gate-test {name}", daemon=True).start()


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


def test_threads_sleeping_waiting_for_a_child_or_in_select_hold_nothing_and_let_the_fork_go(stop):
    child = os.posix_spawnp("sleep", ["sleep", "30"], os.environ)  # reaped by the thread waiting for it
    readable, writable = os.pipe()

    def nap() -> None:
        while not stop.is_set():
            time.sleep(0.05)

    def doze() -> None:
        while not stop.is_set():
            sleep(0.05)

    start(nap, "time.sleep")
    start(doze, "sleep")
    start(lambda: os.waitpid(child, 0), "waitpid")
    start(lambda: select.select([readable], [], []), "select")
    time.sleep(0.1)
    try:
        assert fork_refusal("1", {}) is None
    finally:
        os.kill(child, signal.SIGKILL)
        os.write(writable, b"x")
        end_test_threads(stop)
        for fd in (readable, writable):
            os.close(fd)


def test_a_sleep_the_thread_reached_through_a_local_name_is_not_trusted(stop):
    def nap(pause: Any = time.sleep) -> None:
        while not stop.is_set():
            pause(0.05)

    start(nap, "local")
    time.sleep(0.1)
    reason = fork_refusal("1", {})
    assert reason is not None and "gate-test local" in reason


def test_the_fork_is_refused_off_the_main_thread():
    reasons: list[str | None] = []
    thread = threading.Thread(target=lambda: reasons.append(fork_refusal("1", {})))
    thread.start()
    thread.join()
    assert reasons[0] is not None and "main thread" in reasons[0]
