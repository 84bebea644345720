"""What a notebook pays per `%agent` cell to notice an edited configuration, and to check a prompt can start.

Every `%agent` cell compares the configuration files with what the workspace read (`LoadedConfig.on_disk`:
finding the files that would be read, then a `stat` each), and every prompt resolves its agent and model
before a session exists (`preflight.check`). Both run on the kernel's thread before anything else, so they
must stay far below what a person notices. Measured on a project six folders below its git root with 20
agent files, 10 command files and an `opencode.yaml` at three levels, against reading the whole
configuration afresh (`load_config`), which is what a change costs.

Goal: the per-cell check <= 2 ms and <= 25% of a full read; the preflight <= 1 ms (medians).
Run: `.venv/bin/python bench/bench_config_watch.py`.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from opencode_nb.config import load_config
from opencode_nb.kernel.magics import preflight
from opencode_nb.workspace import Workspace

ROUNDS = 300


def project(base: Path) -> Path:
    (base / ".git").mkdir()
    deep = base.joinpath("a", "b", "c", "d", "e", "work")
    deep.mkdir(parents=True)
    for level in (base, base / "a" / "b", deep):
        (level / "opencode.yaml").write_text("model: scripted/demo\npermission:\n  bash: ask\n")
    agents, commands = deep / ".opencode" / "agent", deep / ".opencode" / "command"
    agents.mkdir(parents=True)
    commands.mkdir(parents=True)
    for n in range(20):
        (agents / f"helper{n}.md").write_text(f"---\ndescription: helper {n}\nmode: subagent\n---\nYou help.\n")
    for n in range(10):
        (commands / f"cmd{n}.md").write_text(f"---\ndescription: command {n}\n---\nDo thing {n}.\n")
    return deep


def median_ms(call: Callable[[], object], rounds: int = ROUNDS) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = project(Path(tmp))
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_NB_")}
        env["XDG_CONFIG_HOME"] = str(Path(tmp) / "xdg")
        with Workspace(directory, env=env, data_dir=Path(tmp) / "data") as ws:
            watch = median_ms(ws.loaded.on_disk)
            full = median_ms(lambda: load_config(directory, env=env), rounds=60)
            check = median_ms(lambda: preflight.check(ws, agent=None, model=None, setting=None, session_id=None))
        print(f"per-cell change check (stat of {len(ws.loaded.on_disk())} files): {watch:.3f} ms median")
        print(f"full configuration read:                   {full:.3f} ms median  (check = {watch / full:.1%})")
        print(f"prompt preflight (agent + model resolved): {check:.3f} ms median")


if __name__ == "__main__":
    main()
