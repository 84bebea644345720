"""Session store throughput: part appends per second (goal >= 5k/s) and loading a 10k-part session
(goal <= 200 ms)."""

from __future__ import annotations

import gc
import tempfile
import time
from pathlib import Path

from opencode_nb.session.models import AssistantMessage, Session, TextPart, ToolCompleted, ToolPart, UserMessage
from opencode_nb.session.store import SessionStore


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = SessionStore(Path(tmp) / "bench.sqlite")
        session = Session(directory=tmp)
        store.create_session(session)
        messages = []
        for _ in range(100):
            user = UserMessage(session_id=session.id, agent="build")
            reply = AssistantMessage(session_id=session.id, parent_id=user.id, agent="build", model="scripted/x")
            store.add_message(user)
            store.add_message(reply)
            messages.append(reply)
        parts = []
        for i in range(10_000):
            message = messages[i % len(messages)]
            if i % 2:
                parts.append(TextPart(session_id=session.id, message_id=message.id, text=f"text {i} " * 20))
            else:
                parts.append(ToolPart(session_id=session.id, message_id=message.id, call_id=f"c{i}", tool="read",
                                      state=ToolCompleted(input={"path": f"f{i}.py"}, output="line\n" * 40,
                                                          started_at=0.0)))
        start = time.perf_counter()
        for part in parts:
            store.add_part(part)
        append_s = time.perf_counter() - start
        print(f"part appends: {len(parts) / append_s:,.0f}/s ({append_s * 1e6 / len(parts):.0f} us each, "
              "one transaction per part)")
        store.close()
        del parts, messages
        gc.collect()
        store = SessionStore(Path(tmp) / "bench.sqlite")  # as a restarted kernel opens it
        timings = []
        for _ in range(5):
            start = time.perf_counter()
            loaded = store.messages(session.id)
            timings.append(time.perf_counter() - start)
        count = sum(len(m.parts) for m in loaded)
        print(f"load {count:,}-part session: best {min(timings) * 1000:.0f} ms, "
              f"median {sorted(timings)[2] * 1000:.0f} ms")
        store.close()


if __name__ == "__main__":
    main()
