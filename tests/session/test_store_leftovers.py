"""What a store finishes when it opens: the leftovers of stores that are no longer open anywhere, and only those.

On both backends (`backend` of test_store.py): a dead owner is one whose lock file is free on SQLite, one whose
advisory lock on the server is free on PostgreSQL.
"""

import json
import sqlite3

import pytest

from opencode_nb.session.models import (
    AssistantMessage,
    Session,
    TextPart,
    ToolCompleted,
    ToolErrored,
    ToolPart,
    ToolPending,
    ToolRunning,
    UserMessage,
)
from opencode_nb.session.store import _MIGRATIONS, INTERRUPTED, SessionStore
from tests.session.test_store import backend, new_message, new_session, only_on, raw_sql, store_url

__all__ = ["backend", "store_url"]  # the fixtures, shared with test_store.py


@pytest.fixture
def path(tmp_path):
    return tmp_path / "s.sqlite"


@pytest.fixture
def opener(path, store_url):
    """Opens a store on the test's file or PostgreSQL database, as each kernel would."""

    def open_store() -> SessionStore:
        return SessionStore(path, url=store_url)

    return open_store


def unfinished_run(store: SessionStore) -> tuple[Session, AssistantMessage, list[ToolPart]]:
    """A session whose answer is mid-way: one call running, one still being written, one done."""
    session = new_session(store)
    user = new_message(store, session)
    answer = AssistantMessage(session_id=session.id, parent_id=user.id, agent="build", model="scripted/demo")
    store.add_message(answer)
    store.add_part(TextPart(session_id=session.id, message_id=answer.id, text="Let me look."))
    parts = [
        ToolPart(session_id=session.id, message_id=answer.id, call_id="c1", tool="bash",
                 state=ToolRunning(input={"command": "sleep 60"}, metadata={"output": "half of it"})),
        ToolPart(session_id=session.id, message_id=answer.id, call_id="c2", tool="read", state=ToolPending()),
        ToolPart(session_id=session.id, message_id=answer.id, call_id="c3", tool="read",
                 state=ToolCompleted(input={"path": "a"}, output="x", started_at=1.0)),
    ]
    for part in parts:
        store.add_part(part)
    return session, answer, parts


def states(store: SessionStore, session: Session) -> tuple[AssistantMessage, list]:
    [_, answer] = store.messages(session.id)
    return answer.message, [p.state for p in answer.parts if isinstance(p, ToolPart)]


def test_a_store_that_closed_mid_run_leaves_its_leftovers_to_the_next_one_to_finish(opener):
    first = opener()
    session, _, _ = unfinished_run(first)
    first.close()
    with opener() as second:
        message, (running, pending, done) = states(second, session)
    assert message.finish == "aborted" and message.completed_at is not None
    assert message.error.kind == "aborted" and INTERRUPTED in message.error.message
    assert isinstance(running, ToolErrored) and running.error == f"Tool execution {INTERRUPTED}"
    assert running.metadata == {"output": "half of it", "interrupted": True}  # the model sees what it printed
    assert isinstance(pending, ToolErrored) and INTERRUPTED in pending.error
    assert isinstance(done, ToolCompleted)


def test_a_run_of_a_store_still_open_in_this_process_is_never_touched(opener):
    live = opener()
    try:
        session, answer, _ = unfinished_run(live)
        with opener() as other:  # a second workspace, a CLI listing, ...
            message, (running, pending, _) = states(other, session)
        assert message.completed_at is None and message.error is None
        assert isinstance(running, ToolRunning) and isinstance(pending, ToolPending)
        finished = answer.model_copy(update={"finish": "stop", "completed_at": 2.0})
        live.update_message(finished)
    finally:
        live.close()
    with opener() as later:
        message, _ = states(later, session)
    assert message == finished  # completed before its store closed: not a leftover


def test_finished_and_user_messages_are_not_leftovers(opener):
    with opener() as first:
        _, answer, _ = unfinished_run(first)
        first.update_message(answer.model_copy(update={"finish": "tool-calls", "completed_at": 3.0}))
        owners = raw_sql(first, "SELECT COUNT(*) FROM messages WHERE owner IS NOT NULL")
    assert owners == [(0,)]


def test_the_rows_of_owners_that_left_are_cleared_by_the_next_store(opener):
    first = opener()
    first.close()
    with opener() as second:
        assert raw_sql(second, "SELECT id FROM owners") == [(second.owner,)]


@only_on("sqlite", "the owner's lock is a file on SQLite; on PostgreSQL it is an advisory lock of its connection")
def test_each_open_store_holds_a_lock_file_that_goes_with_it(path):
    store = SessionStore(path)
    lock = path.with_name("s.sqlite.owners") / f"{store.owner}.lock"
    assert lock.exists()
    store.close()
    assert not lock.exists()
    with SessionStore(path) as second:  # clears the row of the owner that left
        assert sqlite3.connect(path).execute("SELECT id FROM owners").fetchall() == [(second.owner,)]


@only_on("sqlite", "no PostgreSQL store predates the owners table: the backend came later")
def test_leftovers_in_a_file_from_before_owners_were_recorded_are_finished(path):
    db = sqlite3.connect(path, isolation_level=None)
    for statement in _MIGRATIONS[0]:
        db.execute(statement)
    db.execute("PRAGMA user_version = 1")
    session = Session(directory="/p", title="old")
    user = UserMessage(session_id=session.id, agent="build")
    answer = AssistantMessage(session_id=session.id, parent_id=user.id, agent="build", model="scripted/demo")
    done = AssistantMessage(session_id=session.id, parent_id=user.id, agent="build", model="scripted/demo",
                            finish="error", completed_at=1.0)  # finished, but a call was left pending
    db.execute("INSERT INTO sessions VALUES (?, NULL, '/p', 1, ?)", (session.id, session.model_dump_json()))
    for message in (user, answer, done):
        db.execute("INSERT INTO messages VALUES (?, ?, ?)", (message.id, session.id, message.model_dump_json()))
    cut = ToolPart(session_id=session.id, message_id=done.id, call_id="c", tool="read", state=ToolPending())
    db.execute("INSERT INTO parts VALUES (?, ?, ?, ?)", (cut.id, session.id, done.id, cut.model_dump_json()))
    db.close()
    with SessionStore(path) as store:
        [_, old_answer, old_done] = store.messages(session.id)
    assert old_answer.message.finish == "aborted" and INTERRUPTED in old_answer.message.error.message
    assert old_done.message == done and old_done.parts[0].state.status == "error"


def test_text_utf8_cannot_encode_is_stored_instead_of_failing_the_write(opener):
    with opener() as store:
        session = Session(directory="/p", title="caf\ud800")
        store.create_session(session)
        user = UserMessage(session_id=session.id, agent="build")
        store.add_message(user)
        store.put_parts([TextPart(session_id=session.id, message_id=user.id, text="split: \ud83d\ude00 lone: \udc00"),
                         ToolPart(session_id=session.id, message_id=user.id, call_id="c", tool="bash",
                                  state=ToolRunning(input={"command": "echo \ud800"}))])
        [item] = store.messages(session.id)
        assert store.get_session(session.id).title == "caf\ufffd"
        [(data,)] = raw_sql(store, "SELECT data FROM sessions")
    text, tool = item.parts
    assert text.text == "split: \U0001f600 lone: \ufffd"
    assert tool.state.input == {"command": "echo \ufffd"}
    assert json.loads(data)["title"] == "caf\ufffd"
