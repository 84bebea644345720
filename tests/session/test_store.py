"""The session store's behaviour, on both backends: a SQLite file and a schema on a PostgreSQL server.

The `backend` fixture runs each test on both; the few that check what only one of them has (SQLite's journal
mode, a thread's connection object) say so with `only_on`.
"""

import logging
import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from opencode_nb.errors import NotFoundError, OpencodeNbError
from opencode_nb.permission import Grant, Rule
from opencode_nb.session.events import Todo
from opencode_nb.session.models import (
    AgentPart,
    AssistantMessage,
    Attachment,
    CompactionPart,
    FilePart,
    MessageError,
    PatchPart,
    ReasoningPart,
    RetryPart,
    Session,
    StepFinishPart,
    StepStartPart,
    SubtaskPart,
    TextPart,
    Tokens,
    ToolCompleted,
    ToolErrored,
    ToolPart,
    ToolPending,
    ToolRunning,
    UserMessage,
)
from opencode_nb.session.store import SCHEMA_VERSION, SessionStore

BACKENDS = ["sqlite", "postgresql"]
T = TypeVar("T")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def only_on(backend: str, why: str) -> Callable[[T], T]:
    """Run a test on one backend only (also one that takes no store); `why` says what the other does not have."""
    assert backend in BACKENDS and why

    def mark(test: T) -> T:
        return pytest.mark.usefixtures("backend")(pytest.mark.parametrize("backend", [backend], indirect=True)(test))

    return mark


@pytest.fixture
def store_url(backend: str, request: pytest.FixtureRequest) -> str | None:
    """The PostgreSQL database the test's store lives in; None on SQLite."""
    return str(request.getfixturevalue("pg_url")) if backend == "postgresql" else None


@pytest.fixture
def store(tmp_path: Path, store_url: str | None) -> Iterator[SessionStore]:
    s = SessionStore(tmp_path / "s.sqlite", url=store_url)
    yield s
    s.close()


def reopen(store: SessionStore) -> SessionStore:
    """Another store on the same file or schema, as a second kernel opens it."""
    return SessionStore(store.path, url=None if store.server is None else store.server.url)


def opening(store: SessionStore) -> str:
    """Python that opens the same store in another process."""
    return f"SessionStore({str(store.path)!r}, url={None if store.server is None else store.server.url!r})"


def raw_sql(store: SessionStore, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
    """Run SQL on the store's own tables behind its back (`?` placeholders on both backends); the rows."""
    db = store.side_connection()
    try:
        rows = db.execute(sql, args)
        return [tuple(row) for row in rows.fetchall()] if sql.lstrip().upper().startswith("SELECT") else []
    finally:
        db.close()


def new_session(store, directory="/p", parent_id=None, updated_at=None):
    session = Session(
        directory=directory, parent_id=parent_id, title="t", **({"updated_at": updated_at} if updated_at else {})
    )
    store.create_session(session)
    return session


def new_message(store, session):
    message = UserMessage(session_id=session.id, agent="build")
    store.add_message(message)
    return message


def raw_insert(store, sql, args):
    """Write a row behind the store's back, as an older or newer opencode_nb might have."""
    raw_sql(store, sql, args)


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60, check=False
    )


def every_part(session_id: str, message_id: str):
    base = {"session_id": session_id, "message_id": message_id}
    return [
        TextPart(**base, text="hello", synthetic=True, started_at=1.0, ended_at=2.0),
        ReasoningPart(**base, text="hmm", metadata={"signature": "sig"}),
        ToolPart(**base, call_id="c1", tool="read", state=ToolPending(raw='{"pa')),
        ToolPart(**base, call_id="c2", tool="bash", state=ToolRunning(input={"command": "ls"}, metadata={"o": 1})),
        ToolPart(
            **base,
            call_id="c3",
            tool="read",
            state=ToolCompleted(
                input={"path": "a"},
                output="1: x",
                started_at=1.0,
                compacted_at=3.0,
                attachments=[Attachment(mime="image/png", url="data:image/png;base64,AA==", filename="a.png")],
            ),
        ),
        ToolPart(**base, call_id="c4", tool="edit", state=ToolErrored(input={}, error="boom", started_at=1.0)),
        SubtaskPart(**base, prompt="look", description="survey", agent="explore", model="a/b", command="c"),
        FilePart(**base, mime="text/plain", url="file:///a.txt", filename="a.txt", source="@a.txt"),
        AgentPart(**base, name="explore", source="@explore"),
        CompactionPart(**base, auto=False),
        StepStartPart(**base),
        StepFinishPart(**base, reason="tool-calls", tokens=Tokens(input=3, cache_read=2), cost=0.5),
        PatchPart(**base, hash="abc", files=["a.py"]),
        RetryPart(**base, attempt=1, error="overloaded"),
    ]


