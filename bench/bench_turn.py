"""What a `%%agent` cell costs over the same turn through the Python API, in one run.

One turn: an instant scripted model makes two requests, the first calling `read` on a small file, the second
answering. The same turn is timed three ways, interleaved round by round so that the machine's load falls
on all three alike:

- (a) `await ws.prompt(...)` on a workspace in this process;
- (b) a `%%agent` cell in a real kernel driven through jupyter_client as a front end drives it, from the
  execute_request until its execute_reply and the kernel's iopub `idle` for it;
- (c) a plain cell (`1+1`) in the same kernel: what any cell costs.

The kernel is started as a Jupyter server starts one for a notebook (`JPY_SESSION_NAME`), so the cell shows
the live view and then the final transcript in its place. The cell's own cost is median(b) - median(c) -
median(a). We also check that the final transcript reaches the cell before the cell ends (its display
update comes before the `idle`), and say how long before.

Wall-clock times on a shared machine swing with its load (a plain cell takes 4 ms on a quiet machine and
10 ms or more on a busy one), so the CPU each turn costs is reported too: the kernel process's (all its
threads, from /proc; a mean, as the kernel counts in ticks of 10 ms) and this process's for the API turn.

Goal: the cell's own cost <= 30 ms, and the final state shown as soon as the run ends.

    .venv/bin/python bench/bench_turn.py [--turns 60] [--warmup 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from jupyter_client.manager import start_new_kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from opencode_nb import Workspace

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
TURN = [{"text": "Reading the notes.", "tool_calls": [{"name": "read", "input": {"path": "notes.txt"}}]},
        {"text": "The notes say hello."}]
PROMPT = "What do the notes say?"
GOAL_MS = 30.0


def project(tmp: Path, turns: int) -> dict[str, str]:
    """A project whose scripted model plays `turns` turns; returns the environment for a kernel in it."""
    subprocess.run(["git", "init", "-q", str(tmp)], check=True)
    (tmp / "notes.txt").write_text("hello\nworld\n")
    (tmp / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "scripted/turn", "permission": {"read": "allow"},
        "provider": {"scripted": {"script": TURN * turns}}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE_NB_", "JPY_"))}
    env["XDG_CONFIG_HOME"] = str(tmp / "xdg")
    return env


class Kernel:
    """A kernel driven as a notebook front end drives it: one execute_request at a time, its messages read
    as they arrive (blocking reads, no polling, so the timings are the kernel's)."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.km, self.kc = start_new_kernel(kernel_name="python3", cwd=str(cwd), env=env)
        self.stat = Path(f"/proc/{self.km.provisioner.pid}/stat")  # type: ignore[attr-defined]
        self.tick = os.sysconf("SC_CLK_TCK")

    def cpu_s(self) -> float:
        """The kernel process's CPU time so far (user + system, every thread)."""
        fields = self.stat.read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self.tick

    def run(self, code: str, timeout: float = 60.0) -> dict[str, Any]:
        """Run one cell; returns its time, whether it failed, and when its last transcript update came."""
        cpu = self.cpu_s()
        started = time.perf_counter()
        msg_id = self.kc.execute(code)
        transcript_at: float | None = None
        views = 0
        while True:
            msg = self.kc.get_iopub_msg(timeout=timeout)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind in ("display_data", "update_display_data"):
                data = content.get("data", {})
                if WIDGET_VIEW in data:
                    views += 1
                elif "ocnb-transcript" in data.get("text/html", ""):
                    transcript_at = time.perf_counter()
            elif kind == "error":
                raise RuntimeError(f"{code!r} failed: {content['ename']}: {content['evalue']}")
            elif kind == "status" and content["execution_state"] == "idle":
                idle_at = time.perf_counter()
                break
        while True:
            reply = self.kc.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        if reply["content"]["status"] != "ok":
            raise RuntimeError(f"{code!r} failed: {reply['content']}")
        return {"s": idle_at - started, "cpu_s": self.cpu_s() - cpu, "views": views,
                "transcript_before_idle": None if transcript_at is None else idle_at - transcript_at}

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


class Api:
    """The same turn through the Python API, on a loop of this process."""

    def __init__(self, directory: Path, env: dict[str, str]) -> None:
        self.loop = asyncio.new_event_loop()
        self.ws = Workspace(directory, data_dir=directory / "api-data", env=env)
        self.session_id = self.ws.sessions.create(str(directory)).id

    def run(self) -> tuple[float, float]:
        """One turn: (wall, CPU) seconds."""
        cpu, started = time.process_time(), time.perf_counter()
        result = self.loop.run_until_complete(self.ws.prompt(self.session_id, PROMPT))
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        if result.error is not None or "hello" not in result.text:
            raise RuntimeError(f"the API turn went wrong: {result.error or result.text!r}")
        return elapsed, cpu

    def close(self) -> None:
        self.loop.run_until_complete(self.ws.aclose())
        self.loop.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60, help="turns timed each way (default 60)")
    parser.add_argument("--warmup", type=int, default=5, help="turns run first and not timed (default 5)")
    args = parser.parse_args()
    wall: dict[str, list[float]] = {"a": [], "b": [], "c": []}
    cpu: dict[str, list[float]] = {"a": [], "b": [], "c": []}
    before: list[float] = []
    late = views = 0
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        env = project(tmp, args.turns + args.warmup)
        kernel_env = {**env, "OPENCODE_NB_DATA_DIR": str(tmp / "data"), "JPY_SESSION_NAME": str(tmp / "turn.ipynb")}
        kernel = Kernel(tmp, kernel_env)
        api = Api(tmp, env)
        try:
            kernel.run("%load_ext opencode_nb")
            for i in range(args.warmup + args.turns):
                a = api.run()
                b = kernel.run(f"%%agent\n{PROMPT}")
                c = kernel.run("1+1")
                if i < args.warmup:
                    continue
                for key, (w, t) in (("a", a), ("b", (b["s"], b["cpu_s"])), ("c", (c["s"], c["cpu_s"]))):
                    wall[key].append(w)
                    cpu[key].append(t)
                views += b["views"] > 0
                if b["transcript_before_idle"] is None:
                    late += 1
                else:
                    before.append(b["transcript_before_idle"])
        finally:
            api.close()
            kernel.close()
    report(wall, cpu, before, late)
    print(f"the live view was shown in {views} of {args.turns} cells (a run shorter than a beat goes straight "
          "to its transcript)")


