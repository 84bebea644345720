"""The live notebook through the JupyterLab extension, in a real JupyterLab and headless Chromium.

Two figures, each from the kernel's side of the `opencode_nb` comm:

- inserting 20 cells: from the kernel sending `insert_cells` until all 20 cells are in the page with their
  text (a MutationObserver in the page stamps the moment; kernel and browser share this machine's clock);
- `read_cells` on a 500-cell notebook (code and markdown cells, a third with outputs): the round trip
  of the request, and the same through `NotebookCells.read`, which also validates every cell.

Goals: 20 cells inserted in <= 1 s; `read_cells` on 500 cells <= 200 ms (median).
Run: `.venv/bin/python bench/bench_cells.py` (needs Chromium and the built extension, as the browser tests).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.lab import Lab

DEBUG = "-v" in sys.argv
COUNT = """() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell .jp-InputArea')]
  .filter(e => e.textContent.includes('# bench-insert')).length"""
ROUNDS = 7
"""Insert rounds; each inserts 20 cells and then deletes them again."""
READS = 15

LOAD = "%load_ext opencode_nb\nfrom opencode_nb.kernel import current\nprint('loaded')"

INSERT = """import asyncio, json, os, time
fe = current().frontend
here = get_ipython().kernel.get_parent()["metadata"]["cellId"]  # under this cell, as an agent's cells go
sent = []
for round_ in range(%(rounds)d):
    cells = [{"cell_type": "code", "source": f"# bench-insert {round_}-{n}\\nx = {n}", "metadata": {}}
             for n in range(20)]
    sent.append(time.time() * 1000)
    reply = await fe.request("insert_cells", after=here, cells=cells)
    while not os.path.exists(f"_bench_seen_{round_}"):  # the page saw all 20 (the bench writes this file)
        await asyncio.sleep(0.01)
    await fe.request("delete_cells", cell_ids=reply["ids"])
print("SENT", json.dumps(sent))"""

READ = """import asyncio, json, time
fe = current().frontend
cells = current().notebook
raw, full = [], []
for _ in range(%(reads)d):
    t = time.perf_counter(); reply = await fe.request("read_cells"); raw.append((time.perf_counter() - t) * 1000)
    t = time.perf_counter(); snap = await cells.read(); full.append((time.perf_counter() - t) * 1000)
print("READ", json.dumps({"cells": len(reply["cells"]), "total": snap.total, "raw": raw, "full": full}))"""

OBSERVE = """(rounds) => {
  window.__ocnbSeen = {};
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  const check = () => {
    for (let r = 0; r < rounds; r++) {
      if (window.__ocnbSeen[r]) continue;
      const n = [...panel.querySelectorAll('.jp-Cell .jp-InputArea')]
        .filter(e => e.textContent.includes(`# bench-insert ${r}-`)).length;
      if (n === 20) window.__ocnbSeen[r] = performance.timeOrigin + performance.now();
    }
  };
  new MutationObserver(check).observe(panel, {childList: true, subtree: true, characterData: true});
}"""


def _filler(n: int) -> list[str]:
    cells = []
    for i in range(n):
        if i % 3 == 0:
            cells.append(f"# %% md\n## Section {i}\nSome notes about step {i}, with a list:\n- one\n- two")
        else:
            cells.append(f"x{i} = {i} * 2\nprint('value', x{i})" if i % 3 == 1 else f"y{i} = [k for k in range({i})]")
    return cells


def _with_outputs(lab: Lab, name: str) -> None:
    """Give half the code cells (a third of all cells) a saved output, as a worked notebook has."""
    path = lab.root / name
    nb = json.loads(path.read_text())
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code" and i % 2 == 1 and i > 2:
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": [f"value {i}\n" * 5]}]
    path.write_text(json.dumps(nb))


def _stats(values: list[float]) -> str:
    return f"median {statistics.median(values):.0f} ms (min {min(values):.0f}, max {max(values):.0f})"


def main() -> None:
    with Lab(env={"OPENCODE_NB_HEADLESS": ""}) as lab:
        lab.write_notebook("insert.ipynb", [LOAD, INSERT % {"rounds": ROUNDS}, "print('end')"])
        lab.open_notebook("insert.ipynb")
        lab.run_cell(0)
        lab.wait_output(0, "loaded")
        time.sleep(1.0)  # the hello
        lab.page.evaluate(OBSERVE, ROUNDS)
        lab.run_cell(1, key="Control+Enter")
        seen: dict[str, float] = {}
        deadline = time.monotonic() + 120
        while len(seen) < ROUNDS and time.monotonic() < deadline:
            seen = lab.page.evaluate("() => window.__ocnbSeen")
            if DEBUG:
                print(seen, lab.page.evaluate(COUNT))
            for r in seen:
                (lab.root / f"_bench_seen_{r}").touch()
            time.sleep(0.02)
        lab.wait_output(1, "SENT", timeout=120)
        sent = json.loads(lab.output_text(1).split("SENT", 1)[1].strip().splitlines()[0])
        inserts = [seen[str(r)] - sent[r] for r in range(ROUNDS)]
        print(f"insert 20 cells, request → rendered: {_stats(inserts)}  (goal <= 1000 ms)")

        name = "read500.ipynb"
        lab.write_notebook(name, [LOAD, READ % {"reads": READS}, *_filler(498)])
        _with_outputs(lab, name)
        lab.open_notebook(name)
        lab.run_cell(0)
        lab.wait_output(0, "loaded")
        time.sleep(1.0)
        lab.run_cell(1, key="Control+Enter")
        lab.wait_output(1, "READ", timeout=120)
        read = json.loads(lab.output_text(1).split("READ", 1)[1].strip().splitlines()[0])
        print(f"read_cells on {read['cells']} cells: round trip {_stats(read['raw'])}; "
              f"NotebookCells.read {_stats(read['full'])}  (goal <= 200 ms)")

if __name__ == "__main__":
    main()
