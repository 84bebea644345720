"""The product's own writer (`opencode_nb.fs.write_file`) against plain writes, on a file three folders deep.

`fs.write_file` walks the folders by descriptor without following a link, writes a fresh file and renames it
over the name (undo, checkpoint restores, saved output, plan files go through it). Compared with a plain
`Path.write_bytes` (open, truncate, write: follows links) and a plain atomic write (a temporary file and
`os.replace` by path). Medians of RUNS writes of 1 KB and of 1 MB, in microseconds, interleaved.

    .venv/bin/python bench/bench_writer.py
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from opencode_nb import fs

RUNS = 2000
REL = "pkg/mod/sub/file.py"


def plain(root: Path, data: bytes) -> None:
    (root / REL).write_bytes(data)


def atomic(root: Path, data: bytes) -> None:
    target = root / REL
    temp = target.with_name(target.name + ".tmp")
    temp.write_bytes(data)
    os.replace(temp, target)


def product(root: Path, data: bytes) -> None:
    fs.write_file(root, REL, data)


def main() -> None:
    ways: dict[str, Callable[[Path, bytes], None]] = {"write_bytes": plain, "temp + os.replace": atomic,
                                                      "fs.write_file": product}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / REL).parent.mkdir(parents=True)
        for size in (1024, 2**20):
            data = os.urandom(size)
            runs = RUNS if size <= 1024 else RUNS // 10
            samples: dict[str, list[float]] = {name: [] for name in ways}
            for _ in range(runs):
                for name, write in ways.items():
                    started = time.perf_counter()
                    write(root, data)
                    samples[name].append((time.perf_counter() - started) * 1e6)
            base = statistics.median(samples["write_bytes"])
            print(f"{size // 1024:>5} KB: " + ", ".join(f"{name} {statistics.median(s):.0f} µs "
                                                        f"({statistics.median(s) / base:.2f}x)"
                                                        for name, s in samples.items()))


if __name__ == "__main__":
    main()