def report(wall: dict[str, list[float]], cpu: dict[str, list[float]], before: list[float], late: int) -> None:
    def median(values: list[float]) -> float:
        return statistics.median(values) * 1000

    def mean(values: list[float]) -> float:
        return statistics.fmean(values) * 1000

    print(f"{len(wall['b'])} turns each way, interleaved")
    print(f"{'':>20} {'median':>9} {'min':>9} {'max':>9} {'CPU mean':>10}")
    for key, label in (("a", "(a) API turn"), ("b", "(b) %%agent cell"), ("c", "(c) plain cell 1+1")):
        print(f"{label:>20} {median(wall[key]):>6.1f} ms {min(wall[key]) * 1000:>6.1f} ms "
              f"{max(wall[key]) * 1000:>6.1f} ms {mean(cpu[key]):>7.1f} ms")
    own = median(wall["b"]) - median(wall["c"]) - median(wall["a"])
    own_cpu = mean(cpu["b"]) - mean(cpu["c"]) - mean(cpu["a"])
    print(f"cell over a plain cell: {median(wall['b']) - median(wall['c']):.1f} ms; the cell's own cost over the "
          f"API turn: {own:.1f} ms (goal <= {GOAL_MS:.0f} ms); in CPU: {own_cpu:.1f} ms")
    if late:
        print(f"the final transcript did NOT reach the cell before it ended in {late} of {len(wall['b'])} turns")
    else:
        print(f"the final transcript reached the cell before it ended in every turn, "
              f"{statistics.median(before) * 1000:.1f} ms before its idle (median)")


if __name__ == "__main__":
    main()
