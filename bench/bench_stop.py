"""How fast Stop and the kernel's interrupt end a running agent, in a real kernel.

A scripted model starts `sleep 30` through the bash tool; we then press the view's Stop button (a widget
click sent as JupyterLab sends it), or interrupt the kernel (■), and time until the cell's execute_reply.
Five runs each, one fresh kernel per run.

Goal: the agent is cancelled within 0.5 s.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.kernel.frontend import FakeFrontend

RUNS = 5
SCRIPT = [{"text": "Working.", "tool_calls": [{"name": "bash", "input": {"command": "sleep 30", "description": "w"}}]},
          {"text": "not reached"}]


def once(how: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["git", "init", "-q", tmp], check=True)
        Path(tmp, "opencode.yaml").write_text(yaml.safe_dump({
            "model": "scripted/b", "permission": {"bash": "allow"}, "provider": {"scripted": {"script": SCRIPT}}}))
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_NB_")}
        env["OPENCODE_NB_DATA_DIR"] = str(Path(tmp, "data"))
        fe = FakeFrontend(tmp, env)
        try:
            fe.run("%load_ext opencode_nb")
            msg = fe.execute("%%agent\nwait")
            fe.wait_for(lambda: any("ocnb-tool ocnb-running" in str(s.get("value", ""))
                                    for s in list(fe.models.values())), what="the running tool")
            time.sleep(0.3)
            started = time.perf_counter()
            if how == "stop":
                fe.click(fe.wait_button("Stop"))
            else:
                fe.interrupt()
            fe.reply(msg)
            return time.perf_counter() - started
        finally:
            fe.close()


def main() -> None:
    for how in ("stop", "interrupt"):
        times = [once(how) * 1000 for _ in range(RUNS)]
        print(f"{how:>9}: median {statistics.median(times):.0f} ms, range {min(times):.0f}–{max(times):.0f} ms "
              "(goal <= 500 ms)")


if __name__ == "__main__":
    main()
