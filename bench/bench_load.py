"""`%load_ext opencode_nb` in a real kernel, and how long until the notebook's workspace is ready.

Each run starts a fresh kernel (so nothing is imported yet), times the magic inside the kernel, then
times how long the workspace, built on a worker thread, takes to be ready for the first prompt.

Goal: `%load_ext` < 300 ms.
"""

from __future__ import annotations

import json
import statistics
import tempfile

from jupyter_client.manager import start_new_kernel

RUNS = 5
CODE = """
import time as _t, json as _j
_s = _t.perf_counter()
get_ipython().run_line_magic("load_ext", "opencode_nb")
_l = _t.perf_counter() - _s
import opencode_nb.kernel as _k
_k.current().workspace()
print(_j.dumps({"load": _l, "ready": _t.perf_counter() - _s}))
"""


def once() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        km, kc = start_new_kernel(kernel_name="python3", cwd=tmp, env={"OPENCODE_NB_DATA_DIR": tmp})
        try:
            out: list[str] = []
            kc.execute_interactive(CODE, timeout=60, output_hook=lambda m: m["msg_type"] == "stream"
                                   and out.append(m["content"]["text"]))
            return json.loads("".join(out))
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)


def main() -> None:
    runs = [once() for _ in range(RUNS)]
    load = [r["load"] * 1000 for r in runs]
    ready = [r["ready"] * 1000 for r in runs]
    print(f"%load_ext opencode_nb: median {statistics.median(load):.0f} ms, range {min(load):.0f}–{max(load):.0f} ms "
          f"(goal < 300 ms)")
    print(f"workspace ready for the first prompt: median {statistics.median(ready):.0f} ms, "
          f"range {min(ready):.0f}–{max(ready):.0f} ms")


if __name__ == "__main__":
    main()
