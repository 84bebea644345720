"""What the per-host network proxy costs a sandboxed command, against the same command with a direct route.

Three figures, each through `ShellRun` as the bash tool runs commands, RUNS rounds interleaved:
- start-up: `true` in bubblewrap without a proxy against with one (the relay, a Python process, starts first);
- latency: 20 small HTTP requests one after another (`curl`, a new connection each), unsandboxed and direct
  against sandboxed through relay and proxy: the added time per request (timed inside the command);
- throughput: one 64 MB download, direct against through the proxy (MB/s and the ratio, timed inside).

The "hosts" are a loopback HTTP server on 127.0.0.2, allowed by a rule naming it exactly.

Goal: ≤ 50 ms added at start-up; ≤ 5 ms added per request; ≥ 100 MB/s through the proxy (loopback to
loopback: far above what a real host serves, so the ratio to direct matters less than the floor).
"""

from __future__ import annotations

import asyncio
import http.server
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from opencode_nb.sandbox.policy import Backend, Confinement, find_backend
from opencode_nb.sandbox.proxy import HostProxy, Verdict
from opencode_nb.tool.shell.process import ShellRun

RUNS = 7
REQUESTS = 20
BIG = 64 * 1024 * 1024
BODY = b"x" * BIG


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        body = BODY if self.path == "/big" else b"small"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return None


async def allow(host: str, port: int) -> Verdict:
    return Verdict(True, named=True)


async def timed(command: str, folder: Path, confinement: Confinement | None) -> float:
    """Seconds the command took: from outside, or as it measured itself when it prints `took NANOSECONDS`."""
    started = time.perf_counter()
    run = ShellRun(command, cwd=folder, output_dir=folder / "out", confinement=confinement)
    await run.wait(120)
    elapsed = time.perf_counter() - started
    text = run.capture.text()[0]
    assert run.exit_code == 0, text
    return int(text.split("took ")[1].split()[0]) / 1e9 if "took " in text else elapsed


async def main() -> None:
    found = find_backend()
    if not isinstance(found, Backend) or found.kind != "bwrap":
        print(f"no bubblewrap here: {found}")
        return
    server = http.server.ThreadingHTTPServer(("127.0.0.2", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.2:{server.server_address[1]}"
    folder = Path(tempfile.mkdtemp(prefix="bench-network-"))

    def boxed(proxy: bool) -> Confinement:
        return Confinement(found, (folder,), proxy=HostProxy(allow) if proxy else None)

    small = f"s=$(date +%s%N); for i in $(seq {REQUESTS}); do curl -sS -o /dev/null {url}/small; done; " \
            "echo took $(($(date +%s%N) - s))"
    big = f"s=$(date +%s%N); curl -sS -o /dev/null {url}/big; echo took $(($(date +%s%N) - s))"
    figures: dict[str, list[float]] = {k: [] for k in ("bare", "relay", "direct", "proxied", "big-d", "big-p")}
    for _ in range(RUNS):
        figures["bare"].append(await timed("true", folder, boxed(False)))
        figures["relay"].append(await timed("true", folder, boxed(True)))
        figures["direct"].append(await timed(small, folder, None))
        figures["proxied"].append(await timed(small, folder, boxed(True)))
        figures["big-d"].append(await timed(big, folder, None))
        figures["big-p"].append(await timed(big, folder, boxed(True)))
    server.shutdown()
    med = {k: statistics.median(v) for k, v in figures.items()}
    print(f"start-up: bwrap {med['bare'] * 1000:.1f} ms, with relay and proxy {med['relay'] * 1000:.1f} ms "
          f"(+{(med['relay'] - med['bare']) * 1000:.1f} ms)")
    per = (med["proxied"] - med["direct"]) / REQUESTS
    print(f"{REQUESTS} requests: direct {med['direct'] * 1000:.0f} ms, proxied {med['proxied'] * 1000:.0f} ms "
          f"({per * 1000:+.2f} ms per request)")
    direct, proxied = BIG / med["big-d"] / 1e6, BIG / med["big-p"] / 1e6
    print(f"{BIG // 2**20} MB download: direct {direct:.0f} MB/s, proxied {proxied:.0f} MB/s "
          f"({proxied / direct:.2f}x)")


if __name__ == "__main__":
    asyncio.run(main())
