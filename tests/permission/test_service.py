import asyncio
import threading

import pytest

from opencode_nb.bus import Bus
from opencode_nb.errors import CorrectedError, DeniedError, NotFoundError, PolicyRefusedError, RejectedError
from opencode_nb.permission import NAMED_ONLY, Grant, PermissionService, Rule, ToolRef, from_config
from opencode_nb.tool.shell.parse import command_patterns

ASK_BASH = from_config({"*": "allow", "bash": "ask"})


class Tree:
    """Sessions b and c are children of a; d is its own root. Grants are kept per root, as the store does."""

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


def replies(events):
    return [(e.session_id, e.reply) for e in events if e.type == "permission.replied"]


async def asked(svc: PermissionService, n: int = 1):
    for _ in range(400):
        if len(svc.pending()) >= n:
            return svc.pending()
        await asyncio.sleep(0.005)
    raise AssertionError(f"expected {n} pending requests, have {len(svc.pending())}")


def start(svc, session="a", agent="build", patterns=("npm test",), always=("npm test *",), ruleset=ASK_BASH):
    return asyncio.create_task(svc.ask(session, agent, "bash", list(patterns), always=list(always), ruleset=ruleset))


async def cancel(*tasks):
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


# ---------------------------------------------------------------------------------------------- deciding at once

async def test_all_allowed_returns_at_once_without_asking():
    svc, events = service()
    await svc.ask("a", "build", "read", ["src/a.py", "b.py"], ruleset=from_config({"read": "allow"}))
    assert events == [] and svc.pending() == []


async def test_a_deny_on_any_pattern_refuses_even_when_another_would_ask():
    svc, events = service()
    rules = from_config({"*": "allow", "bash": {"*": "ask", "rm *": "deny"}, "edit": "deny"})
    with pytest.raises(DeniedError) as err:
        await svc.ask("a", "build", "bash", ["ls", "rm -rf x", "make"], ruleset=rules)
    assert err.value.rules == [r for r in rules if r.permission in ("*", "bash")]
    assert '"rm *"' in str(err.value)
    assert events == [] and svc.pending() == []


@pytest.mark.parametrize("command", ["FOO=1 rm x", "rm x > log", "FOO=1 rm -rf x 2>&1 >> log"])
async def test_a_denied_shell_command_stays_denied_behind_assignments_and_redirections(command):
    svc, events = service()
    rules = from_config({"bash": {"*": "allow", "rm *": "deny"}})
    patterns, always = command_patterns(command)
    with pytest.raises(DeniedError):
        await svc.ask("a", "build", "bash", patterns, always=always, ruleset=rules)
    await svc.ask("a", "build", "bash", *command_patterns("FOO=1 make test > log"), ruleset=rules)
    assert events == [] and svc.pending() == []


async def test_a_call_with_no_patterns_is_asked_about():
    svc, _ = service()
    task = asyncio.create_task(svc.ask("a", "build", "read", [], ruleset=from_config({"read": "allow"})))
    await asked(svc)
    await cancel(task)


async def test_always_ask_makes_a_person_decide_what_the_rules_allow_but_not_what_they_deny():
    svc, _ = service()
    rules = from_config({"bash": {"*": "allow", "rm *": "deny"}})
    task = asyncio.create_task(svc.ask("a", "build", "bash", ["echo $(x"], ruleset=rules, always_ask=True))
    await asked(svc)
    await cancel(task)
    with pytest.raises(DeniedError):
        await svc.ask("a", "build", "bash", ["rm x"], ruleset=rules, always_ask=True)


# ---------------------------------------------------------------------------------------------- asking a person

async def test_an_ask_publishes_the_request_and_waits_for_once():
    svc, events = service()
    task = asyncio.create_task(svc.ask("a", "build", "bash", ["npm test"], always=["npm test *"],
                                       metadata={"command": "npm test"}, ruleset=ASK_BASH,
                                       tool=ToolRef(message_id="msg_1", call_id="call_1")))
    [request] = await asked(svc)
    assert [e.type for e in events] == ["permission.asked"] and events[0].request == request
    assert request.id.startswith("per_") and (request.session_id, request.agent) == ("a", "build")
    assert request.patterns == ["npm test"] and request.always == ["npm test *"]
    assert request.metadata == {"command": "npm test"} and request.tool.call_id == "call_1"
    await asyncio.sleep(0.01)
    assert not task.done()
    svc.reply(request.id, "once")
    await task
    assert replies(events) == [("a", "once")] and svc.pending() == []
    assert svc.grants("a") == []
    again = start(svc)  # once grants nothing for later
    await asked(svc)
    await cancel(again)


