"""One kernel's share of the store, as a program: its own session, turn after turn, written the way the session
loop writes a turn (`session/writes.py` groups a loop turn's writes into one transaction; streamed text and
tool states land one write each). The many-kernels test and `bench/bench_store_kernels.py` start several at once.

    python -m tests.session.store_fs.kernel TARGET TURNS START_FILE [--victim]

TARGET is what `open_store` opens. The program prints `session <id>`, waits for START_FILE (so all start
together), prints one JSON line `{"appends_s": [...]}` (the time of each single part append) and exits 0; any
error is a traceback on stderr and a non-zero exit. `--victim` writes TURNS turns, then opens a transaction,
writes a few megabytes into it, prints `inside` and waits to be killed there.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from opencode_nb.session.models import (
    AssistantMessage,
    Session,
    StepFinishPart,
    StepStartPart,
    TextPart,
    Tokens,
    ToolCompleted,
    ToolPart,
    ToolRunning,
    UserMessage,
    now,
)
from opencode_nb.session.store import SessionStore
from opencode_nb.session.store.journaling import Journaling

PARTS_PER_TURN = 5
"""The user's text, then step-start, text, tool and step-finish of the answer."""


def open_store(target: str) -> SessionStore:
    """`sqlite:auto:/path/file.sqlite` (or `sqlite:wal:` / `sqlite:rollback:`): the SQLite store in that mode;
    `pg:NAME:postgresql://…`: the store named NAME on that PostgreSQL server."""
    kind, _, rest = target.partition(":")
    name, _, where = rest.partition(":")
    if kind == "sqlite":
        return SessionStore(where, Journaling.for_file(where, env={}, configured=name))
    if kind == "pg":
        return SessionStore(f"{name}.sqlite", url=where)
    raise ValueError(f"no store for {target!r}")


def turn(store: SessionStore, session: Session, n: int, appends: list[float]) -> Session:
    """One turn: a prompt, an answer that streams text and runs one tool, the session's time updated."""
    user = UserMessage(session_id=session.id, agent="build")
    with store.transaction():
        store.add_message(user)
        store.put_part(TextPart(session_id=session.id, message_id=user.id, text=f"prompt {n}"))
    answer = AssistantMessage(session_id=session.id, parent_id=user.id, agent="build", model="scripted/demo")
    with store.transaction():
        store.add_message(answer)
        store.put_part(StepStartPart(session_id=session.id, message_id=answer.id))
    base = {"session_id": session.id, "message_id": answer.id}
    text = TextPart(**base, text="")
    for chunk in range(2):  # streamed text, flushed as it grows
        text = text.model_copy(update={"text": text.text + f"answer {n} chunk {chunk} " * 8})
        _timed(store, text, appends)
    running = ToolPart(**base, call_id=f"call{n}", tool="bash", state=ToolRunning(input={"command": f"echo {n}"}))
    _timed(store, running, appends)
    _timed(store, running.model_copy(update={"state": ToolCompleted(
        input=running.state.input, output=f"{n}\n" * 20, started_at=now())}), appends)
    session = session.model_copy(update={"updated_at": now()})
    with store.transaction():
        store.put_part(StepFinishPart(**base, reason="stop", tokens=Tokens(input=10, output=5)))
        store.update_message(answer.model_copy(update={"finish": "stop", "completed_at": now()}))
        store.update_session(session)
    return session


def _timed(store: SessionStore, part: TextPart | ToolPart, appends: list[float]) -> None:
    started = time.perf_counter()
    store.put_part(part)
    appends.append(time.perf_counter() - started)


def main(argv: list[str]) -> int:
    target, turns, start = argv[0], int(argv[1]), Path(argv[2])
    victim = "--victim" in argv
    store = open_store(target)
    session = Session(directory="/project", title="a kernel's session")
    store.create_session(session)
    print(f"session {session.id}", flush=True)
    while not start.exists():
        time.sleep(0.002)
    appends: list[float] = []
    for n in range(turns):
        session = turn(store, session, n, appends)
    if victim:
        answer = AssistantMessage(session_id=session.id, parent_id="msg_none", agent="build", model="scripted/demo")
        store.add_message(answer)  # unfinished: a later store finds its owner dead and finalises it
        with store.transaction():
            for i in range(40):  # 4 MB: more than SQLite's page cache, so pages reach the file before a commit
                store.put_part(TextPart(session_id=session.id, message_id=answer.id, text=f"{i}" * 100_000))
            print("inside", flush=True)
            time.sleep(600)
    print(json.dumps({"appends_s": appends}), flush=True)
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
