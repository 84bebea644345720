"""Rules for one answer only (`UserMessage.permission`): checked after the agent's and the session's, kept for
every step of that answer and for a mode switch inside it, and gone at the next prompt."""

from __future__ import annotations

from opencode_nb.permission.rules import Rule

NO_EDITS = [Rule(permission="edit", pattern="*", action="deny"), Rule(permission="bash", pattern="*", action="deny")]


def offered(request) -> set[str]:
    return {spec.name for spec in request.tools}


async def test_a_tool_its_answer_denies_is_not_offered_for_any_step_of_it_and_is_back_at_the_next_prompt(h):
    h.script({"tool_calls": [{"name": "read", "input": {"path": "stats.py"}}]}, {"text": "Read it."},
             {"text": "Again."})
    await h.prompt("look", permission=NO_EDITS)
    first, second = h.step_requests()
    assert not offered(first) & {"edit", "write", "bash"} and not offered(second) & {"edit", "write", "bash"}
    assert "read" in offered(first)
    await h.prompt("and now")
    assert {"edit", "write", "bash"} <= offered(h.step_requests()[-1])


async def test_the_answers_rules_are_stored_with_its_message(h):
    h.script({"text": "ok"})
    await h.prompt("look", permission=NO_EDITS)
    [user] = [m.message for m in h.ws.sessions.messages(h.session.id) if m.message.role == "user"]
    assert user.permission == NO_EDITS and user.list_variables is True
