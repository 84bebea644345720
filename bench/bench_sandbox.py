"""What the fork sandbox adds to a run of the model's code, next to the person's 1 GB frame.

A 15M×8 float64 DataFrame (about 1 GB) sits in a plain IPython shell's namespace. The same code runs
in-process through `run_code` (what a live run costs, minus its thread) and through `run_forked` (gate,
fork, child setup, run, result back, child reaped), RUNS times each; the figure is the difference of the
medians. Also shown: the gate alone, and the child's private memory while it reads the whole frame.

Goal: the fork adds at most 50 ms.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from opencode_nb.kernel.python.execute import run_code
from opencode_nb.kernel.python.fork import fork_refusal, run_forked

RUNS = 9
CODES = ['df["a"].mean()', "len(df)", "df.sum()"]


def shell_with_frame() -> object:
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    rng = np.random.default_rng(0)
    shell.user_ns["df"] = pd.DataFrame(rng.standard_normal((15_000_000, 8)), columns=list("abcdefgh"))
    return shell


def median_ms(times: list[float]) -> str:
    return f"median {statistics.median(times) * 1000:7.1f} ms (range {min(times) * 1000:.1f}–{max(times) * 1000:.1f})"


async def main() -> None:
    shell = shell_with_frame()
    frame = shell.user_ns["df"]
    print(f"frame: {frame.shape[0]:,} × {frame.shape[1]} float64, {frame.memory_usage().sum() / 2**30:.2f} GiB")
    for code in CODES:
        live, forked, gate = [], [], []
        for _ in range(RUNS):
            started = time.perf_counter()
            _, error, _ = run_code(code, shell.user_ns, shell=shell)
            live.append(time.perf_counter() - started)
            assert error is None, error
            started = time.perf_counter()
            reason = fork_refusal(code, shell.user_ns)
            gate.append(time.perf_counter() - started)
            assert reason is None, reason
            started = time.perf_counter()
            run = await run_forked(code, shell)
            forked.append(time.perf_counter() - started)
            assert run.error is None, run.error
        added = (statistics.median(forked) - statistics.median(live)) * 1000
        print(f"\n{code}")
        print(f"  in-process  {median_ms(live)}")
        print(f"  fork        {median_ms(forked)}")
        print(f"  gate alone  {median_ms(gate)}")
        print(f"  added by the fork: {added:.1f} ms (goal <= 50 ms)")
    run = await run_forked("import os\nfloat(df.to_numpy().sum())\n"
                           "[l for l in open('/proc/self/smaps_rollup') if l.startswith('Private_Dirty')][0]",
                           shell)
    print(f"\nchild's private memory after reading every value: {run.result['text/plain'].split(':')[1].strip()}")


if __name__ == "__main__":
    asyncio.run(main())
