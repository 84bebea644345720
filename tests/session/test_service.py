import asyncio

import pytest

from opencode_nb.bus import Bus
from opencode_nb.permission import Grant
from opencode_nb.session.events import Todo
from opencode_nb.session.models import TextPart, ToolPart, ToolRunning, UserMessage
from opencode_nb.session.service import FLUSH_INTERVAL_S, SessionService, make_slug
from opencode_nb.session.store import SessionStore


class CountingStore(SessionStore):
    def __init__(self, path):
        super().__init__(path)
        self.part_writes = 0

    def put_parts(self, parts):
        self.part_writes += len(parts)
        super().put_parts(parts)


@pytest.fixture
def svc(tmp_path):
    bus = Bus()
    service = SessionService(CountingStore(tmp_path / "s.sqlite"), bus)
    service.events = []
    bus.subscribe("*", service.events.append)
    yield service
    service.close()


def started(svc):
    session = svc.create("/p")
    msg = UserMessage(session_id=session.id, agent="build")
    svc.add_message(msg)
    return session, msg


def test_creating_a_session_stores_it_and_publishes_it(svc):
    session = svc.create("/p", title="Clean the sales data")
    assert svc.get(session.id) == session
    assert svc.events[-1].type == "session.created" and svc.events[-1].session == session
    assert session.slug.startswith("clean-the-sales-data-")
    assert svc.create("/p").title.startswith("New session - ")
    assert svc.create("/p", parent_id=session.id).title.startswith("Child session - ")


def test_updating_a_session_bumps_its_activity_and_publishes(svc):
    session = svc.create("/p")
    updated = svc.update(session, title="x")
    assert updated.updated_at >= session.updated_at and svc.get(session.id).title == "x"
    assert svc.events[-1].type == "session.updated"


def test_a_part_is_stored_before_its_first_event_is_published(svc):
    session, msg = started(svc)
    seen = []
    svc.bus.subscribe("message.part.updated",
                      lambda e: seen.append([p.id for p in svc.store.messages(session.id)[0].parts]))
    part = TextPart(session_id=session.id, message_id=msg.id, text="hi")
    svc.add_part(part)
    assert seen == [[part.id]]


async def test_streamed_deltas_are_published_at_once_and_written_coalesced(svc):
    session, msg = started(svc)
    part = TextPart(session_id=session.id, message_id=msg.id, text="")
    svc.add_part(part)
    writes = svc.store.part_writes
    for i in range(200):
        part = part.model_copy(update={"text": part.text + f"{i} "})
        svc.update_part(part, delta=f"{i} ")
    deltas = [e.delta for e in svc.events if e.type == "message.part.updated" and e.delta]
    assert len(deltas) == 200
    assert svc.store.part_writes == writes  # nothing written yet
    await asyncio.sleep(FLUSH_INTERVAL_S * 3)
    assert svc.store.part_writes == writes + 1
    assert svc.store.messages(session.id)[0].parts[0].text == part.text


async def test_a_state_change_after_deltas_is_written_at_once(svc):
    session, msg = started(svc)
    part = TextPart(session_id=session.id, message_id=msg.id, text="a")
    svc.add_part(part)
    svc.update_part(part.model_copy(update={"text": "ab"}), delta="b")
    svc.update_part(part.model_copy(update={"text": "ab", "ended_at": 5.0}))
    assert svc.store.messages(session.id)[0].parts[0].ended_at == 5.0
    await asyncio.sleep(FLUSH_INTERVAL_S * 2)
    assert svc.store.messages(session.id)[0].parts[0].ended_at == 5.0  # the stale delta version never lands


async def test_another_store_sees_streamed_text_within_the_flush_interval(svc):
    session, msg = started(svc)
    part = TextPart(session_id=session.id, message_id=msg.id, text="")
    svc.add_part(part)
    svc.update_part(part.model_copy(update={"text": "partial answer"}), delta="partial answer")
    await asyncio.sleep(FLUSH_INTERVAL_S * 2)
    reader = SessionStore(svc.store.path)  # as if the kernel had died now
    try:
        assert reader.messages(session.id)[0].parts[0].text == "partial answer"
    finally:
        reader.close()


def test_without_a_running_loop_deltas_write_through(svc):
    session, msg = started(svc)
    part = TextPart(session_id=session.id, message_id=msg.id, text="a")
    svc.add_part(part)
    svc.update_part(part.model_copy(update={"text": "ab"}), delta="b")
    assert svc.store.messages(session.id)[0].parts[0].text == "ab"


def test_tool_state_changes_publish_full_parts(svc):
    session, msg = started(svc)
    part = ToolPart(session_id=session.id, message_id=msg.id, call_id="c", tool="bash")
    svc.add_part(part)
    svc.update_part(part.model_copy(update={"state": ToolRunning(input={"command": "ls"})}))
    assert svc.events[-1].part.state.status == "running" and svc.events[-1].delta is None


def test_todos_are_stored_and_published(svc):
    session = svc.create("/p")
    todos = [Todo(content="a", status="in_progress")]
    svc.set_todos(session.id, todos)
    assert svc.todos(session.id) == todos
    assert svc.events[-1].type == "todo.updated" and svc.events[-1].todos == todos


def test_grants_live_on_the_root_session_of_a_tree(svc):
    root = svc.create("/p")
    child = svc.create("/p", parent_id=root.id)
    grandchild = svc.create("/p", parent_id=child.id)
    assert svc.root_of(grandchild.id) == root.id
    grants = [Grant(agent="explore", permission="bash", pattern="ls *")]
    svc.save_grants(root.id, grants)
    assert svc.load_grants(root.id) == grants and svc.get(root.id).approved == grants


def test_slugs_are_file_name_safe():
    slug = make_slug("Fix: the `mean()` bug / now!", "ses_0123456789abcdefXYZ")
    assert all(c.isalnum() or c == "-" for c in slug) and slug.startswith("fix-the-mean-bug-now-")
    assert make_slug("", "ses_0123456789abcdefXYZ") == "9abcdefxyz"[-8:]