def test_every_part_type_and_both_message_roles_round_trip(store):
    session = new_session(store)
    user = UserMessage(
        session_id=session.id, agent="build", model="a/b", synthetic=True, tools={"bash": False}, system="extra"
    )
    reply = AssistantMessage(
        session_id=session.id,
        parent_id=user.id,
        agent="build",
        model="scripted/demo",
        finish="aborted",
        error=MessageError(kind="aborted", message="stopped", status=499),
        tokens=Tokens(output=4, reasoning=1),
        cost=0.25,
        summary=True,
        completed_at=9.0,
    )
    store.add_message(user)
    store.add_message(reply)
    parts = every_part(session.id, reply.id)
    assert {type(p).__name__ for p in parts} >= {
        "TextPart",
        "ReasoningPart",
        "ToolPart",
        "SubtaskPart",
        "FilePart",
        "AgentPart",
        "CompactionPart",
        "StepStartPart",
        "StepFinishPart",
        "PatchPart",
        "RetryPart",
    }
    for part in parts:
        store.add_part(part)
    [first, second] = store.messages(session.id)
    assert first.message == user and first.parts == []
    assert second.message == reply and second.parts == parts
    assert store.get_message(user.id) == user and store.get_message(reply.id) == reply


def test_messages_and_parts_come_back_in_creation_order_whatever_the_write_order(store):
    session = new_session(store)
    first, second = new_message(store, session), new_message(store, session)
    early = [TextPart(session_id=session.id, message_id=m.id, text=f"{m.id} early") for m in (first, second)]
    late = [TextPart(session_id=session.id, message_id=m.id, text=f"{m.id} late") for m in (first, second)]
    for part in [*late, *reversed(early)]:
        store.add_part(part)
    history = store.messages(session.id)
    assert [h.message.id for h in history] == [first.id, second.id]
    assert [[p.text for p in h.parts] for h in history] == [
        [f"{first.id} early", f"{first.id} late"],
        [f"{second.id} early", f"{second.id} late"],
    ]


def test_messages_since_an_id_are_that_message_and_the_later_ones_with_their_parts_only(store):
    session = new_session(store)
    messages = [new_message(store, session) for _ in range(3)]
    for message in messages:
        store.add_part(TextPart(session_id=session.id, message_id=message.id, text=message.id))
    recent = store.messages(session.id, since=messages[1].id)
    assert [h.message.id for h in recent] == [m.id for m in messages[1:]]
    assert [[p.text for p in h.parts] for h in recent] == [[m.id] for m in messages[1:]]
    assert store.messages(session.id, since="") == store.messages(session.id)


def test_the_current_agent_before_a_message_is_the_one_named_by_the_user_message_before_it(store):
    session = new_session(store)
    plan = UserMessage(session_id=session.id, agent="plan")
    store.add_message(plan)
    store.add_message(AssistantMessage(session_id=session.id, parent_id=plan.id, agent="plan", model="a/b"))
    build = UserMessage(session_id=session.id, agent="build")
    store.add_message(build)
    assert store.current_agent(session.id) == "build"
    assert store.current_agent(session.id, before=build.id) == "plan"
    assert store.current_agent(session.id, before=plan.id) is None


def test_an_updated_part_replaces_its_stored_version_in_place(store):
    session = new_session(store)
    msg = new_message(store, session)
    part = TextPart(session_id=session.id, message_id=msg.id, text="a")
    later = TextPart(session_id=session.id, message_id=msg.id, text="z")
    store.add_part(part)
    store.add_part(later)
    store.update_part(part.model_copy(update={"text": "abc"}))
    assert [p.text for p in store.messages(session.id)[0].parts] == ["abc", "z"]


def test_an_updated_message_replaces_its_stored_version(store):
    session = new_session(store)
    reply = AssistantMessage(session_id=session.id, parent_id="msg_x", agent="build", model="a/b")
    store.add_message(reply)
    done = reply.model_copy(update={"finish": "stop", "completed_at": 5.0})
    store.update_message(done)
    assert store.get_message(reply.id) == done
    assert store.messages(session.id)[0].message == done


