import asyncio
import threading

import pytest

from opencode_nb.bus import Bus
from opencode_nb.errors import CorrectedError, DeniedError, NotFoundError, RejectedError
from opencode_nb.permission import Grant, PermissionService, from_config

ASK_BASH = from_config({"*": "allow", "bash": "ask"})


class Tree:
    """Sessions b and c are children of a; d is its own root. Grants are kept per root."""

    def __init__(self) -> None:
        self.parents = {"b": "a", "c": "a"}
        self.saved: dict[str, list[Grant]] = {}

    def root_of(self, session_id: str) -> str:
        while session_id in self.parents:
            session_id = self.parents[session_id]
        return session_id

    def load_grants(self, root_id: str) -> list[Grant]:
        return list(self.saved.get(root_id, []))

    def save_grants(self, root_id: str, grants: list[Grant]) -> None:
        self.saved[root_id] = list(grants)


def service(**kw):
    bus = Bus()
    events = []
    bus.subscribe("*", events.append)
    return PermissionService(bus, **kw), events


async def asked(svc: PermissionService, n: int = 1):
    for _ in range(200):
        if len(svc.pending()) >= n:
            return svc.pending()
        await asyncio.sleep(0.005)
    raise AssertionError(f"expected {n} pending requests, have {len(svc.pending())}")


def start(svc, session="a", agent="build", patterns=("npm test",), always=("npm test *",), ruleset=ASK_BASH):
    return asyncio.create_task(svc.ask(session, agent, "bash", list(patterns), always=list(always), ruleset=ruleset))


async def test_all_allowed_returns_at_once_without_asking():
    svc, events = service()
    await svc.ask("a", "build", "read", ["src/a.py", "b.py"], ruleset=from_config({"read": "allow"}))
    assert events == [] and svc.pending() == []


async def test_a_deny_on_any_pattern_refuses_even_when_another_would_ask():
    svc, events = service()
    rules = from_config({"bash": {"*": "ask", "rm *": "deny"}})
    with pytest.raises(DeniedError) as err:
        await svc.ask("a", "build", "bash", ["ls", "rm -rf x"], ruleset=rules)
    assert '"rm *"' in str(err.value)
    assert events == []


async def test_an_ask_publishes_the_request_and_waits_for_once():
    svc, events = service()
    task = start(svc)
    [request] = await asked(svc)
    assert events[0].type == "permission.asked" and events[0].request == request
    assert request.patterns == ["npm test"] and request.always == ["npm test *"]
    assert not task.done()
    svc.reply(request.id, "once")
    await task
    assert events[-1].type == "permission.replied" and events[-1].reply == "once"
    t2 = start(svc)  # once grants nothing for later
    await asked(svc)
    t2.cancel()


async def test_always_releases_other_pending_requests_of_the_same_tree_and_agent_only():
    svc, _ = service(tree=Tree())
    first = start(svc, "a", patterns=["npm test"])
    child = start(svc, "b", patterns=["npm test -- -k x"])
    other_agent = start(svc, "c", agent="explore", patterns=["npm test"])
    other_tree = start(svc, "d", patterns=["npm test"])
    requests = await asked(svc, 4)
    svc.reply(requests[0].id, "always")
    await first
    await child
    await asyncio.sleep(0.01)
    assert not other_agent.done() and not other_tree.done()
    assert {r.session_id for r in svc.pending()} == {"c", "d"}
    for task in (other_agent, other_tree):
        task.cancel()


async def test_an_always_grant_is_scoped_to_the_agent_that_asked():
    svc, _ = service(tree=Tree())
    task = start(svc, "b", agent="explore")
    [request] = await asked(svc)
    svc.reply(request.id, "always")
    await task
    assert svc.grants("a") == [Grant(agent="explore", permission="bash", pattern="npm test *")]
    await svc.ask("c", "explore", "bash", ["npm test -x"], ruleset=ASK_BASH)  # same tree, same agent: allowed
    build = start(svc, "a", agent="build")
    await asked(svc)  # build still asks
    build.cancel()