async def test_pending_lists_all_requests_or_one_sessions():
    svc, _ = service()
    tasks = [start(svc, "a"), start(svc, "d"), start(svc, "a", patterns=["make"])]
    await asked(svc, 3)
    assert [r.session_id for r in svc.pending()] == ["a", "d", "a"]
    assert [r.patterns for r in svc.pending("a")] == [["npm test"], ["make"]]
    assert svc.pending("zzz") == []
    await cancel(*tasks)


async def test_always_grants_the_always_patterns_not_the_asked_ones():
    svc, _ = service()
    task = start(svc, patterns=["npm test -- -k slow"], always=["npm test *"])
    svc.reply((await asked(svc))[0].id, "always")
    await task
    assert svc.grants("a") == [Grant(agent="build", permission="bash", pattern="npm test *")]
    await svc.ask("a", "build", "bash", ["npm test --watch"], ruleset=ASK_BASH)
    other = start(svc, patterns=["npm publish"])
    await asked(svc)
    await cancel(other)


async def test_always_releases_other_pending_requests_of_the_same_tree_and_agent_only():
    svc, events = service(tree=Tree())
    first = start(svc, "a", patterns=["npm test"])
    child = start(svc, "b", patterns=["npm test -- -k x"])
    not_covered = start(svc, "c", patterns=["make"])
    other_agent = start(svc, "c", agent="explore", patterns=["npm test"])
    other_tree = start(svc, "d", patterns=["npm test"])
    requests = await asked(svc, 5)
    svc.reply(requests[0].id, "always")
    await first
    await child
    await asyncio.sleep(0.01)
    assert not any(t.done() for t in (not_covered, other_agent, other_tree))
    assert [(r.session_id, r.agent) for r in svc.pending()] == [("c", "build"), ("c", "explore"), ("d", "build")]
    assert replies(events) == [("a", "always"), ("b", "always")]
    await cancel(not_covered, other_agent, other_tree)


async def test_an_always_grant_is_scoped_to_the_agent_that_asked():
    svc, _ = service(tree=Tree())
    task = start(svc, "b", agent="explore")
    svc.reply((await asked(svc))[0].id, "always")
    await task
    assert svc.grants("c") == [Grant(agent="explore", permission="bash", pattern="npm test *")]
    await svc.ask("c", "explore", "bash", ["npm test -x"], ruleset=ASK_BASH)  # same tree, same agent: allowed
    build = start(svc, "a", agent="build")
    await asked(svc)  # build still asks
    elsewhere = start(svc, "d", agent="explore")
    await asked(svc, 2)  # and so does explore in another tree
    await cancel(build, elsewhere)


async def test_grants_come_after_the_ruleset_so_they_win_over_its_asks():
    tree = Tree()
    tree.saved["a"] = [Grant(agent="build", permission="bash", pattern="npm *")]
    svc, events = service(tree=tree)
    await svc.ask("b", "build", "bash", ["npm ci"], ruleset=from_config({"bash": {"npm *": "ask"}}))
    assert events == []


@pytest.mark.parametrize("granted", ["external_*", "*", "external_director?", "*_directory"])
async def test_a_grant_counts_only_for_the_very_permission_it_was_given_at(granted):
    """"Always" at a tool's prompt allows that tool: its name is never a pattern over other permissions."""
    tree = Tree()
    tree.saved["a"] = [Grant(agent="build", permission=granted, pattern="*")]
    svc, _ = service(tree=tree)
    rules = from_config({"*": "allow", "external_directory": "ask"})
    task = asyncio.create_task(svc.ask("a", "build", "external_directory", ["/home/x/*"], ruleset=rules))
    await asked(svc)
    await cancel(task)
    await svc.ask("a", "build", granted, ["anything"], ruleset=from_config({"*": "ask"}))  # its own: allowed


