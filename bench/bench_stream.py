"""Streaming 20,000 text deltas through a live session view.

The deltas go through the real `SessionService` (store writes coalesced, one bus event per delta, as the
processor makes them) at about 2,000 a second, and a session view renders them into ipywidgets. Widget
messages go to a comm that serialises them to JSON as the kernel would, and counts them.

Reported: the share of the process's CPU time spent rendering (flushing views: markdown, widget state,
serialisation), and the widget updates sent to the front end per second.

Goals: rendering <= 10% of the CPU time; <= 10 front-end updates per second.
"""

from __future__ import annotations

import asyncio
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import comm
import ipywidgets as widgets
from comm.base_comm import BaseComm

from opencode_nb import Workspace
from opencode_nb.session.models import AssistantMessage, TextPart, UserMessage
from opencode_nb.views import SessionView, ViewHub

DELTAS = 20_000
PER_TICK = 10
TICK_S = 0.005
WORDS = ("the data", "frame", "has", "7 rows;", "mean", "temperature", "is", "8.86", "°C", "and", "median", "9.0.",
         "`df.describe()`", "shows", "**no**", "missing", "values", "in", "each", "column")


class CountingComm(BaseComm):
    updates = 0
    bytes_sent = 0

    def publish_msg(self, msg_type: str, data: Any = None, metadata: Any = None, buffers: Any = None,
                    **keys: Any) -> None:
        payload = json.dumps({"msg_type": msg_type, "data": data, "metadata": metadata or {}})
        CountingComm.bytes_sent += len(payload)
        CountingComm.updates += 1  # state updates and the opening of new widgets alike


def delta_stream(n: int) -> list[str]:
    rng = random.Random(7)
    out = []
    for i in range(n):
        word = rng.choice(WORDS)
        sep = "\n\n" if i % 120 == 119 else ("\n- " if i % 40 == 39 else " ")
        out.append(word + sep)
    return out


async def main() -> None:
    comm.create_comm = CountingComm  # type: ignore[assignment]
    tmp = Path(tempfile.mkdtemp(prefix="bench-stream-"))
    ws = Workspace(tmp, {"model": "scripted/x"}, data_dir=tmp / "data", env={})
    session = ws.sessions.create(str(tmp))
    user = UserMessage(session_id=session.id, agent="build")
    ws.sessions.add_message(user)
    message = AssistantMessage(session_id=session.id, parent_id=user.id, agent="build", model="scripted/x")
    ws.sessions.add_message(message)

    hub = ViewHub(ws.bus)
    render_cpu = 0.0
    flush = hub.flush_all

    def timed_flush() -> None:
        nonlocal render_cpu
        started = time.process_time()
        flush()
        render_cpu += time.process_time() - started

    hub.flush_all = timed_flush  # type: ignore[method-assign]
    view = SessionView(ws, hub, session.id, floor="")
    view.start()
    hub.flush_all()
    CountingComm.updates = 0
    CountingComm.bytes_sent = 0

    part = TextPart(session_id=session.id, message_id=message.id, text="")
    ws.sessions.add_part(part)
    deltas = delta_stream(DELTAS)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    text = ""
    for i, delta in enumerate(deltas):
        text += delta
        ws.sessions.update_part(part.model_copy(update={"text": text}), delta=delta)
        if i % PER_TICK == PER_TICK - 1:
            await asyncio.sleep(TICK_S)
    ws.sessions.update_part(part.model_copy(update={"text": text, "ended_at": time.time()}))
    await asyncio.sleep(0.2)
    hub.flush_all()
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    shown = "".join(w.value for w in view.body.children[-1].children) if isinstance(
        view.body.children[-1], widgets.Box) else view.body.children[-1].value
    assert shown.count("frame") == text.count("frame"), "the view shows the whole text"
    print(f"deltas: {DELTAS:,} ({len(text):,} characters) in {wall:.2f} s wall, {cpu:.2f} s CPU")
    print(f"rendering: {render_cpu:.3f} s CPU = {100 * render_cpu / cpu:.1f}% of the process's CPU (goal <= 10%)")
    print(f"front-end updates: {CountingComm.updates} = {CountingComm.updates / wall:.1f}/s (goal <= 10/s), "
          f"{CountingComm.bytes_sent / 1e6:.2f} MB; view flushes: {hub.flushes}")
    await ws.aclose()


if __name__ == "__main__":
    asyncio.run(main())
