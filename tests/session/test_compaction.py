from opencode_nb.config import CompactionConfig
from opencode_nb.provider import model_info
from opencode_nb.session.compaction import prune, request_tokens, usable_tokens
from opencode_nb.session.history import History
from opencode_nb.session.models import (
    AssistantMessage,
    CompactionPart,
    MessageWithParts,
    ToolCompleted,
    ToolPart,
    UserMessage,
)

SMALL = {"provider": {"scripted": {"models": {"demo": {"context": 6000, "output": 1000}}}}}


def long_session_model(steps: int):
    """Reads a different window of a file each step for `steps` steps, then answers; summarizes on request."""
    state = {"n": 0}

    def respond(request):
        if request.purpose == "compaction":
            return {"text": "## Goal\nRead the whole file.\n## Done\nRead many windows."}
        state["n"] += 1
        if state["n"] > steps:
            return {"text": "Finished reading."}
        return {"tool_calls": [{"name": "read", "input": {"path": "big.txt", "offset": state["n"] * 40,
                                                          "limit": 40}}]}

    return respond


async def test_a_long_session_never_sends_a_request_over_the_context_limit(make):
    h = make(SMALL)
    (h.root / "big.txt").write_text("\n".join(f"row {i}: " + "value " * 8 for i in range(5000)))
    h.model.respond = long_session_model(150)
    final = await h.prompt("Read big.txt window by window.")
    assert final.finish == "stop"
    model = h.ws.providers.resolve("scripted/demo")[1]
    sizes = [request_tokens(r.messages, r.system) for r in h.model.requests if r.purpose != "title"]
    assert max(sizes) < model.context
    summaries = [m.message for m in h.ws.sessions.messages(h.session.id)
                 if isinstance(m.message, AssistantMessage) and m.message.summary]
    assert summaries and all(s.finish == "stop" for s in summaries)
    # after a summary the model sees it instead of the history before it
    last = [r for r in h.model.requests if r.purpose == "step"][-1]
    texts = [b.text for m in last.messages for b in m.content if b.type == "text"]
    assert "What did we do so far?" in texts[0] and "## Goal" in texts[1]


async def test_a_requested_compaction_summarizes_without_another_model_turn(h):
    h.script({"tool_calls": [{"name": "list", "input": {}}]}, {"text": "Listed."}, {"text": "## Goal\nsummary"})
    await h.prompt("list files")
    part = CompactionPart(session_id=h.session.id, message_id="placeholder", auto=False)
    final = await h.prompt("", parts=[part])
    assert final.summary and final.agent == "compaction"
    messages = [m.message for m in h.ws.sessions.messages(h.session.id)]
    assert messages[-1].summary and messages[-1].finish == "stop"
    assert [r.purpose for r in h.model.requests if r.purpose != "title"][-1] == "compaction"
    h.script({"text": "continuing"})
    await h.prompt("what next?")
    last = h.step_requests()[-1]
    assert len(last.messages) == 3  # the compaction question, the summary, the new prompt


def completed(session_id, message_id, output):
    return ToolPart(session_id=session_id, message_id=message_id, call_id=message_id + "c", tool="read",
                    state=ToolCompleted(input={}, output=output, started_at=0.0))


def test_pruning_clears_old_tool_outputs_but_keeps_the_recent_turns():
    items = []
    for turn in range(6):
        user = UserMessage(session_id="s", agent="build")
        reply = AssistantMessage(session_id="s", parent_id=user.id, agent="build", model="x/y", finish="stop")
        items += [MessageWithParts(message=user), MessageWithParts(message=reply, parts=[
            completed("s", reply.id, f"turn {turn} " + "x" * 4000)])]
    history = History(items)
    pruned = prune(history, protect=1500, minimum=500)
    turns = sorted(int(p.state.output.split()[1]) for p in pruned)
    assert turns == [0, 1, 2]  # turns 4 and 5 are the newest two; turn 3 fits in the protected budget
    assert all(p.state.compacted_at is not None for p in pruned)


def test_pruning_does_nothing_when_it_would_free_too_little():
    user = UserMessage(session_id="s", agent="build")
    items = [MessageWithParts(message=user)]
    for _ in range(3):
        reply = AssistantMessage(session_id="s", parent_id=user.id, agent="build", model="x/y", finish="stop")
        items.append(MessageWithParts(message=reply, parts=[completed("s", reply.id, "short")]))
    assert prune(History(items), protect=1, minimum=1000) == []


def test_the_usable_window_leaves_room_for_the_answer():
    model = model_info("anthropic", "claude-sonnet-4-5")
    assert usable_tokens(model, CompactionConfig()) == 200_000 - 32_000
    assert usable_tokens(model, CompactionConfig(reserved=10_000)) == 190_000
