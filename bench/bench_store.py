"""Session store speed on a temp file: part appends per second (goal >= 5k/s) and loading a 10k-part session
through `messages()` (goal <= 200 ms).

The session looks like a long agent run: 100 turns, each an assistant message with 100 parts, half text of
a few hundred characters and half completed tool calls with 40 lines of output. Appends are one
transaction each, as the service writes them. Comparisons back the store's design choices:
- a connection per thread (the store) against the same store made to put every thread on one connection
  behind a lock: two threads appending at once, and the loop's appends while another thread loads a
  10k-part history;
- validating the loaded rows row by row with `validate_json` (what the store does) against `json.loads`
  then `validate_python` per row, and against one call of a list adapter on all rows joined into an array,
  each with the garbage collector paused as the store pauses it.
"""

from __future__ import annotations

import gc
import json
import sqlite3
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from opencode_nb.session.models import (
    AssistantMessage,
    MessageWithParts,
    Part,
    Session,
    TextPart,
    ToolCompleted,
    ToolPart,
    UserMessage,
    part_adapter,
)
from opencode_nb.session.store import SessionStore

PARTS = 10_000
APPEND_GOAL = 5_000
LOAD_GOAL_MS = 200


def history(store: SessionStore) -> tuple[Session, list[Part]]:
    """A stored session with 100 turns, and 10k parts for it (not yet stored)."""
    session = Session(directory="/bench")
    store.create_session(session)
    replies = []
    for _ in range(100):
        user = UserMessage(session_id=session.id, agent="build")
        reply = AssistantMessage(session_id=session.id, parent_id=user.id, agent="build", model="scripted/x")
        store.add_message(user)
        store.add_message(reply)
        replies.append(reply)
    parts: list[Part] = []
    for i in range(PARTS):
        reply = replies[i * len(replies) // PARTS]
        if i % 2:
            parts.append(TextPart(session_id=session.id, message_id=reply.id, text=f"text {i} " * 20))
        else:
            state = ToolCompleted(input={"path": f"f{i}.py"}, output="line\n" * 40, started_at=0.0)
            part = ToolPart(session_id=session.id, message_id=reply.id, call_id=f"c{i}", tool="read", state=state)
            parts.append(part)
    return session, parts


def appends(directory: Path) -> None:
    with SessionStore(directory / "appends.sqlite") as store:
        _, parts = history(store)
        start = time.perf_counter()
        for part in parts:
            store.add_part(part)
        elapsed = time.perf_counter() - start
    rate = len(parts) / elapsed
    print(
        f"part appends, one transaction each: {rate:,.0f}/s ({elapsed * 1e6 / len(parts):.0f} us each; "
        f"goal >= {APPEND_GOAL:,}/s) {'OK' if rate >= APPEND_GOAL else 'MISSED'}"
    )


class OneConnectionStore(SessionStore):
    """The design the store does not use: every thread on one connection, behind one lock."""

    _lock = threading.Lock()

    def _db(self) -> sqlite3.Connection:
        shared = self.__dict__.get("_shared")
        if shared is None:
            shared = self._shared = super()._db()
        return shared

    def put_part(self, part: Part) -> None:
        with self._lock:
            super().put_part(part)

    def messages(self, session_id: str) -> list[MessageWithParts]:
        with self._lock:
            return super().messages(session_id)


def threaded_appends(directory: Path, per_thread: int = 2_000, rounds: int = 5) -> None:
    """Alternate the two designs `rounds` times: on a shared 2-core machine one run of each proves little."""
    designs: dict[str, type[SessionStore]] = {
        "a connection per thread (the store)": SessionStore,
        "one connection behind a lock": OneConnectionStore,
    }
    rates: dict[str, list[float]] = {label: [] for label in designs}
    for n in range(rounds):
        for label, design in designs.items():
            with design(directory / f"threads-{n}-{design.__name__}.sqlite") as store:
                _, parts = history(store)
                chunks = [parts[:per_thread], parts[per_thread : 2 * per_thread]]
                threads = [threading.Thread(target=lambda c=c: [store.put_part(p) for p in c]) for c in chunks]
                start = time.perf_counter()
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
                rates[label].append(2 * per_thread / (time.perf_counter() - start))
    for label, rate in rates.items():
        print(
            f"  2 threads appending, {label}: median {statistics.median(rate):,.0f}/s "
            f"(runs: {', '.join(f'{r:,.0f}' for r in rate)})"
        )


def appends_during_loads(directory: Path, loads: int = 5) -> None:
    """How long the loop's appends wait while a view thread loads a 10k-part history."""
    for label, design in (
        ("a connection per thread", SessionStore),
        ("one connection behind a lock", OneConnectionStore),
    ):
        with design(directory / f"during-{design.__name__}.sqlite") as store:
            session, parts = history(store)
            store.put_parts(parts[:PARTS])
            extra, _ = history(store)
            done = threading.Event()

            def reader(store: SessionStore = store, session: Session = session, done: threading.Event = done) -> None:
                for _ in range(loads):
                    store.messages(session.id)
                done.set()

            waits = []
            thread = threading.Thread(target=reader)
            thread.start()
            for part in parts:
                if done.is_set():
                    break
                start = time.perf_counter()
                store.put_part(part.model_copy(update={"session_id": extra.id}))
                waits.append((time.perf_counter() - start) * 1000)
                time.sleep(0.002)
            thread.join()
        waits.sort()
        print(
            f"  appends while another thread loads the history, {label}: "
            f"median {statistics.median(waits):.2f} ms, p99 {waits[int(len(waits) * 0.99)]:.1f} ms, "
            f"max {waits[-1]:.1f} ms"
        )


def best_and_median(run: Callable[[], Any], times: int = 7) -> tuple[float, float, Any]:
    timings, result = [], None
    for _ in range(times):
        result = None
        gc.collect()
        start = time.perf_counter()
        result = run()
        timings.append((time.perf_counter() - start) * 1000)
    return min(timings), statistics.median(timings), result


def load(directory: Path) -> None:
    path = directory / "load.sqlite"
    with SessionStore(path) as store:
        session, parts = history(store)
        store.put_parts(parts)
    del parts
    with SessionStore(path) as store:  # as a restarted kernel opens it
        best, median, loaded = best_and_median(lambda: store.messages(session.id))
        count = sum(len(m.parts) for m in loaded)
        print(
            f"load a {count:,}-part session via messages(): best {best:.0f} ms, median {median:.0f} ms "
            f"(goal <= {LOAD_GOAL_MS} ms) {'OK' if median <= LOAD_GOAL_MS else 'MISSED'}"
        )
        rows = [data for (data,) in store._db().execute("SELECT data FROM parts ORDER BY message_id, id")]
    array = "[" + ",".join(rows) + "]"
    many = TypeAdapter(list[Part])
    strategies: list[tuple[str, Callable[[], Any]]] = [
        ("validate_json per row", lambda: [part_adapter.validate_json(r) for r in rows]),
        ("one list adapter call", lambda: many.validate_json(array)),
        ("json.loads + validate_python per row", lambda: [part_adapter.validate_python(json.loads(r)) for r in rows]),
    ]
    for label, run in strategies:
        best, median, _ = best_and_median(lambda run=run: collector_paused(run), times=9)
        print(f"  validating {len(rows):,} part rows, {label}: best {best:.0f} ms, median {median:.0f} ms")


def collector_paused(run: Callable[[], Any]) -> Any:
    """As the store validates: with the cyclic garbage collector paused."""
    gc.disable()
    try:
        return run()
    finally:
        gc.enable()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        appends(directory)
        threaded_appends(directory)
        appends_during_loads(directory)
        load(directory)


if __name__ == "__main__":
    main()
