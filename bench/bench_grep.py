"""A `grep` call over a folder of 10,000 small files (100 folders), as the model makes it, through `GrepTool.run`.

Three searches, each ROUNDS times, medians in milliseconds of wall time and means of CPU time (this process
and its ripgrep children: steadier than wall time on a loaded machine): a pattern found in one file, one found in every
file (the answer bounded), and the one-file pattern again with the pure-Python fallback (ripgrep hidden).
What a folder search pays besides ripgrep's own search: the listing of the secret-file candidates, the
listing of every file with an `lstat` each (a file with more than one name is judged by `external_directory`,
`tool/grep.py`), the `lstat` of each matched file, and the bounding of the answer.

    .venv/bin/python bench/bench_grep.py [FILES]
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

from opencode_nb.tool.context import ToolContext
from opencode_nb.tool.grep import GrepTool

ROUNDS = 15


def make_tree(root: Path, files: int) -> None:
    for i in range(files):
        folder = root / f"pkg{i // 1000}" / f"mod{(i // 100) % 10}"
        if i % 100 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{i}.py").write_text(f"# file {i}\nVALUE = {i}\n\ndef f():\n    return VALUE * 2\n")


async def allow(*args: object, **kwargs: object) -> None:
    return None


def cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


async def timed(ctx: ToolContext, args: dict[str, str], rounds: int = ROUNDS) -> str:
    tool = GrepTool()
    await tool.run(args, ctx)
    samples = []
    used = cpu()
    for _ in range(rounds):
        started = time.perf_counter()
        await tool.run(args, ctx)
        samples.append((time.perf_counter() - started) * 1000)
    return f"{statistics.median(samples):.1f} ms (CPU {(cpu() - used) / rounds * 1000:.1f} ms)"


async def main() -> None:
    files = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "proj"
        root.mkdir()
        make_tree(root, files)
        ctx = ToolContext(session_id="ses", message_id="msg", call_id="call", agent="build", directory=root,
                          data_dir=Path(tmp) / "data", ask=allow)
        one = await timed(ctx, {"pattern": rf"VALUE = {files // 2}\b"})
        every = await timed(ctx, {"pattern": "def f"})
        with mock.patch("opencode_nb.tool.grep.shutil.which", lambda name: None):
            fallback = await timed(ctx, {"pattern": rf"VALUE = {files // 2}\b"}, rounds=5)
    print(f"{files} files: one match {one}, a match in every file {every}, one match without ripgrep {fallback}")


if __name__ == "__main__":
    asyncio.run(main())
