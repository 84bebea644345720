"""What confining a sandboxed call costs, and how the kernel answers while a confined child runs away.

1. Next to the person's 1 GB frame (15M×8 float64) in a plain IPython shell, the same calls go through
   `run_forked` with each confinement, interleaved so the machine's load falls on all alike: Python-level
   isolation only (no OS confinement), Landlock + seccomp, namespaces + seccomp (the default here). The
   figure is the difference of the medians against Python-level isolation. Goal: ≤ 15 ms added.
2. In a real kernel (jupyter_client) holding the same frame, a confined child spins until its 3 s deadline
   and is killed, while `two = 1 + 1` cells (no output, so the output cache stays empty) are sent one after
   another; then a child that dirtied 1 GB of copied pages is stopped at its budget. Every cell's round trip
   is timed. Goal: each answered in ≤ 100 ms.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_sandbox import shell_with_frame  # the same 1 GB frame

from opencode_nb.kernel.python.fork import run_forked

RUNS = 15
CODES = ["len(df)", 'df["a"].iloc[:1000].mean()']
VARIANTS = {"python-level only": (), "landlock": ("landlock",), "namespaces": ("namespaces",)}


async def cost() -> None:
    shell = shell_with_frame()
    print(f"frame: {shell.user_ns['df'].memory_usage().sum() / 2**30:.2f} GiB in the shell's namespace")
    for code in CODES:
        times: dict[str, list[float]] = {name: [] for name in VARIANTS}
        for _ in range(RUNS):
            for name, mechanisms in VARIANTS.items():
                started = time.perf_counter()
                run = await run_forked(code, shell, mechanisms=mechanisms)
                times[name].append(time.perf_counter() - started)
                assert run.error is None, run.error
        base = statistics.median(times["python-level only"])
        print(f"\n{code}")
        for name, measured in times.items():
            median = statistics.median(measured)
            print(f"  {name:18s} median {median * 1000:6.1f} ms (range {min(measured) * 1000:.1f}–"
                  f"{max(measured) * 1000:.1f}), added {(median - base) * 1000:+5.1f} ms")


SETUP = """
import asyncio, numpy as np, pandas as pd
from opencode_nb.kernel.python.fork import run_forked
from opencode_nb.sandbox.confine import warm
from opencode_nb.sandbox.bwrap import jupyter_runtime
warm(), jupyter_runtime()  # as the workspace does when %load_ext builds it
df = pd.DataFrame(np.random.default_rng(0).standard_normal((15_000_000, 8)), columns=list("abcdefgh"))
runs = []
def spin(code, **kw):
    runs.append(asyncio.ensure_future(run_forked(code, get_ipython(), **kw)))
"""


def quiet(msg: object) -> None:
    pass


def latency() -> None:
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        kc.execute_interactive(SETUP, timeout=120)
        for label, code, kw in (
                ("a confined child spinning, then killed at its 3 s deadline", "while True: pass",
                 {"timeout_s": 3}),
                ("a confined child dirtying 1 GB, then killed at its 300 MB budget",
                 "df += 1\nimport time; time.sleep(5)", {"timeout_s": 10, "memory_mb": 300})):
            kc.execute_interactive(f"spin({code!r}, **{kw!r})", timeout=30, output_hook=quiet)
            times = []
            begun = time.monotonic()
            while time.monotonic() < begun + kw["timeout_s"] + 1.5:
                started = time.perf_counter()
                kc.execute_interactive("two = 1 + 1", timeout=30, output_hook=quiet)
                times.append(time.perf_counter() - started)
                if times[-1] > 0.1:
                    print(f"  slow cell at {time.monotonic() - begun:.2f} s: {times[-1] * 1000:.0f} ms")
            reply = kc.execute_interactive("print(runs[-1].done(), runs[-1].result().error.ename)", timeout=30,
                                           output_hook=lambda msg: None)
            assert reply["content"]["status"] == "ok"
            print(f"\n{label}: {len(times)} cells, median {statistics.median(times) * 1000:.1f} ms, "
                  f"slowest {max(times) * 1000:.1f} ms")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


if __name__ == "__main__":
    asyncio.run(cost())
    latency()
