"""From `%agent explain` to the model's first request, with a 1 GB frame and 200 variables in the namespace.

Two real kernels, driven through jupyter_client, each in a project whose model is `anthropic/...` served by
the real SDK from a loopback server speaking the Messages wire protocol (the tests' `WireServer`):

- (empty) the namespace holds only what the failing cell reads (a three-row `sales` frame);
- (full) it also holds a 1 GB float64 frame (`np.ones`, so the memory is really there) and 200 other
  variables (numbers, text, lists, dicts, arrays, small frames), none of which the cell reads.

Each round starts a new session (`%agent new`), runs the failing cell (`sales['revenue']`, a KeyError), then
sends `%agent explain` and times from the execute_request until the server receives the model request;
the model answers at once. Rounds alternate between the two kernels so the machine's load falls on both
alike. The kernels run headless (`OPENCODE_NB_HEADLESS=1`: no wait to learn whether a page draws widgets)
with the notebook file named (`OPENCODE_NB_NOTEBOOK`), so the cells above are read from it.

Goal: the full namespace's median <= 100 ms; the ratio full / empty says what the namespace costs.

    .venv/bin/python bench/bench_fix_context.py [--rounds 15] [--warmup 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat
import yaml
from jupyter_client.manager import start_new_kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.provider.wire_anthropic import anthropic_stream
from tests.provider.wire_server import WireServer

GOAL_MS = 100.0
SETUP = ("import numpy as np\nimport pandas as pd\n"
         "sales = pd.DataFrame({'amount': [12.5, 30.0, 7.25], 'city': ['Oslo', 'Rome', 'Lima']})")
FAILING = "total = sales['revenue'].sum()"
FULL = ("big = pd.DataFrame(np.ones((16_777_216, 8)), columns=[f'x{i}' for i in range(8)])\n"
        "for i in range(200):\n"
        "    globals()[f'v{i}'] = [i, f'text {i}', list(range(50)), {'k': i}, np.arange(1000) * i,\n"
        "                          pd.DataFrame({'a': range(100), 'b': [str(j) for j in range(100)]})][i % 6]\n"
        "del i")
"""1 GiB of real memory (np.ones writes every page) and 200 variables, none read by the failing cell."""


def project(tmp: Path, server: WireServer) -> dict[str, str]:
    subprocess.run(["git", "init", "-q", str(tmp)], check=True)
    (tmp / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "anthropic/claude-sonnet-4-6", "small_model": "scripted/title", "permission": {"*": "allow"},
        "provider": {"scripted": {"script": []}, "anthropic": {"base_url": server.url, "api_key": "sk-bench"}}}))
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(SETUP), nbformat.v4.new_code_cell(FAILING),
                      nbformat.v4.new_code_cell("%agent explain")]
    nbformat.write(notebook, tmp / "analysis.ipynb")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE_NB_", "JPY_"))}
    env.update({"XDG_CONFIG_HOME": str(tmp / "xdg"), "OPENCODE_NB_DATA_DIR": str(tmp / "data"),
                "OPENCODE_NB_HEADLESS": "1", "OPENCODE_NB_NOTEBOOK": str(tmp / "analysis.ipynb"),
                "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    return env


def run(kc: Any, code: str, timeout: float = 120.0) -> dict[str, Any]:
    # A cell that fails would have ipykernel abort the requests that reach it right after (stop_on_error).
    msg_id = kc.execute(code, stop_on_error=False)
    while True:
        reply = kc.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply


def drain(kc: Any) -> None:
    while kc.iopub_channel.msg_ready():
        kc.get_iopub_msg(timeout=1)


class Bench:
    """One kernel, its project and its loopback model."""

    def __init__(self, name: str, tmp: Path, full: bool) -> None:
        self.name = name
        self.server = WireServer()
        env = project(tmp, self.server)
        self.km, self.kc = start_new_kernel(kernel_name="python3", cwd=str(tmp), env=env)
        for code in ("%load_ext opencode_nb", SETUP, *([FULL] if full else []),
                     "import opencode_nb.kernel as _k; _ = _k.current().workspace()"):
            assert run(self.kc, code)["content"]["status"] == "ok", code
        drain(self.kc)

    def round(self) -> float:
        """Seconds from sending `%agent explain` until the model's request arrived."""
        assert run(self.kc, "%agent new")["content"]["status"] == "ok"
        assert run(self.kc, FAILING)["content"]["status"] == "error"
        self.server.queue(anthropic_stream({"text": "There is no column revenue; try amount."}))
        seen = len(self.server.received)
        start = time.perf_counter()
        msg_id = self.kc.execute("%agent explain")
        while len(self.server.received) == seen:
            time.sleep(0.0002)
            if time.perf_counter() - start > 30:
                raise RuntimeError(f"no model request after 30 s: {self.kc.get_shell_msg(timeout=60)['content']}")
        elapsed = time.perf_counter() - start
        while True:
            reply = self.kc.get_shell_msg(timeout=60)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        assert reply["content"]["status"] == "ok", reply["content"]
        body = str(self.server.received[-1].body)
        assert "KeyError: 'revenue'" in body and "'big'" not in body and "v199" not in body
        drain(self.kc)
        return elapsed

    def gathering(self) -> float:
        """Seconds the context of the last failure takes to gather, alone, measured inside the kernel."""
        code = ("import time as _t, opencode_nb.kernel as _k\nfrom opencode_nb.kernel.fix.context import context_text\n"
                "_a = _k.current(); _s = _t.perf_counter(); _c = await context_text(_a, _a.failures.find(None))\n"
                "print(_t.perf_counter() - _s)")
        msg_id = self.kc.execute(code)
        printed = ""
        while True:
            msg = self.kc.get_iopub_msg(timeout=60)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                printed += msg["content"]["text"]
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return float(printed.split()[-1])

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)
        self.server.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        benches = [Bench("empty", Path(a), full=False), Bench("full", Path(b), full=True)]
        times: dict[str, list[float]] = {bench.name: [] for bench in benches}
        alone: dict[str, list[float]] = {bench.name: [] for bench in benches}
        try:
            for i in range(args.warmup + args.rounds):
                for bench in benches:
                    elapsed = bench.round()
                    if i >= args.warmup:
                        times[bench.name].append(elapsed)
                        alone[bench.name].append(bench.gathering())
        finally:
            for bench in benches:
                bench.close()
    empty, full = (statistics.median(times[name]) * 1000 for name in ("empty", "full"))
    for name in ("empty", "full"):
        values = sorted(t * 1000 for t in times[name])
        print(f"{name:>5}: median {statistics.median(values):6.1f} ms  min {values[0]:6.1f}  max {values[-1]:6.1f}"
              f"  ({len(values)} rounds); the context alone {statistics.median(alone[name]) * 1000:.1f} ms")
    print(f"ratio full / empty: {full / empty:.2f}×; goal: full ≤ {GOAL_MS:.0f} ms "
          f"({'met' if full <= GOAL_MS else 'NOT met'})")


if __name__ == "__main__":
    main()
