import asyncio
import logging
from typing import Literal

from opencode_nb.bus import Bus, Event


class Pinged(Event):
    type: Literal["test.pinged"] = "test.pinged"
    n: int


class Ponged(Event):
    type: Literal["test.ponged"] = "test.ponged"


def test_a_subscriber_receives_only_the_type_it_subscribed_to():
    bus, got = Bus(), []
    bus.subscribe("test.pinged", got.append)
    bus.publish(Pinged(n=1))
    bus.publish(Ponged())
    assert got == [Pinged(n=1)]


def test_subscribing_by_class_uses_its_stable_type_name():
    bus, got = Bus(), []
    bus.subscribe(Pinged, got.append)
    bus.publish(Pinged(n=2))
    assert [e.n for e in got] == [2]


def test_the_wildcard_subscriber_sees_every_event_after_the_typed_ones():
    bus, order = Bus(), []
    bus.subscribe("*", lambda e: order.append(("all", e.type)))
    bus.subscribe("test.pinged", lambda e: order.append(("typed", e.type)))
    bus.publish(Pinged(n=1))
    bus.publish(Ponged())
    assert order == [("typed", "test.pinged"), ("all", "test.pinged"), ("all", "test.ponged")]


def test_unsubscribing_stops_delivery_and_is_idempotent():
    bus, got = Bus(), []
    off = bus.subscribe("test.pinged", got.append)
    off()
    off()
    bus.publish(Pinged(n=1))
    assert got == []


def test_a_failing_subscriber_is_logged_and_never_breaks_the_publisher(caplog):
    bus, got = Bus(), []

    def broken(event: Event) -> None:
        raise RuntimeError("view crashed")

    bus.subscribe("test.pinged", broken)
    bus.subscribe("test.pinged", got.append)
    with caplog.at_level(logging.ERROR):
        bus.publish(Pinged(n=1))
    assert got == [Pinged(n=1)]
    assert "view crashed" in caplog.text


async def test_async_subscribers_run_as_tasks_and_their_failures_are_logged(caplog):
    bus, got = Bus(), []

    async def slow(event: Pinged) -> None:
        await asyncio.sleep(0.01)
        got.append(event.n)

    async def broken(event: Pinged) -> None:
        raise RuntimeError("async view crashed")

    bus.subscribe("test.pinged", slow)
    bus.subscribe("test.pinged", broken)
    with caplog.at_level(logging.ERROR):
        bus.publish(Pinged(n=7))
        assert got == []  # the publisher did not wait
        await bus.drain()
    assert got == [7]
    assert "async view crashed" in caplog.text


def test_events_are_frozen():
    event = Pinged(n=1)
    try:
        event.n = 2  # type: ignore[misc]
    except Exception:
        return
    raise AssertionError("an event could be changed after publishing")


def test_a_watcher_is_not_somebody_who_answers():
    bus = Bus()
    seen = []
    off = bus.subscribe("test.pinged", seen.append, watch_only=True)
    assert not bus.subscribed("test.pinged")
    bus.subscribe("*", seen.append)
    assert not bus.subscribed("test.pinged")
    off_answerer = bus.subscribe("test.pinged", seen.append)
    assert bus.subscribed("test.pinged")
    off_answerer()
    off()
    off()  # twice is harmless and does not undercount
    assert not bus.subscribed("test.pinged")
    bus.subscribe("test.pinged", seen.append)
    assert bus.subscribed("test.pinged")