def test_activity_reads_the_latest_answering_agent_and_all_tokens_without_the_history(store):
    from opencode_nb.session.models import Tokens, UserMessage

    session = new_session(store)
    assert store.activity(session.id) == ("", 0)
    user = UserMessage(session_id=session.id, agent="plan")
    store.add_message(user)
    store.add_message(AssistantMessage(session_id=session.id, parent_id=user.id, agent="plan", model="a/b",
                                       tokens=Tokens(input=10, output=5, reasoning=1, cache_read=2, cache_write=3)))
    store.add_message(AssistantMessage(session_id=session.id, parent_id=user.id, agent="build", model="a/b",
                                       tokens=Tokens(input=100)))
    assert store.activity(session.id) == ("build", 121)


def test_sessions_round_trip_with_rules_and_grants(store):
    session = Session(
        directory="/p",
        permission=[Rule(permission="todowrite", pattern="*", action="deny")],
        approved=[Grant(agent="build", permission="bash", pattern="npm *")],
    )
    store.create_session(session)
    assert store.get_session(session.id) == session
    store.update_session(session.model_copy(update={"title": "renamed"}))
    assert store.get_session(session.id).title == "renamed"


def test_listing_is_by_directory_newest_activity_first_and_roots_only_by_default(store):
    old = new_session(store, updated_at=100.0)
    new = new_session(store, updated_at=200.0)
    child = new_session(store, parent_id=old.id, updated_at=300.0)
    elsewhere = new_session(store, directory="/elsewhere", updated_at=150.0)
    assert [s.id for s in store.list_sessions("/p")] == [new.id, old.id]
    assert [s.id for s in store.list_sessions("/p", include_children=True)] == [child.id, new.id, old.id]
    assert [s.id for s in store.list_sessions()] == [new.id, elsewhere.id, old.id]
    store.update_session(old.model_copy(update={"updated_at": 400.0}))
    assert [s.id for s in store.list_sessions("/p")] == [old.id, new.id]


def test_children_are_the_direct_children_oldest_first(store):
    root = new_session(store)
    a = new_session(store, parent_id=root.id)
    b = new_session(store, parent_id=root.id)
    new_session(store, parent_id=a.id)
    assert [s.id for s in store.children(root.id)] == [a.id, b.id]
    assert store.children(b.id) == []


def test_unknown_ids_are_not_found(store):
    with pytest.raises(NotFoundError, match="ses_nope"):
        store.get_session("ses_nope")
    with pytest.raises(NotFoundError, match="msg_nope"):
        store.get_message("msg_nope")
    with pytest.raises(NotFoundError):
        store.update_session(Session(directory="/p"))
    with pytest.raises(NotFoundError):
        store.update_message(UserMessage(session_id="ses_nope", agent="build"))


def test_writing_into_a_session_that_does_not_exist_names_the_session(store):
    with pytest.raises(NotFoundError, match="ses_ghost"):
        store.add_message(UserMessage(session_id="ses_ghost", agent="build"))
    with pytest.raises(NotFoundError, match="ses_ghost"):
        store.add_part(TextPart(session_id="ses_ghost", message_id="msg_x"))
    with pytest.raises(NotFoundError, match="ses_ghost"):
        store.set_todos("ses_ghost", [Todo(content="x")])


def test_a_batch_of_parts_lands_whole_or_not_at_all(store):
    session = new_session(store)
    msg = new_message(store, session)
    good = TextPart(session_id=session.id, message_id=msg.id, text="fine")
    stray = TextPart(session_id="ses_ghost", message_id=msg.id, text="lost")
    with pytest.raises(NotFoundError, match="ses_ghost"):
        store.put_parts([good, stray])
    assert store.messages(session.id)[0].parts == []
    store.put_parts([good])
    assert store.messages(session.id)[0].parts == [good]


def test_todos_are_kept_per_session_and_replaced_whole(store):
    session = new_session(store)
    other = new_session(store)
    assert store.todos(session.id) == []
    todos = [Todo(content="read data", status="completed"), Todo(content="plot", status="in_progress", priority="high")]
    store.set_todos(session.id, todos)
    store.set_todos(other.id, [Todo(content="elsewhere")])
    assert store.todos(session.id) == todos
    store.set_todos(session.id, todos[1:])
    assert store.todos(session.id) == todos[1:]


