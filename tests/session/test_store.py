import sqlite3
import threading

import pytest

from opencode_nb.errors import NotFoundError
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
from opencode_nb.session.store import SessionStore


@pytest.fixture
def store(tmp_path):
    s = SessionStore(tmp_path / "s.sqlite")
    yield s
    s.close()


def new_session(store, directory="/p", parent_id=None, updated_at=None):
    session = Session(directory=directory, parent_id=parent_id, title="t",
                      **({"updated_at": updated_at} if updated_at else {}))
    store.create_session(session)
    return session


def every_part(session_id: str, message_id: str):
    base = {"session_id": session_id, "message_id": message_id}
    return [
        TextPart(**base, text="hello", synthetic=True),
        ReasoningPart(**base, text="hmm", metadata={"signature": "sig"}),
        ToolPart(**base, call_id="c1", tool="read", state=ToolPending(raw='{"pa')),
        ToolPart(**base, call_id="c2", tool="bash", state=ToolRunning(input={"command": "ls"}, metadata={"o": 1})),
        ToolPart(**base, call_id="c3", tool="read", state=ToolCompleted(
            input={"path": "a"}, output="1: x", started_at=1.0,
            attachments=[Attachment(mime="image/png", url="data:image/png;base64,AA==")])),
        ToolPart(**base, call_id="c4", tool="edit", state=ToolErrored(input={}, error="boom", started_at=1.0)),
        SubtaskPart(**base, prompt="look", description="survey", agent="explore"),
        FilePart(**base, mime="text/plain", url="file:///a.txt", filename="a.txt"),
        AgentPart(**base, name="explore"),
        CompactionPart(**base, auto=False),
        StepStartPart(**base),
        StepFinishPart(**base, reason="tool-calls", tokens=Tokens(input=3, cache_read=2), cost=0.5),
        PatchPart(**base, hash="abc", files=["a.py"]),
        RetryPart(**base, attempt=1, error="overloaded"),
    ]


def test_every_part_type_and_both_message_roles_round_trip(store):
    session = new_session(store)
    user = UserMessage(session_id=session.id, agent="build", synthetic=True, tools={"bash": False})
    reply = AssistantMessage(session_id=session.id, parent_id=user.id, agent="build", model="scripted/demo",
                             error=MessageError(kind="aborted", message="stopped"), tokens=Tokens(output=4))
    store.add_message(user)
    store.add_message(reply)
    parts = every_part(session.id, reply.id)
    for part in parts:
        store.add_part(part)
    [first, second] = store.messages(session.id)
    assert first.message == user and first.parts == []
    assert second.message == reply and second.parts == parts


def test_an_updated_part_replaces_its_stored_version_in_place(store):
    session = new_session(store)
    msg = UserMessage(session_id=session.id, agent="build")
    store.add_message(msg)
    part = TextPart(session_id=session.id, message_id=msg.id, text="a")
    later = TextPart(session_id=session.id, message_id=msg.id, text="z")
    store.add_part(part)
    store.add_part(later)
    store.update_part(part.model_copy(update={"text": "abc"}))
    assert [p.text for p in store.messages(session.id)[0].parts] == ["abc", "z"]


def test_sessions_round_trip_with_rules_and_grants(store):
    session = Session(directory="/p", permission=[Rule(permission="todowrite", pattern="*", action="deny")],
                      approved=[Grant(agent="build", permission="bash", pattern="npm *")])
    store.create_session(session)
    assert store.get_session(session.id) == session
    store.update_session(session.model_copy(update={"title": "renamed"}))
    assert store.get_session(session.id).title == "renamed"


def test_listing_is_by_directory_newest_activity_first_and_roots_only_by_default(store):
    old = new_session(store, updated_at=100.0)
    new = new_session(store, updated_at=200.0)
    child = new_session(store, parent_id=old.id, updated_at=300.0)
    new_session(store, directory="/elsewhere")
    assert [s.id for s in store.list_sessions("/p")] == [new.id, old.id]
    assert [s.id for s in store.list_sessions("/p", include_children=True)] == [child.id, new.id, old.id]
    assert [s.id for s in store.children(old.id)] == [child.id]


def test_unknown_ids_are_not_found(store):
    with pytest.raises(NotFoundError):
        store.get_session("ses_nope")
    with pytest.raises(NotFoundError):
        store.get_message("msg_nope")
    with pytest.raises(NotFoundError):
        store.update_session(Session(directory="/p"))


def test_todos_are_kept_per_session(store):
    session = new_session(store)
    assert store.todos(session.id) == []
    todos = [Todo(content="read data", status="completed"), Todo(content="plot", status="in_progress")]
    store.set_todos(session.id, todos)
    store.set_todos(new_session(store).id, [])
    assert store.todos(session.id) == todos


def test_two_threads_writing_parts_at_once_lose_nothing(store):
    session = new_session(store)
    msg = UserMessage(session_id=session.id, agent="build")
    store.add_message(msg)

    def write(tag: str) -> None:
        for i in range(1000):
            store.add_part(TextPart(session_id=session.id, message_id=msg.id, text=f"{tag}{i}"))

    threads = [threading.Thread(target=write, args=(tag,)) for tag in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    texts = [p.text for p in store.messages(session.id)[0].parts]
    assert len(texts) == 2000 and len(set(texts)) == 2000


def test_a_second_store_on_the_same_file_sees_committed_data(tmp_path, store):
    session = new_session(store)
    other = SessionStore(store.path)
    try:
        assert other.get_session(session.id) == session
    finally:
        other.close()


def test_a_row_this_version_cannot_read_is_skipped_not_fatal(store, caplog):
    session = new_session(store)
    msg = UserMessage(session_id=session.id, agent="build")
    store.add_message(msg)
    good = TextPart(session_id=session.id, message_id=msg.id, text="fine")
    store.add_part(good)
    db = sqlite3.connect(store.path)
    db.execute("INSERT INTO parts VALUES ('prt_zzz', ?, ?, ?)",
               (session.id, msg.id, '{"type": "hologram", "id": "prt_zzz"}'))
    db.commit()
    db.close()
    assert store.messages(session.id)[0].parts == [good]
    assert "prt_zzz" in caplog.text