async def test_always_at_one_tools_prompt_releases_no_pending_ask_of_another_permission():
    svc, _ = service()
    rules = from_config({"*": "ask"})
    real = asyncio.create_task(svc.ask("a", "build", "external_directory", ["/home/x/*"], ruleset=rules))
    await asked(svc)
    tool = asyncio.create_task(svc.ask("a", "build", "mcp_external_directory", ["*"], always=["*"], ruleset=rules))
    [_, request] = await asked(svc, 2)
    svc.reply(request.id, "always")
    await tool
    await asyncio.sleep(0.01)
    assert not real.done()
    await cancel(real)


async def test_always_grants_are_persisted_and_seen_after_a_restart():
    tree = Tree()
    svc, _ = service(tree=tree)
    task = start(svc, "b")
    svc.reply((await asked(svc))[0].id, "always")
    await task
    assert tree.saved == {"a": [Grant(agent="build", permission="bash", pattern="npm test *")]}
    fresh, events = service(tree=tree)
    await fresh.ask("c", "build", "bash", ["npm test --watch"], ruleset=ASK_BASH)
    assert events == []
    assert fresh.grants("b") == tree.saved["a"]


async def test_reject_cascades_to_the_other_requests_of_the_same_session_only():
    svc, events = service(tree=Tree())
    one, two = start(svc, "a"), start(svc, "a", agent="explore", patterns=["make"])
    child, other = start(svc, "b"), start(svc, "d")
    requests = await asked(svc, 4)
    svc.reply(requests[0].id, "reject")
    with pytest.raises(RejectedError) as err:
        await one
    assert not isinstance(err.value, CorrectedError)
    with pytest.raises(RejectedError) as err:
        await two
    assert not isinstance(err.value, CorrectedError)
    assert [r.session_id for r in svc.pending()] == ["b", "d"]
    assert replies(events) == [("a", "reject"), ("a", "reject")]
    await cancel(child, other)


async def test_reject_with_a_message_reaches_the_model_as_feedback_and_the_others_get_a_plain_reject():
    svc, events = service()
    task, sibling = start(svc), start(svc, patterns=["make"])
    requests = await asked(svc, 2)
    svc.reply(requests[0].id, "reject", "use the staging bucket instead")
    with pytest.raises(CorrectedError) as err:
        await task
    assert err.value.feedback == "use the staging bucket instead"
    assert str(err.value).endswith("with the following feedback: use the staging bucket instead")
    with pytest.raises(RejectedError) as err:
        await sibling
    assert not isinstance(err.value, CorrectedError)
    assert [e.message for e in events if e.type == "permission.replied"] == ["use the staging bucket instead", None]


async def test_an_empty_message_is_a_plain_reject():
    svc, _ = service()
    task = start(svc)
    svc.reply((await asked(svc))[0].id, "reject", "")
    with pytest.raises(RejectedError) as err:
        await task
    assert not isinstance(err.value, CorrectedError)


async def test_replying_to_an_unknown_or_answered_request_is_not_found():
    svc, _ = service()
    with pytest.raises(NotFoundError, match="permission request 'per_nope' not found"):
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
    tasks = [start(svc, "a"), start(svc, "d")]
    await asked(svc, 2)
    svc.close()
    for task in tasks:
        with pytest.raises(RejectedError):
            await task
    assert svc.pending() == []
    assert [(e.reply, e.reason) for e in events if e.type == "permission.replied"] == [("reject", "closed")] * 2


# ---------------------------------------------------------------------------------------------- nobody to ask

async def test_a_policy_allowing_lets_the_call_through_and_says_why():
    seen = []
    svc, events = service(policy=lambda request: seen.append(request) or "allow")
    await svc.ask("a", "build", "bash", ["make"], ruleset=ASK_BASH)
    assert [r.patterns for r in seen] == [["make"]]
    # the request is published too, answered at once, so a transcript can show what was decided
    assert [e.type for e in events] == ["permission.asked", "permission.replied"]
    assert events[1].reply == "once" and "policy" in events[1].reason
    assert svc.pending() == []


async def test_a_policy_refusing_tells_the_model_it_was_the_policy():
    svc, events = service(policy=lambda request: "deny")
    with pytest.raises(PolicyRefusedError, match="policy") as err:
        await svc.ask("a", "build", "bash", ["make"], ruleset=ASK_BASH)
    assert not isinstance(err.value, RejectedError), "the model carries on without the call"
    assert events[-1].reply == "reject" and "policy" in events[-1].reason
    assert svc.pending() == []


