"""The session store on PostgreSQL against SQLite, same run: part appends per second over loopback (goal
>= 2,000/s) and loading a 10,000-part session through `messages()` (goal <= 300 ms).

The server is started here from the distribution's binaries, in a temporary folder, as the store's tests start
it (`tests/postgres.py`): password authentication on a loopback TCP port, the store's role not a superuser,
`fsync=off` on the server (a throwaway cluster; the store itself commits with `synchronous_commit=off`, so a
commit waits for no disk either way). The session is `bench_store.py`'s: 100 turns of 100 parts, half text,
half completed tool calls. Appends are one transaction each, as the service writes them. Rounds alternate the
two backends; the figures are the median and the range over the rounds.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_store import PARTS, history  # noqa: E402

from opencode_nb.session.store import SessionStore  # noqa: E402
from tests.postgres import Server, Unavailable, start_server  # noqa: E402

APPEND_GOAL = 2_000
LOAD_GOAL_MS = 300
ROUNDS = 3
LOADS = 7


def one_round(open_store, name: str) -> tuple[float, float]:
    """Appends/s of 10k parts into a fresh store, then the median of `LOADS` loads of that session (ms)."""
    with open_store(name) as store:
        session, parts = history(store)
        start = time.perf_counter()
        for part in parts:
            store.add_part(part)
        rate = len(parts) / (time.perf_counter() - start)
        loads = []
        for _ in range(LOADS):
            start = time.perf_counter()
            loaded = store.messages(session.id)
            loads.append((time.perf_counter() - start) * 1000)
        assert sum(len(m.parts) for m in loaded) == PARTS
    return rate, statistics.median(loads)


def main() -> None:
    try:
        server: Server = start_server()
    except Unavailable as exc:
        sys.exit(f"no PostgreSQL server: {exc}")
    try:
        password = server.role("bench")
        server.database("bench", owner="bench")
        url = server.url("bench", password, "bench")
        with tempfile.TemporaryDirectory() as tmp:
            backends = {
                "sqlite": lambda name: SessionStore(Path(tmp) / f"{name}.sqlite"),
                "postgresql": lambda name: SessionStore(Path(tmp) / f"{name}.sqlite", url=url),
            }
            figures: dict[str, list[tuple[float, float]]] = {b: [] for b in backends}
            for n in range(ROUNDS):
                for backend, open_store in backends.items():
                    figures[backend].append(one_round(open_store, f"round{n}"))
    finally:
        server.stop()
    for backend, rounds in figures.items():
        rates, loads = [r for r, _ in rounds], [m for _, m in rounds]
        print(f"{backend:>10}: part appends {statistics.median(rates):,.0f}/s ({min(rates):,.0f}–{max(rates):,.0f}); "
              f"loading {PARTS:,} parts {statistics.median(loads):.1f} ms ({min(loads):.1f}–{max(loads):.1f})")
    pg_rates, pg_loads = [r for r, _ in figures["postgresql"]], [m for _, m in figures["postgresql"]]
    ok = statistics.median(pg_rates) >= APPEND_GOAL and statistics.median(pg_loads) <= LOAD_GOAL_MS
    print(f"PostgreSQL goals (>= {APPEND_GOAL:,}/s, <= {LOAD_GOAL_MS} ms): {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
