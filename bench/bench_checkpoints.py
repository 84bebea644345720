"""Checkpoint cost: recording the project's files on a tree of 1k / 10k / 50k files.

For each size: the first snapshot (every file hashed once), a snapshot of the unchanged tree, one after one
file changed, and a snapshot of the unchanged tree with 1 GB of ignored data beside it (a sparse file in a
folder `.gitignore` names). Medians of several runs, in milliseconds; `SnapshotStore.snapshot` is what one
checkpoint costs (run off the event loop in a session). Goals: 10k unchanged ≤ 50 ms, 10k one change ≤ 100 ms,
ignored data costs nothing.

    .venv/bin/python bench/bench_checkpoints.py [SIZES...]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from opencode_nb.checkpoint.store import SnapshotStore

RUNS = 9


def make_tree(root: Path, files: int) -> None:
    for i in range(files):
        folder = root / f"pkg{i // 1000}" / f"mod{(i // 100) % 10}"
        if i % 100 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{i}.py").write_text(f"# file {i}\nVALUE = {i}\n\ndef f():\n    return VALUE * 2\n")


def timed(store: SnapshotStore, before=None) -> float:
    samples = []
    for n in range(RUNS):
        if before is not None:
            before(n)
        start = time.perf_counter()
        store.snapshot()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def bench(files: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root, data = Path(tmp) / "proj", Path(tmp) / "data"
        root.mkdir()
        make_tree(root, files)
        store = SnapshotStore(data / "cp.git", root)
        start = time.perf_counter()
        store.snapshot()
        first = (time.perf_counter() - start) * 1000
        unchanged = timed(store)
        target = root / "pkg0" / "mod0" / "file0.py"
        one = timed(store, lambda n: target.write_text(f"# changed {n}\n"))
        (root / ".gitignore").write_text("data/\n")
        (root / "data").mkdir()
        with open(root / "data" / "huge.bin", "wb") as f:
            f.truncate(2**30)
        store.snapshot(fresh=True)  # a turn's first snapshot: the person's new `.gitignore` is adopted
        ignored = timed(store)
        size = sum(p.stat().st_size for p in (data / "cp.git").rglob("*") if p.is_file()) / 2**20
        return {"first": first, "unchanged": unchanged, "one change": one, "unchanged + 1 GB ignored": ignored,
                "store MB": size}


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1_000, 10_000, 50_000]
    for files in sizes:
        figures = bench(files)
        print(f"{files:>6} files: " + ", ".join(f"{k} {v:.1f}" + ("" if k == "store MB" else " ms")
                                                for k, v in figures.items()))


if __name__ == "__main__":
    main()