async def test_a_policy_is_consulted_only_when_a_person_would_be_asked():
    seen = []
    svc, _ = service(policy=lambda request: seen.append(request) or "allow")
    await svc.ask("a", "build", "read", ["x"], ruleset=from_config({"read": "allow"}))
    with pytest.raises(DeniedError):
        await svc.ask("a", "build", "read", ["x"], ruleset=from_config({"read": "deny"}))
    assert seen == []


@pytest.mark.parametrize("answer", [None, "ask"])
async def test_a_policy_without_an_answer_leaves_it_to_a_person(answer):
    svc, _ = service(policy=lambda request: answer)
    task = start(svc)
    await asked(svc)
    await cancel(task)


async def test_an_unanswered_request_times_out_as_a_rejection():
    svc, events = service(timeout_s=0.05)
    with pytest.raises(RejectedError, match="within 0.05 s"):
        await svc.ask("a", "build", "bash", ["make"], ruleset=ASK_BASH)
    assert svc.pending() == []
    assert [(e.reply, e.reason) for e in events if e.type == "permission.replied"] == [("reject", "timeout")]


async def test_an_answer_in_time_cancels_the_timeout():
    svc, events = service(timeout_s=0.1)
    task = start(svc)
    svc.reply((await asked(svc))[0].id, "once")
    await task
    await asyncio.sleep(0.15)
    assert replies(events) == [("a", "once")]


# ---------------------------------------------------------------------------------------------- threads, cancel

async def test_a_reply_from_another_thread_resolves_the_waiting_ask():
    svc, events = service(tree=Tree())
    task, sibling = start(svc, "a"), start(svc, "b", patterns=["npm test -x"])
    requests = await asked(svc, 2)
    errors = []

    def click():
        svc.reply(requests[0].id, "always")
        try:
            svc.reply("per_gone", "once")
        except NotFoundError as exc:
            errors.append(exc)

    thread = threading.Thread(target=click)
    thread.start()
    while thread.is_alive():
        await asyncio.sleep(0.005)  # the loop keeps running while the click is handled
    await asyncio.wait_for(asyncio.gather(task, sibling), 2)
    assert len(errors) == 1
    assert replies(events) == [("a", "always"), ("b", "always")]
    assert svc.grants("a") == [Grant(agent="build", permission="bash", pattern="npm test *")]


async def test_a_reject_from_another_thread_reaches_the_waiting_ask():
    svc, _ = service()
    task = start(svc)
    [request] = await asked(svc)
    thread = threading.Thread(target=svc.reply, args=(request.id, "reject", "not now"))
    thread.start()
    thread.join()
    with pytest.raises(CorrectedError, match="not now"):
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


def test_rules_and_grants_are_the_same_shape():
    assert Grant(agent="build", permission="bash", pattern="ls *").rule() == Rule(
        permission="bash", pattern="ls *", action="allow")


# ---------------------------------------------------------------------------------------------- named only


@pytest.mark.parametrize("permission", sorted(NAMED_ONLY))
async def test_a_catch_all_allow_does_not_decide_a_named_only_permission(permission):
    svc, _ = service(policy=lambda request: "deny")
    for rules in ({"*": "allow"}, {"*": "allow", "git_*": "allow", "edit": "allow"}):
        with pytest.raises(PolicyRefusedError):  # nothing names it: ask, and nobody is there
            await svc.ask("a", "build", permission, ["opencode.yaml"], ruleset=from_config(rules))


@pytest.mark.parametrize("permission", sorted(NAMED_ONLY))
async def test_rules_naming_a_named_only_permission_decide_it_last_match_wins(permission):
    svc, _ = service()
    rules = from_config({"*": "deny", permission: {"*": "deny", ".opencode/agent/*": "allow"}, "bash": "allow"})
    await svc.ask("a", "build", permission, [".opencode/agent/x.md"], ruleset=rules)
    with pytest.raises(DeniedError) as denied:
        await svc.ask("a", "build", permission, ["opencode.yaml"], ruleset=rules)
    assert all(r.permission == permission for r in denied.value.rules)


