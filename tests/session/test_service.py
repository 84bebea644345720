import asyncio
import re

import pytest
from pydantic import ValidationError

from opencode_nb.bus import Bus
from opencode_nb.errors import NotFoundError
from opencode_nb.permission import Grant, Rule
from opencode_nb.permission.service import GrantStore
from opencode_nb.session.events import Todo
from opencode_nb.session.models import AssistantMessage, ReasoningPart, TextPart, ToolPart, ToolRunning, UserMessage
from opencode_nb.session.service import FLUSH_INTERVAL_S, SessionService, make_slug
from opencode_nb.session.store import SessionStore


class CountingStore(SessionStore):
    """The real store, counting the part rows it is asked to write."""

    def __init__(self, path):
        super().__init__(path)
        self.part_writes = 0

    def put_part(self, part):
        self.part_writes += 1
        super().put_part(part)

    def put_parts(self, parts):
        self.part_writes += len(parts)
        super().put_parts(parts)


class Recorder:
    def __init__(self, bus: Bus) -> None:
        self.events: list = []
        bus.subscribe("*", self.events.append)

    def of(self, event_type: str) -> list:
        return [e for e in self.events if e.type == event_type]


@pytest.fixture
def svc(tmp_path):
    service = SessionService(CountingStore(tmp_path / "s.sqlite"), Bus())
    yield service
    service.close()


@pytest.fixture
def seen(svc):
    return Recorder(svc.bus)


def started(svc):
    session = svc.create("/p")
    msg = UserMessage(session_id=session.id, agent="build")
    svc.add_message(msg)
    return session, msg


def stored_parts(svc, session_id):
    """What a freshly opened store reads: as if this kernel had died just now."""
    with SessionStore(svc.store.path) as reader:
        return [p for m in reader.messages(session_id) for p in m.parts]


def stream(svc, part, chunks):
    for chunk in chunks:
        part = part.model_copy(update={"text": part.text + chunk})
        svc.update_part(part, delta=chunk)
    return part


# ---------------------------------------------------------------------------------------------- sessions


def test_creating_a_session_stores_it_and_publishes_it(svc, seen):
    rules = [Rule(permission="todowrite", pattern="*", action="deny")]
    session = svc.create("/p", title="Clean the sales data", permission=rules)
    assert svc.get(session.id) == session
    assert session.title == "Clean the sales data" and session.permission == rules and session.parent_id is None
    assert [e.session for e in seen.of("session.created")] == [session]


def test_default_titles_say_new_or_child_and_when(svc):
    root = svc.create("/p")
    child = svc.create("/p", parent_id=root.id)
    iso = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z"
    assert re.fullmatch(f"New session - {iso}", root.title)
    assert re.fullmatch(f"Child session - {iso}", child.title)
    assert child.parent_id == root.id


def test_a_child_of_an_unknown_session_is_refused(svc):
    with pytest.raises(NotFoundError, match="ses_ghost"):
        svc.create("/p", parent_id="ses_ghost")


def test_slugs_come_from_the_title_and_are_file_name_safe_and_unique(svc):
    a = svc.create("/p", title="Fix: the `mean()` bug / now!")
    b = svc.create("/p", title="Fix: the `mean()` bug / now!")
    untitled = svc.create("/p")
    assert a.slug.startswith("fix-the-mean-bug-now-") and re.fullmatch(r"[a-z0-9-]+", a.slug)
    assert re.fullmatch(r"[a-z0-9]{8}", untitled.slug)
    assert len({a.slug, b.slug, untitled.slug}) == 3


def test_a_slug_another_session_has_takes_more_of_the_id(tmp_path):
    class TakenOnce(SessionStore):
        def __init__(self, path):
            super().__init__(path)
            self.asked: list[str] = []

        def slug_taken(self, slug):
            self.asked.append(slug)
            return len(self.asked) == 1

    service = SessionService(TakenOnce(tmp_path / "s.sqlite"), Bus())
    session = service.create("/p", title="Plot")
    service.close()
    first, second = service.store.asked
    assert first != second and session.slug == second and second.startswith("plot-") and len(second) > len(first)


def test_make_slug_uses_the_end_of_the_id():
    assert make_slug("", "ses_0123456789abcdefXYZ") == "bcdefxyz"
    assert make_slug("A  b", "ses_0123456789ab") == "a-b-456789ab"


def test_updating_a_session_bumps_its_activity_stores_and_publishes(svc, seen):
    rules = [Rule(permission="bash", pattern="rm *", action="deny")]
    session = svc.create("/p", permission=rules)
    updated = svc.update(session, title="x")
    assert updated.title == "x" and updated.updated_at >= session.updated_at and updated.permission == rules
    assert svc.get(session.id) == updated
    assert seen.of("session.updated")[-1].session == updated


def test_updating_a_session_with_a_field_it_does_not_have_fails(svc):
    session = svc.create("/p")
    with pytest.raises(ValidationError):
        svc.update(session, colour="red")


