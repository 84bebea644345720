"""ruff after an edit: checking a 1,000-line file (goal: ≤ 50 ms, median), and what it adds to a `write`.

The file is ordinary code (imports, dataclasses, functions with loops, comprehensions, f-strings and
exceptions) with two undefined names, so the check finds something and formats its answer. Measured:
`check_source` alone (the ruff process, fed the text on stdin); a whole `WriteTool.run` of that file with
diagnostics against one without, interleaved; and a cell's check with 40 code cells (1,000 lines) above it
and a kernel namespace of 1,000 names.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from opencode_nb.config.schema import DiagnosticsConfig
from opencode_nb.diagnostics import Diagnostics
from opencode_nb.diagnostics.ruff import check_cell, check_source
from opencode_nb.tool.base import ToolContext
from opencode_nb.tool.write import WriteTool

GOAL_S = 0.050
ROUNDS = 31


def source(lines: int = 1000) -> str:
    head = ["from __future__ import annotations", "", "import json", "import math", "from dataclasses import dataclass",
            "from pathlib import Path", "", ""]
    block = [
        "@dataclass",
        "class Item{n}:",
        "    name: str",
        "    price: float",
        "",
        "    def total(self, count: int) -> float:",
        "        return self.price * count",
        "",
        "",
        "def load{n}(path: Path) -> list[Item{n}]:",
        "    rows = json.loads(path.read_text())",
        "    items = [Item{n}(r['name'], float(r['price'])) for r in rows if r.get('price')]",
        "    for item in items:",
        "        if math.isnan(item.price):",
        "            raise ValueError(f'{{item.name}} has no price')",
        "    return sorted(items, key=lambda i: (i.price, i.name))",
        "",
        "",
    ]
    out = list(head)
    n = 0
    while len(out) < lines:
        out += [line.format(n=n) for line in block]
        n += 1
    out = [*out[:lines - 2], "print(totl)", "print(missing_name)"]
    return "\n".join(out) + "\n"


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def main() -> None:
    text = source()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = root / "module.py"
        found = await check_source(text, path, cwd=root, timeout_s=10)
        assert [f.code for f in found] == ["F821", "F821"], found
        times = []
        for _ in range(ROUNDS):
            started = time.perf_counter()
            await check_source(text, path, cwd=root, timeout_s=10)
            times.append(time.perf_counter() - started)
        print(f"ruff check, {text.count(chr(10))} lines: median {median_ms(times):.1f} ms "
              f"(min {min(times) * 1000:.1f}, max {max(times) * 1000:.1f}); goal ≤ {GOAL_S * 1000:.0f} ms: "
              f"{'met' if statistics.median(times) <= GOAL_S else 'MISSED'}")

        async def no_ask(*args: object, **kwargs: object) -> None:
            return None

        ctx = ToolContext(session_id="s", message_id="m", call_id="c", agent="build", directory=root,
                          data_dir=root / "data", ask=no_ask)
        checked, bare = WriteTool(Diagnostics(DiagnosticsConfig())), WriteTool()
        with_checks, without = [], []
        for i in range(ROUNDS):
            for tool, into in ((checked, with_checks), (bare, without)):
                started = time.perf_counter()
                await tool.run({"path": f"w{i}.py", "content": text}, ctx)
                into.append(time.perf_counter() - started)
        print(f"write of that file: {median_ms(with_checks):.1f} ms with diagnostics, {median_ms(without):.1f} ms "
              f"without (+{median_ms(with_checks) - median_ms(without):.1f} ms)")

        cells = [source(25) for _ in range(40)]
        known = {f"name{i}" for i in range(1000)}
        times = []
        for _ in range(ROUNDS):
            started = time.perf_counter()
            await check_cell("print(name7, totl)\n%timeit name8\n", cells, root / "nb.ipynb", cwd=root,
                             timeout_s=10, known=known)
            times.append(time.perf_counter() - started)
        print(f"cell check, 40 cells (1,000 lines) above, 1,000 kernel names: median {median_ms(times):.1f} ms")


if __name__ == "__main__":
    asyncio.run(main())
