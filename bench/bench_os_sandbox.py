"""What the OS sandbox adds to a shell command: `true`, RUNS times, bare and inside bubblewrap.

Measured three ways: the process alone (`bash -c true` against `bwrap … bash -c true`, what the kernel
pays), through `ShellRun` as the bash tool runs it (streamed output, process group), and the policy's own
per-call work (deciding the launch and building bwrap's arguments). Also shown: the one-off probe that
finds out whether bwrap works here, which each process pays once, and the python tool's spawned worker
(a fresh interpreter importing IPython and matplotlib) with and without bwrap, WORKER_RUNS times.

Goal: the sandbox adds at most 10 ms to a command.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from opencode_nb.kernel.python.worker import run_in_worker
from opencode_nb.sandbox import bwrap as bwrap_module
from opencode_nb.sandbox.policy import BWRAP_ENV, Backend, Confinement, ShellSandbox, find_backend
from opencode_nb.tool.shell.process import ShellRun

RUNS = 100
WORKER_RUNS = 7


def ms(times: list[float]) -> str:
    return f"median {statistics.median(times) * 1000:6.2f} ms (p90 {sorted(times)[int(len(times) * 0.9)] * 1000:.2f})"


def added(bare: list[float], boxed: list[float]) -> str:
    return f"added {1000 * (statistics.median(boxed) - statistics.median(bare)):.2f} ms"


def processes(argv: list[str]) -> list[float]:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run(argv, check=True, stdin=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return times


async def shell_runs(folder: Path, confinement: Confinement | None) -> list[float]:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        run = ShellRun("true", cwd=folder, output_dir=folder / "out", confinement=confinement)
        await run.wait(10)
        times.append(time.perf_counter() - started)
        assert run.exit_code == 0
    return times


async def main() -> None:
    started = time.perf_counter()
    found = find_backend()
    probe_ms = (time.perf_counter() - started) * 1000
    if not isinstance(found, Backend):
        sys.exit(f"no sandbox here: {found}")
    print(f"probe (once per process): {probe_ms:.1f} ms; bwrap at {found.binary}")
    bash = shutil.which("bash") or "/bin/sh"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        confinement = Confinement(found, (folder,))
        argv = confinement.wrap([bash, "-c", "true"], cwd=folder)

        bare, boxed = processes([bash, "-c", "true"]), processes(argv)
        print(f"process  bare    {ms(bare)}")
        print(f"process  bwrap   {ms(boxed)}   {added(bare, boxed)}")

        bare, boxed = await shell_runs(folder, None), await shell_runs(folder, confinement)
        print(f"ShellRun bare    {ms(bare)}")
        print(f"ShellRun bwrap   {ms(boxed)}   {added(bare, boxed)}")

        sandbox = ShellSandbox("auto", writable=[folder, folder / "out", folder / "tmp"])
        times = []
        for _ in range(RUNS):
            started = time.perf_counter()
            launch = await sandbox.launch("s")
            assert launch.confinement is not None
            bwrap_module.bwrap_args(found.binary, writable=launch.confinement.writable, network=False, cwd=folder)
            times.append(time.perf_counter() - started)
        print(f"policy + arguments per call {ms(times)}")

    workers: dict[str, list[float]] = {"bare": [], "bwrap": []}
    for _ in range(WORKER_RUNS):  # interleaved, so that a busy moment weighs on both
        for label, binary in (("bare", "/nonexistent"), ("bwrap", found.binary)):
            os.environ[BWRAP_ENV] = binary
            started = time.perf_counter()
            run = await run_in_worker("import matplotlib.pyplot as plt\nplt.plot([1, 2])\n1", {})
            workers[label].append(time.perf_counter() - started)
            assert run.error is None, run.error
    print(f"worker   bare    {ms(workers['bare'])}")
    print(f"worker   bwrap   {ms(workers['bwrap'])}   {added(workers['bare'], workers['bwrap'])}")


if __name__ == "__main__":
    asyncio.run(main())