def test_listing_shows_roots_newest_activity_first_and_children_apart(svc):
    old = svc.create("/p")
    new = svc.create("/p")
    svc.create("/elsewhere")
    child = svc.create("/p", parent_id=old.id)
    assert [s.id for s in svc.list("/p")] == [new.id, old.id]
    svc.update(old, title="touched")
    assert [s.id for s in svc.list("/p")] == [old.id, new.id]
    assert [s.id for s in svc.children(old.id)] == [child.id]
    assert len(svc.list()) == 3


# ---------------------------------------------------------------------------------------------- messages


def test_messages_are_stored_then_published(svc, seen):
    session, msg = started(svc)
    reply = AssistantMessage(session_id=session.id, parent_id=msg.id, agent="build", model="a/b")
    svc.add_message(reply)
    done = reply.model_copy(update={"finish": "stop"})
    svc.update_message(done)
    assert [e.message for e in seen.of("message.updated")] == [msg, reply, done]
    assert [h.message for h in svc.messages(session.id)] == [msg, done]


def test_a_part_is_stored_before_its_first_event_is_published(svc):
    session, msg = started(svc)
    on_publish = []
    svc.bus.subscribe("message.part.updated", lambda e: on_publish.append(stored_parts(svc, session.id)))
    part = TextPart(session_id=session.id, message_id=msg.id, text="hi")
    svc.add_part(part)
    assert on_publish == [[part]]


async def test_a_streamed_part_never_stored_before_is_stored_before_its_first_event(svc):
    session, msg = started(svc)
    on_publish = []
    svc.bus.subscribe("message.part.updated", lambda e: on_publish.append(stored_parts(svc, session.id)))
    part = TextPart(session_id=session.id, message_id=msg.id, text="first words")
    svc.update_part(part, delta="first words")
    await asyncio.sleep(0)  # the loop turn ends: queued writes commit, then their events go out
    assert on_publish == [[part]]


def test_tool_state_changes_are_stored_and_published_whole(svc, seen):
    session, msg = started(svc)
    part = ToolPart(session_id=session.id, message_id=msg.id, call_id="c", tool="bash")
    svc.add_part(part)
    running = part.model_copy(update={"state": ToolRunning(input={"command": "ls"})})
    svc.update_part(running)
    event = seen.of("message.part.updated")[-1]
    assert event.part == running and event.delta is None
    assert stored_parts(svc, session.id) == [running]


# ---------------------------------------------------------------------------------------------- streaming


async def test_streamed_deltas_are_published_at_once_and_written_coalesced(svc, seen):
    session, msg = started(svc)
    part = TextPart(session_id=session.id, message_id=msg.id)
    svc.add_part(part)
    await asyncio.sleep(0)  # the loop turn ends: queued writes commit, then their events go out
    writes = svc.store.part_writes
    chunks = [f"{i} " for i in range(200)]
    part = stream(svc, part, chunks)
    assert [e.delta for e in seen.of("message.part.updated")[1:]] == chunks
    assert seen.of("message.part.updated")[-1].part == part
    assert svc.store.part_writes == writes  # nothing written yet: the timer has not fired
    await asyncio.sleep(FLUSH_INTERVAL_S * 3)
    assert svc.store.part_writes == writes + 1
    assert stored_parts(svc, session.id) == [part]


async def test_reasoning_is_coalesced_like_text(svc):
    session, msg = started(svc)
    part = ReasoningPart(session_id=session.id, message_id=msg.id)
    svc.add_part(part)
    await asyncio.sleep(0)  # the loop turn ends: queued writes commit, then their events go out
    writes = svc.store.part_writes
    part = stream(svc, part, ["let ", "me ", "think"])
    svc.flush()
    assert svc.store.part_writes == writes + 1
    assert stored_parts(svc, session.id) == [part]


async def test_text_streamed_for_longer_than_the_interval_keeps_reaching_the_store(svc):
    session, msg = started(svc)
    part = TextPart(session_id=session.id, message_id=msg.id)
    svc.add_part(part)
    await asyncio.sleep(0)  # the loop turn ends: queued writes commit, then their events go out
    for i in range(6):
        part = stream(svc, part, [f"{i} "])
        await asyncio.sleep(FLUSH_INTERVAL_S * 0.6)
    # still streaming (a change every 0.6 intervals): a write that waited for a pause would have stored nothing
    assert stored_parts(svc, session.id)[0].text.startswith("0 1 2 ")


async def test_a_state_change_after_deltas_is_written_at_once_and_the_stale_text_never_lands(svc):
    session, msg = started(svc)
    part = TextPart(session_id=session.id, message_id=msg.id, text="a")
    svc.add_part(part)
    await asyncio.sleep(0)  # the loop turn ends: queued writes commit, then their events go out
    part = stream(svc, part, ["b", "c"])
    ended = part.model_copy(update={"ended_at": 5.0})
    svc.update_part(ended)
    await asyncio.sleep(0)  # the loop turn ends: queued writes commit, then their events go out
    assert stored_parts(svc, session.id) == [ended]
    await asyncio.sleep(FLUSH_INTERVAL_S * 2)
    assert stored_parts(svc, session.id) == [ended]