async def test_always_grants_are_persisted_and_seen_after_a_restart():
    tree = Tree()
    svc, _ = service(tree=tree)
    task = start(svc, "b")
    svc.reply((await asked(svc))[0].id, "always")
    await task
    assert tree.saved["a"] == [Grant(agent="build", permission="bash", pattern="npm test *")]
    fresh, events = service(tree=tree)
    await fresh.ask("c", "build", "bash", ["npm test --watch"], ruleset=ASK_BASH)
    assert events == []


async def test_reject_cascades_to_the_other_requests_of_the_same_session_only():
    svc, events = service()
    one, two, other = start(svc, "a"), start(svc, "a", patterns=["make"]), start(svc, "d")
    requests = await asked(svc, 3)
    svc.reply(requests[0].id, "reject")
    with pytest.raises(RejectedError) as err:
        await one
    assert not isinstance(err.value, CorrectedError)
    with pytest.raises(RejectedError):
        await two
    assert [r.session_id for r in svc.pending()] == ["d"]
    assert [e.reply for e in events if e.type == "permission.replied"] == ["reject", "reject"]
    other.cancel()


async def test_reject_with_a_message_reaches_the_model_as_feedback():
    svc, _ = service()
    task = start(svc)
    svc.reply((await asked(svc))[0].id, "reject", "use the staging bucket instead")
    with pytest.raises(CorrectedError) as err:
        await task
    assert str(err.value).endswith("with the following feedback: use the staging bucket instead")


async def test_replying_to_an_unknown_or_answered_request_is_not_found():
    svc, _ = service()
    with pytest.raises(NotFoundError):
        svc.reply("per_nope", "once")
    task = start(svc)
    [request] = await asked(svc)
    svc.reply(request.id, "once")
    with pytest.raises(NotFoundError):
        svc.reply(request.id, "once")
    await task
    with pytest.raises(ValueError):
        svc.reply("per_x", "sometimes")  # type: ignore[arg-type]


async def test_closing_rejects_whatever_is_pending():
    svc, events = service()
    task = start(svc)
    await asked(svc)
    svc.close()
    with pytest.raises(RejectedError):
        await task
    assert events[-1].reason == "closed"


async def test_a_policy_decides_for_runs_with_nobody_to_ask():
    allow, events = service(policy=lambda request: "allow")
    await allow.ask("a", "build", "bash", ["make"], ruleset=ASK_BASH)
    assert events[-1].reply == "once" and "policy" in events[-1].reason
    deny, events = service(policy=lambda request: "deny")
    with pytest.raises(RejectedError, match="nobody to approve"):
        await deny.ask("a", "build", "bash", ["make"], ruleset=ASK_BASH)
    assert events[-1].reply == "reject"
    ask_anyway, _ = service(policy=lambda request: None)
    task = start(ask_anyway)
    await asked(ask_anyway)
    task.cancel()


async def test_an_unanswered_request_times_out_as_a_rejection():
    svc, events = service(timeout_s=0.05)
    with pytest.raises(RejectedError, match="in time"):
        await svc.ask("a", "build", "bash", ["make"], ruleset=ASK_BASH)
    assert svc.pending() == [] and "timed out" in events[-1].reason


async def test_a_reply_from_another_thread_resolves_the_waiting_ask():
    svc, _ = service()
    task = start(svc)
    [request] = await asked(svc)
    thread = threading.Thread(target=svc.reply, args=(request.id, "once"))
    thread.start()
    thread.join()
    await asyncio.wait_for(task, 2)


async def test_a_stopped_ask_leaves_nothing_pending_and_closes_its_prompt():
    svc, events = service()
    task = start(svc)
    await asked(svc)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert svc.pending() == []
    assert events[-1].reply == "reject" and events[-1].reason == "aborted"