async def test_an_always_grant_counts_for_a_named_only_permission():
    svc, _ = service(tree=Tree())
    rules = from_config({"*": "allow", "agent_config": "ask"})
    first = asyncio.create_task(svc.ask("a", "build", "agent_config", ["AGENTS.md"], always=["AGENTS.md"],
                                        ruleset=rules))
    await asked(svc)
    svc.reply(svc.pending()[0].id, "always")
    await first
    await svc.ask("b", "build", "agent_config", ["AGENTS.md"], ruleset=rules)  # the child session: no ask
    assert svc.pending() == []


# ---------------------------------------------------------------------------------------------- who decided

def decided(events):
    return [(e.reply, e.decided_by) for e in events if e.type == "permission.replied"]


async def test_an_answer_by_the_policy_says_so_in_a_field_not_only_in_its_reason():
    svc, events = service(policy=lambda request: "allow")
    await svc.ask("a", "build", "bash", ["make"], ruleset=ASK_BASH)
    refusing, refused = service(policy=lambda request: "deny")
    with pytest.raises(PolicyRefusedError):
        await refusing.ask("a", "build", "bash", ["make"], ruleset=ASK_BASH)
    assert decided(events) == [("once", "policy")] and decided(refused) == [("reject", "policy")]


async def test_a_persons_answer_is_the_persons_and_the_requests_its_grant_answers_are_the_grants():
    svc, events = service(tree=Tree())
    first, second = start(svc, session="a"), start(svc, session="b")
    one, _ = await asked(svc, 2)
    svc.reply(one.id, "always")
    await asyncio.gather(first, second)
    assert decided(events) == [("always", "person"), ("always", "grant")]
    later = start(svc, patterns=("cargo build",), always=())
    [request] = await asked(svc)
    svc.reply(request.id, "reject", "not now")
    with pytest.raises(CorrectedError):
        await later
    assert decided(events)[-1] == ("reject", "person")


async def test_a_timeout_a_stop_and_closing_each_name_themselves():
    timed, timed_events = service(timeout_s=0.05)
    with pytest.raises(RejectedError):
        await timed.ask("a", "build", "bash", ["make"], ruleset=ASK_BASH)
    svc, events = service()
    stopped = start(svc)
    await asked(svc)
    await cancel(stopped)
    closed = start(svc, patterns=("ls",))
    await asked(svc)
    svc.close()
    with pytest.raises(RejectedError):
        await closed
    assert decided(timed_events) == [("reject", "timeout")]
    assert decided(events) == [("reject", "stop"), ("reject", "close")]


# ---------------------------------------------------------------------------------------------- hooks and plugins

async def test_a_hooks_allow_answers_what_would_be_asked_but_no_deny_rule():
    svc, events = service()
    rules = from_config({"bash": {"*": "ask", "rm *": "deny"}})
    await svc.ask("a", "build", "bash", ["make"], ruleset=rules, preapproved="a PreToolUse hook")
    assert svc.pending() == [] and events == []
    with pytest.raises(DeniedError):
        await svc.ask("a", "build", "bash", ["rm x"], ruleset=rules, preapproved="a PreToolUse hook")


async def test_a_plugin_answers_an_ask_before_the_person_and_the_record_names_it():
    svc, events = service()
    seen = []

    async def policy_engine(request):
        seen.append(request.patterns)
        return ("plugin acme.policy", "deny" if request.patterns == ["git push"] else "allow")

    svc.deciders.append(policy_engine)
    await svc.ask("a", "build", "bash", ["make"], ruleset=ASK_BASH)
    with pytest.raises(DeniedError) as err:
        await svc.ask("a", "build", "bash", ["git push"], ruleset=ASK_BASH)
    assert "plugin acme.policy denied bash git push" in str(err.value)
    assert seen == [["make"], ["git push"]] and svc.pending() == []
    decided = [(e.reply, e.decided_by, e.reason) for e in events if e.type == "permission.replied"]
    assert decided == [("once", "hook", "allowed by plugin acme.policy"),
                       ("reject", "hook", "denied by plugin acme.policy")]


async def test_a_plugin_that_leaves_it_or_fails_lets_the_person_decide():
    svc, _ = service()

    async def undecided(request):
        return None

    async def broken(request):
        raise RuntimeError("bug")

    svc.deciders += [undecided, broken]
    task = start(svc)
    [request] = await asked(svc)
    svc.reply(request.id, "once")
    await task