async def test_another_reader_sees_streamed_text_once_the_interval_has_passed(svc):
    session, msg = started(svc)
    part = TextPart(session_id=session.id, message_id=msg.id)
    svc.add_part(part)
    await asyncio.sleep(0)  # the loop turn ends: queued writes commit, then their events go out
    stream(svc, part, ["partial ", "answer"])
    await asyncio.sleep(FLUSH_INTERVAL_S * 2)
    assert stored_parts(svc, session.id)[0].text == "partial answer"


async def test_flush_messages_and_close_write_buffered_text(svc):
    session, msg = started(svc)
    parts = [TextPart(session_id=session.id, message_id=msg.id) for _ in range(3)]
    for part in parts:
        svc.add_part(part)
    await asyncio.sleep(0)  # the loop turn ends: queued writes commit, then their events go out
    streamed = [stream(svc, part, [f"text {i}"]) for i, part in enumerate(parts)]
    svc.flush()
    assert stored_parts(svc, session.id) == streamed
    stream(svc, streamed[0], ["!"])
    assert svc.messages(session.id)[0].parts[0].text == "text 0!"
    stream(svc, streamed[1], ["?"])
    svc.close()
    assert [p.text for p in stored_parts(svc, session.id)] == ["text 0!", "text 1?", "text 2"]


def test_without_a_running_loop_deltas_write_through(svc):
    session, msg = started(svc)
    part = TextPart(session_id=session.id, message_id=msg.id, text="a")
    svc.add_part(part)
    part = stream(svc, part, ["b"])
    assert stored_parts(svc, session.id) == [part]


async def test_a_delta_on_a_tool_part_is_written_at_once(svc):
    session, msg = started(svc)
    part = ToolPart(session_id=session.id, message_id=msg.id, call_id="c", tool="bash")
    svc.add_part(part)
    await asyncio.sleep(0)  # the loop turn ends: queued writes commit, then their events go out
    svc.update_part(part.model_copy(update={"tool": "bash2"}), delta="x")
    await asyncio.sleep(0)  # the loop turn ends: queued writes commit, then their events go out
    assert stored_parts(svc, session.id)[0].tool == "bash2"


def test_text_buffered_by_a_loop_that_ended_is_not_stranded(svc):
    session, msg = started(svc)
    part = TextPart(session_id=session.id, message_id=msg.id)
    svc.add_part(part)

    async def first_run():
        return stream(svc, part, ["one "])  # the loop ends before its flush timer fires

    async def second_run():
        later = stream(svc, part, ["two"])
        await asyncio.sleep(FLUSH_INTERVAL_S * 2)
        return later

    asyncio.run(first_run())
    later = asyncio.run(second_run())
    assert stored_parts(svc, session.id) == [later]


# ---------------------------------------------------------------------------------------------- todos, grants


def test_todos_are_stored_and_published(svc, seen):
    session = svc.create("/p")
    todos = [Todo(content="a", status="in_progress"), Todo(content="b")]
    svc.set_todos(session.id, todos)
    assert svc.todos(session.id) == todos
    [event] = seen.of("todo.updated")
    assert event.session_id == session.id and event.todos == todos


def test_grants_live_on_the_root_session_of_a_tree(svc, seen):
    store: GrantStore = svc
    root = svc.create("/p")
    child = svc.create("/p", parent_id=root.id)
    grandchild = svc.create("/p", parent_id=child.id)
    assert store.root_of(grandchild.id) == root.id and store.root_of(root.id) == root.id
    assert store.load_grants(root.id) == []
    grants = [Grant(agent="explore", permission="bash", pattern="ls *")]
    store.save_grants(root.id, grants)
    assert store.load_grants(root.id) == grants and svc.get(root.id).approved == grants
    assert seen.of("session.updated")[-1].session.approved == grants
    assert svc.get(child.id).approved == []


def test_the_root_of_an_unknown_session_is_not_found(svc):
    with pytest.raises(NotFoundError):
        svc.root_of("ses_ghost")


async def test_writes_of_one_loop_turn_commit_together_and_their_events_follow_in_order(svc, seen):
    session, msg = started(svc)
    await asyncio.sleep(0)
    commits = []
    original = svc.store.transaction

    def counted():
        commits.append(1)
        return original()

    svc.store.transaction = counted
    order = []
    svc.bus.subscribe("message.part.updated", lambda e: order.append(
        (e.part.id, [p.id for p in stored_parts(svc, session.id)])))
    parts = [TextPart(session_id=session.id, message_id=msg.id, text=str(i)) for i in range(4)]
    for part in parts:
        svc.add_part(part)
    assert order == []  # nothing is published before it is stored
    await asyncio.sleep(0)
    assert commits == [1]
    assert [part_id for part_id, _ in order] == [p.id for p in parts]
    assert all(len(stored) == 4 for _, stored in order)