def test_two_threads_writing_parts_at_once_lose_nothing(store):
    session = new_session(store)
    msg = new_message(store, session)

    def write(tag: str) -> None:
        for i in range(1000):
            store.add_part(TextPart(session_id=session.id, message_id=msg.id, text=f"{tag}{i}"))

    threads = [threading.Thread(target=write, args=(tag,)) for tag in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    texts = [p.text for p in store.messages(session.id)[0].parts]
    assert sorted(texts) == sorted(f"{tag}{i}" for tag in "ab" for i in range(1000))


def test_two_stores_on_one_file_writing_at_once_lose_nothing(store):
    session = new_session(store)
    msg = new_message(store, session)
    other = reopen(store)

    def write(target: SessionStore, tag: str) -> None:
        for i in range(500):
            target.put_parts([TextPart(session_id=session.id, message_id=msg.id, text=f"{tag}{i}")])

    threads = [threading.Thread(target=write, args=args) for args in ((store, "a"), (other, "b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    other.close()
    assert len({p.text for p in store.messages(session.id)[0].parts}) == 1000


def test_a_second_store_on_the_same_file_sees_committed_data(store):
    session = new_session(store)
    msg = new_message(store, session)
    other = reopen(store)
    try:
        assert other.get_session(session.id) == session
        part = TextPart(session_id=session.id, message_id=msg.id, text="from the other kernel")
        other.add_part(part)
        assert store.messages(session.id)[0].parts == [part]
    finally:
        other.close()


def test_another_process_reads_what_this_one_wrote_and_the_other_way_round(store):
    session = new_session(store)
    msg = new_message(store, session)
    store.add_part(TextPart(session_id=session.id, message_id=msg.id, text="written here"))
    result = run_python(f"""
        from opencode_nb.session.models import TextPart
        from opencode_nb.session.store import SessionStore
        store = {opening(store)}
        [history] = store.messages({session.id!r})
        print(history.parts[0].text)
        store.add_part(TextPart(session_id={session.id!r}, message_id={msg.id!r}, text="written there"))
        store.close()
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "written here"
    assert [p.text for p in store.messages(session.id)[0].parts] == ["written here", "written there"]


def test_a_writer_killed_before_commit_leaves_no_half_written_batch(store):
    session = new_session(store)
    msg = new_message(store, session)
    if store.server is None:  # die the moment SQLite is asked to commit: the rows are in the page cache only
        die = 'store._db().set_trace_callback(lambda sql: os._exit(3) if sql.startswith("COMMIT") else None)'
    else:  # die instead of sending COMMIT: the server has the rows in an open transaction only
        die = ("db = store._db(); send = db.execute; "
               "db.execute = lambda sql, *a: os._exit(3) if sql == 'COMMIT' else send(sql, *a)")
    result = run_python(f"""
        import os
        from opencode_nb.session.models import TextPart
        from opencode_nb.session.store import SessionStore
        store = {opening(store)}
        {die}
        store.put_parts([TextPart(session_id={session.id!r}, message_id={msg.id!r}, text=str(i)) for i in range(50)])
    """)
    assert result.returncode == 3, result.stderr
    assert store.messages(session.id)[0].parts == []
    reopened = reopen(store)
    try:
        assert reopened.messages(session.id)[0].parts == []
    finally:
        reopened.close()


@only_on("sqlite", "the journal mode and PRAGMA user_version are the SQLite file's")
def test_the_file_uses_wal_and_records_its_schema_version(store):
    db = sqlite3.connect(store.path)
    try:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        db.close()


@only_on("postgresql", "the version table is the server's; SQLite's is tested above")
def test_the_schema_records_its_version(store):
    assert raw_sql(store, "SELECT version FROM store_version") == [(SCHEMA_VERSION,)]


def test_reopening_a_store_keeps_its_data(store):
    session = new_session(store)
    store.close()
    with reopen(store) as second:
        assert second.get_session(session.id) == session


def test_a_store_from_a_newer_version_is_refused_with_what_to_do(store):
    if store.server is None:
        raw_sql(store, f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    else:
        raw_sql(store, "UPDATE store_version SET version = ?", (SCHEMA_VERSION + 1,))
    store.close()
    with pytest.raises(OpencodeNbError, match="newer opencode_nb.*upgrade"):
        reopen(store)


def test_a_part_row_this_version_cannot_read_is_skipped_with_a_warning_naming_it(store, caplog):
    session = new_session(store)
    msg = new_message(store, session)
    good = TextPart(session_id=session.id, message_id=msg.id, text="fine")
    store.add_part(good)
    raw_insert(
        store,
        "INSERT INTO parts VALUES ('prt_zzz', ?, ?, ?)",
        (session.id, msg.id, '{"type": "hologram", "id": "prt_zzz"}'),
    )
    with caplog.at_level(logging.WARNING):
        assert store.messages(session.id)[0].parts == [good]
    assert "prt_zzz" in caplog.text


def test_an_unreadable_message_is_skipped_with_its_parts(store, caplog):
    session = new_session(store)
    msg = new_message(store, session)
    store.add_part(TextPart(session_id=session.id, message_id=msg.id, text="kept"))
    raw_insert(store, "INSERT INTO messages (id, session_id, data) VALUES ('msg_zzzz', ?, ?)",
               (session.id, '{"role": "robot"}'))
    raw_insert(
        store,
        "INSERT INTO parts VALUES ('prt_orphan', ?, 'msg_zzzz', ?)",
        (session.id, TextPart(session_id=session.id, message_id="msg_zzzz").model_dump_json()),
    )
    with caplog.at_level(logging.WARNING):
        history = store.messages(session.id)
    assert [h.message.id for h in history] == [msg.id]
    assert [p.text for p in history[0].parts] == ["kept"]
    assert "msg_zzzz" in caplog.text


def test_an_unreadable_session_is_left_out_of_listings_and_named_when_asked_for(store, caplog):
    good = new_session(store)
    raw_insert(
        store,
        "INSERT INTO sessions VALUES ('ses_future', NULL, '/p', 9e9, ?)",
        ('{"id": "ses_future", "directory": "/p", "hologram": true}',),
    )
    with caplog.at_level(logging.WARNING):
        assert [s.id for s in store.list_sessions("/p")] == [good.id]
    assert "ses_future" in caplog.text
    with pytest.raises(OpencodeNbError, match="ses_future.*cannot be read"):
        store.get_session("ses_future")


def test_unreadable_todo_items_are_skipped(store, caplog):
    session = new_session(store)
    raw_insert(
        store,
        "INSERT INTO todos VALUES (?, ?)",
        (session.id, '[{"content": "ok"}, {"content": "x", "status": "someday"}]'),
    )
    with caplog.at_level(logging.WARNING):
        assert store.todos(session.id) == [Todo(content="ok")]
    assert session.id in caplog.text


def test_closing_twice_is_harmless(store):
    store.close()
    store.close()


def test_closing_closes_the_connection_of_every_thread(store):
    session = new_session(store)
    opened, closed, errors = threading.Event(), threading.Event(), []

    def worker() -> None:
        store.get_session(session.id)  # this thread's connection is open now
        opened.set()
        closed.wait(10)
        errors.append(in_thread(lambda: store.get_session(session.id)))

    def in_thread(call):
        try:
            call()
        except Exception as exc:  # sqlite3's, or psycopg's on a connection the store closed
            return exc
        return None

    thread = threading.Thread(target=worker)
    thread.start()
    assert opened.wait(10)
    store.close()
    closed.set()
    thread.join()
    fresh = threading.Thread(target=lambda: errors.append(in_thread(store.list_sessions)))  # never had one
    fresh.start()
    fresh.join()
    assert len(errors) == 2 and all(e is not None and "closed" in str(e) for e in errors), errors


def test_text_with_nul_characters_is_kept_as_it_was(store):
    """A command that prints binary leaves NULs in its output; PostgreSQL's text refuses them unless escaped."""
    session = new_session(store)
    message = new_message(store, session)
    store.add_part(TextPart(session_id=session.id, message_id=message.id, text="a\x00b"))
    store.add_part(ToolPart(session_id=session.id, message_id=message.id, call_id="c", tool="bash",
                            state=ToolCompleted(input={"command": "printf 'x\\0'"}, output="bin\x00ary",
                                                started_at=1.0)))
    other = reopen(store)
    try:
        text, call = other.messages(session.id)[0].parts
    finally:
        other.close()
    assert isinstance(text, TextPart) and text.text == "a\x00b"
    assert isinstance(call, ToolPart) and isinstance(call.state, ToolCompleted)
    assert call.state.output == "bin\x00ary" and call.state.input == {"command": "printf 'x\\0'"}
