"""Eight kernels of one person × 50 turns each on one session store, each mode in the same run: the wall time
until all are done and the median and p95 of a single part append (a streamed-text flush or a tool state, one
transaction each) and the slowest one, with ratios to SQLite on local disk in WAL.

Each kernel is a process writing its own session the way the session loop does (`tests/session/store_fs/
kernel.py`: per turn 3 grouped transactions and 4 single appends, 5 parts and 2 messages). Modes: SQLite on
local disk in WAL (the default there); SQLite on local disk with the rollback journal and queued writers (the
network mode, forced); SQLite on a FUSE mount (bindfs over the same disk, so the difference is FUSE's round
trips), where the store chooses the network mode itself; and, given a server's URL in `OPENCODE_NB_BENCH_PG_URL`,
the PostgreSQL backend (a store of its own on that server per round).

    .venv/bin/python bench/bench_store_kernels.py [ROUNDS]
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KERNELS = 8
TURNS = 50


def run(target: str, scratch: Path) -> tuple[float, list[float]]:
    """Wall time of KERNELS kernels × TURNS turns on `target`, and every single append's time."""
    import json

    start = scratch / f"go-{time.monotonic_ns()}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("OPENCODE_NB_STORE_JOURNAL", None)
    kernels = [subprocess.Popen([sys.executable, "-m", "tests.session.store_fs.kernel", target, str(TURNS),
                                 str(start)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True) for _ in range(KERNELS)]
    for k in kernels:
        k.stdout.readline()  # type: ignore[union-attr]  # its session exists: the store is open
    began = time.perf_counter()
    start.touch()
    appends: list[float] = []
    for k in kernels:
        out, err = k.communicate(timeout=600)
        if k.returncode != 0 or "locked" in err:
            raise SystemExit(f"a kernel failed on {target}:\n{err}")
        appends += json.loads(out.splitlines()[-1])["appends_s"]
    return time.perf_counter() - began, appends


def mount_fuse(base: Path) -> Path | None:
    if shutil.which("bindfs") is None:
        return None
    backing, mount = base / "backing", base / "mount"
    backing.mkdir()
    mount.mkdir()
    if subprocess.run(["bindfs", str(backing), str(mount)], capture_output=True, check=False).returncode != 0:
        return None
    return mount


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        fuse = mount_fuse(base)
        modes: dict[str, str] = {}
        try:
            for rnd in range(rounds):
                targets = {"SQLite local, WAL": f"sqlite:auto:{base / f'local{rnd}' / 's.sqlite'}",
                           "SQLite local, rollback": f"sqlite:rollback:{base / f'rollback{rnd}' / 's.sqlite'}"}
                if fuse is not None:
                    targets["SQLite on FUSE (auto: rollback)"] = f"sqlite:auto:{fuse / f'fuse{rnd}' / 's.sqlite'}"
                if os.environ.get("OPENCODE_NB_BENCH_PG_URL"):
                    targets["PostgreSQL"] = f"pg:kernels{os.getpid()}r{rnd}:{os.environ['OPENCODE_NB_BENCH_PG_URL']}"
                modes.update(targets)
                for name, target in targets.items():  # interleaved: each round runs every mode once
                    wall, appends = run(target, base)
                    RESULTS.setdefault(name, []).append((wall, appends))
        finally:
            if fuse is not None:
                subprocess.run(["fusermount", "-u", str(fuse)], check=False)
    if fuse is None:
        print("(no FUSE mount here: bindfs missing or mounting refused)")
    first = next(iter(RESULTS))
    base_wall = statistics.median(w for w, _ in RESULTS[first])
    base_p95 = statistics.median(_p95(a) for _, a in RESULTS[first])
    print(f"{KERNELS} kernels x {TURNS} turns, {rounds} rounds (median of rounds; slowest append of all rounds; "
          "per round: wall, p95)")
    for name, runs in RESULTS.items():
        wall = statistics.median(w for w, _ in runs)
        p95 = statistics.median(_p95(a) for _, a in runs)
        median = statistics.median(statistics.median(a) for _, a in runs)
        slowest = max(max(a) for _, a in runs)
        spread = ", ".join(f"{w:.2f} s/{_p95(a) * 1000:.1f} ms" for w, a in runs)
        print(f"  {name:32} wall {wall:6.2f} s ({wall / base_wall:5.2f}x)  append median {median * 1000:6.2f} ms  "
              f"p95 {p95 * 1000:6.2f} ms ({p95 / base_p95:6.1f}x)  slowest {slowest * 1000:6.0f} ms   [{spread}]")


RESULTS: dict[str, list[tuple[float, list[float]]]] = {}


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


if __name__ == "__main__":
    main()
