"""The loop through the scripted provider: the same code path real models take."""

import asyncio
import contextlib
import time

from pydantic import BaseModel

from opencode_nb.provider.request import ToolResultBlock
from opencode_nb.tool.base import Tool, ToolContext, ToolResult


class NapParams(BaseModel):
    seconds: float
    name: str = ""


class NapTool(Tool[NapParams]):
    """Sleeps, recording when each call started and ended, so tests can see calls overlap."""

    id = "nap"
    params = NapParams
    description = "Sleeps for a while."  # type: ignore[assignment]

    def __init__(self) -> None:
        self.spans: list[tuple[float, float]] = []

    async def execute(self, params: NapParams, ctx: ToolContext) -> ToolResult:
        start = time.monotonic()
        await asyncio.sleep(params.seconds)
        self.spans.append((start, time.monotonic()))
        return ToolResult(params.name or "nap", f"slept {params.seconds}")


def results_in(request) -> list[ToolResultBlock]:
    return [b for m in request.messages if m.role == "tool" for b in m.content]


async def test_a_text_answer_ends_the_run_and_everything_is_stored(h):
    h.script({"text": "The mean is computed in stats.py."})
    final = await h.prompt("Where is the mean computed?")
    assert final.finish == "stop" and final.agent == "build" and final.model == "scripted/demo"
    [text] = h.parts("text")[1:]
    assert text.text == "The mean is computed in stats.py."
    assert [p.type for p in h.parts()] == ["text", "step-start", "text", "step-finish"]
    assert h.of("session.status")[-1].status == "idle"


async def test_tool_calls_run_and_their_results_reach_the_next_request(h):
    h.script({"tool_calls": [{"name": "read", "input": {"path": "stats.py"}}]}, {"text": "Read it."})
    await h.prompt()
    [tool] = h.tool_parts()
    assert tool.state.status == "completed" and "def mean" in tool.state.output
    [result] = results_in(h.step_requests()[1])
    assert result.call_id == tool.call_id and "def mean" in result.output


async def test_several_calls_in_one_response_run_concurrently(h):
    nap = NapTool()
    h.ws.tools.register(nap)
    h.script({"tool_calls": [{"name": "nap", "input": {"seconds": 0.3, "name": n}} for n in "abc"]}, {"text": "ok"})
    await h.prompt()
    starts, ends = zip(*nap.spans, strict=True)
    assert max(starts) < min(ends)  # every call started before any finished


async def test_mistakes_come_back_to_the_model_as_error_results_and_the_loop_goes_on(h):
    h.script(
        {"tool_calls": [
            {"name": "reed", "input": {"path": "x"}},
            {"name": "read", "input": '{"path": '},
            {"name": "read", "input": {"file": "stats.py"}},
            {"name": "read", "input": {"path": "nope.py"}},
        ]},
        {"text": "I will correct myself."},
    )
    final = await h.prompt()
    assert final.finish == "stop"
    errors = [p.state.error for p in h.tool_parts()]
    assert "There is no tool named 'reed'" in errors[0] and "read" in errors[0]
    assert "not a valid JSON object" in errors[1]
    assert "- path: Field required" in errors[2]
    assert "File not found" in errors[3]
    assert all(r.is_error for r in results_in(h.step_requests()[1]))


async def test_a_denied_call_is_a_result_the_model_reads(make):
    h = make({"permission": {"bash": {"rm *": "deny"}}})
    h.script({"tool_calls": [{"name": "bash", "input": {"command": "rm -rf data"}}]}, {"text": "Understood."})
    final = await h.prompt()
    [tool] = h.tool_parts()
    assert "prevents you from using this specific tool call" in tool.state.error
    assert final.finish == "stop" and len(h.step_requests()) == 2


def answer_permissions(h, reply, message=None):
    def on_ask(event):
        asyncio.get_running_loop().call_soon(h.ws.permissions.reply, event.request.id, reply, message)

    h.ws.bus.subscribe("permission.asked", on_ask)


async def test_a_plain_rejection_stops_the_run_after_the_step(make):
    h = make({"permission": {"edit": "ask"}})
    answer_permissions(h, "reject")
    h.script({"tool_calls": [{"name": "write", "input": {"path": "x.txt", "content": "x"}}]},
             {"text": "never asked for"})
    await h.prompt()
    assert "rejected permission" in h.tool_parts()[0].state.error
    assert len(h.step_requests()) == 1 and not (h.root / "x.txt").exists()


async def test_a_rejection_with_feedback_reaches_the_model_and_the_run_goes_on(make):
    h = make({"permission": {"edit": "ask"}})
    answer_permissions(h, "reject", "write to notes/ instead")
    h.script({"tool_calls": [{"name": "write", "input": {"path": "x.txt", "content": "x"}}]}, {"text": "Will do."})
    final = await h.prompt()
    assert final.finish == "stop" and len(h.step_requests()) == 2
    [result] = results_in(h.step_requests()[1])
    assert result.output.endswith("with the following feedback: write to notes/ instead")


async def test_the_step_limit_forces_a_text_answer_without_tools(make):
    h = make({"agent": {"build": {"steps": 2}}})
    h.script({"tool_calls": [{"name": "list", "input": {}}]}, {"text": "Summary: listed files; nothing else done."})
    final = await h.prompt()
    first, last = h.step_requests()
    assert first.tool_choice == "auto" and last.tool_choice == "none"
    assert "MAXIMUM STEPS REACHED" in last.messages[-1].content[0].text
    assert final.finish == "stop" and len(h.step_requests()) == 2


async def test_calls_made_anyway_on_the_last_step_are_refused_and_the_run_ends(make):
    h = make({"agent": {"build": {"steps": 1}}})
    h.script({"tool_calls": [{"name": "list", "input": {}}]}, {"text": "never"})
    await h.prompt()
    assert "Tools are disabled" in h.tool_parts()[0].state.error and len(h.step_requests()) == 1


async def test_the_same_call_three_times_in_a_row_asks_about_a_doom_loop(h):
    asked = []

    def on_ask(event):
        asked.append(event.request)
        asyncio.get_running_loop().call_soon(h.ws.permissions.reply, event.request.id, "reject")

    h.ws.bus.subscribe("permission.asked", on_ask)
    same = {"tool_calls": [{"name": "glob", "input": {"pattern": "*.py"}}]}
    h.script(same, same, same, {"text": "never"})
    await h.prompt()
    assert [(r.permission, r.patterns) for r in asked] == [("doom_loop", ["glob"])]
    assert [p.state.status for p in h.tool_parts()] == ["completed", "completed", "error"]
    assert len(h.step_requests()) == 3


async def test_retryable_failures_are_retried_with_a_visible_status_then_succeed(h):
    h.ws.loop.retry = h.ws.loop.retry.__class__(base_s=0.01, cap_s=0.05)
    h.script({"error": {"status": 529, "kind": "overloaded"}},
             {"error": {"status": 429, "kind": "rate_limit", "retry_after_s": 0.02}},
             {"text": "Third time lucky."})
    final = await h.prompt()
    assert final.finish == "stop" and final.error is None
    retries = [e for e in h.of("session.status") if e.status == "retry"]
    assert [e.attempt for e in retries] == [1, 2] and retries[1].next_at is not None
    assert [r.tool_choice for r in h.step_requests()] == ["auto"] * 3


async def test_retries_give_up_after_the_limit_with_the_error_recorded(h):
    h.ws.loop.retry = h.ws.loop.retry.__class__(max_attempts=2, base_s=0.01)
    h.script(*[{"error": {"status": 500, "message": "boom"}}] * 3)
    final = await h.prompt()
    assert final.error is not None and final.error.kind == "provider" and "boom" in final.error.message
    assert len(h.step_requests()) == 2 and h.of("session.error")


async def test_a_failure_that_cannot_succeed_is_recorded_without_retrying(h):
    h.script({"error": {"status": 401, "retryable": False, "kind": "auth", "message": "bad key"}})
    final = await h.prompt()
    assert final.error.kind == "auth" and len(h.step_requests()) == 1


async def test_abort_stops_streaming_fast_marks_running_tools_and_leaves_the_session_usable(h):
    h.script({"text": "Starting a long job now. " * 4, "delay": 0.02,
              "tool_calls": [{"name": "bash", "input": {"command": "sleep 20"}}]})
    run = asyncio.create_task(h.prompt())
    while not any(p.type == "tool" and p.state.status == "running" for p in h.parts()):
        await asyncio.sleep(0.02)
    started = time.monotonic()
    assert h.ws.abort(h.session.id)
    final = await run
    assert time.monotonic() - started < 0.5
    assert final.finish == "aborted" and final.error.kind == "aborted"
    [tool] = h.tool_parts()
    assert tool.state.status == "error" and tool.state.error == "Tool execution aborted"
    assert "Starting a long job now." in h.parts("text")[1].text
    h.script({"text": "Back again."})
    again = await h.prompt("continue")
    assert again.finish == "stop"
    [result] = results_in(h.step_requests()[-1])
    assert result.is_error and "aborted" in result.output


async def test_abort_while_streaming_text_keeps_what_arrived(h):
    h.script({"text": "word " * 200, "delay": 0.01})
    run = asyncio.create_task(h.prompt())
    while len(h.parts("text")) < 2:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    h.ws.abort(h.session.id)
    final = await run
    assert final.finish == "aborted"
    kept = h.parts("text")[1].text
    assert 0 < len(kept) < len("word " * 200)


async def test_cancelling_the_caller_also_stops_the_run(h):
    h.script({"text": "slow " * 100, "delay": 0.02})
    run = asyncio.create_task(h.prompt())
    await asyncio.sleep(0.1)
    run.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await run
    await asyncio.sleep(0.05)
    assert not h.ws.loop.busy(h.session.id)


async def test_the_agent_of_the_newest_user_message_answers_and_is_remembered(h):
    h.script({"text": "planning"}, {"text": "still planning"}, {"text": "building"})
    assert (await h.prompt("plan it", agent="plan")).agent == "plan"
    assert (await h.prompt("and?")).agent == "plan"
    assert (await h.prompt("do it", agent="build")).agent == "build"
    assert "Plan mode is active" in h.step_requests()[0].messages[-1].content[0].text
    assert "changed from plan to build" in h.step_requests()[2].messages[-1].content[0].text


async def test_a_plan_agent_cannot_write_outside_its_plan_files(h):
    h.script({"tool_calls": [{"name": "write", "input": {"path": "stats.py", "content": "x"}}]}, {"text": "ok"})
    await h.prompt("plan", agent="plan")
    assert "prevents you from using this specific tool call" in h.tool_parts()[0].state.error


async def test_history_is_converted_once_and_reused_across_steps(h):
    h.script(*[{"tool_calls": [{"name": "list", "input": {"ignore": [p]}}]} for p in "abc"], {"text": "done"})
    await h.prompt()
    requests = h.step_requests()
    assert requests[3].messages[0] is requests[1].messages[0]
    assert requests[3].messages[2] is requests[2].messages[2]


async def test_the_system_prompt_has_the_environment_and_the_project_instructions(h):
    (h.root / "AGENTS.md").write_text("Always use pandas idioms.")
    h.script({"text": "ok"})
    await h.prompt()
    system = "\n".join(h.step_requests()[0].system)
    assert f"Working directory: {h.root}" in system and "Is directory a git repo: yes" in system
    assert f"Instructions from: {h.root / 'AGENTS.md'}\nAlways use pandas idioms." in system
    assert "stats.py" in system  # the bounded file tree


async def test_the_session_is_titled_after_the_first_exchange_without_delaying_it(h):
    h.script({"text": "Done."})
    await h.prompt("Fix the mean function in stats.py")
    await h.ws.loop.titles.wait()
    assert h.ws.sessions.get(h.session.id).title == "Fix the mean function in stats.py"


async def test_cost_is_recorded_per_step_and_totalled_on_the_session(make):
    h = make({"provider": {"scripted": {"models": {"demo": {"cost": {"input": 1000.0, "output": 2000.0}}}}}})
    h.script({"tool_calls": [{"name": "list", "input": {}}], "usage": {"input": 1000, "output": 100}},
             {"text": "ok", "usage": {"input": 2000, "output": 10}})
    await h.prompt()
    finishes = h.parts("step-finish")
    assert [round(p.cost, 6) for p in finishes] == [1.2, 2.02]
    assert round(h.ws.sessions.get(h.session.id).cost, 6) == 3.22


async def test_a_second_prompt_to_a_busy_session_waits_its_turn(h):
    h.script({"text": "first " * 20, "delay": 0.01}, {"text": "second"})
    one = asyncio.create_task(h.prompt("one"))
    await asyncio.sleep(0.05)
    two = asyncio.create_task(h.prompt("two"))
    _first, second = await asyncio.gather(one, two)
    messages = [m.message for m in h.ws.sessions.messages(h.session.id)]
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert second.message.parent_id == messages[2].id


async def test_redacted_thinking_is_kept_and_sent_back(h):
    from opencode_nb.provider.events import ReasoningEnd, StepFinish, TextDelta, ToolCall, ToolCallStart

    class Redacting:
        def __init__(self):
            self.requests = []

        async def stream(self, request):
            self.requests.append(request)
            if len(self.requests) == 1:
                yield ReasoningEnd(metadata={"redacted": "opaque-blob"})
                yield ToolCallStart(id="c1", name="list")
                yield ToolCall(id="c1", name="list", input={})
                yield StepFinish(reason="tool-calls")
            else:
                yield TextDelta(text="done")
                yield StepFinish(reason="stop")

    provider = Redacting()
    h.ws.providers.register("scripted", provider)
    await h.prompt("go")
    [reasoning] = h.parts("reasoning")
    assert reasoning.text == "" and reasoning.metadata == {"redacted": "opaque-blob"}
    sent = [b for m in provider.requests[1].messages if m.role == "assistant" for b in m.content]
    assert sent[0].type == "reasoning" and sent[0].metadata == {"redacted": "opaque-blob"}


async def test_a_tool_call_gets_the_runs_services_as_typed_context_fields(h):
    from pydantic import BaseModel

    from opencode_nb.tool.base import Tool, ToolResult

    seen = []

    class NoParams(BaseModel):
        pass

    class Probe(Tool[NoParams]):
        id = "probe"
        params = NoParams
        description = "Report what the context holds."

        async def execute(self, params, ctx):
            seen.append(ctx)
            return ToolResult("probe", "ok")

    from types import SimpleNamespace

    bridge = SimpleNamespace(language="python", notebook_path=None, user_ns={})
    h.ws.tools.register(Probe())
    h.ws.kernel = bridge  # what the kernel extension sets
    h.script({"tool_calls": [{"name": "probe", "input": {}}]}, {"text": "done"})
    await h.prompt()
    [ctx] = seen
    assert ctx.tasks is h.ws.loop.subtasks and callable(ctx.switch_agent)
    assert ctx.model == "scripted/demo" and ctx.kernel is bridge
    assert ctx.plan_path == f".opencode/plans/{h.session.slug}.md"
    assert ctx.todos is h.ws.sessions and ctx.questions is h.ws.questions and ctx.directory == h.ws.root


async def test_in_a_kernel_the_system_prompt_names_the_notebook_and_its_variables_and_mentions_attach_them(h):
    from types import SimpleNamespace

    h.ws.kernel = SimpleNamespace(language="python", notebook_path="analysis.ipynb",
                                  user_ns={"readings": [3, 1, 2], "cfg": {"unit": "C"}, "_hidden": 1})
    h.script({"text": "Seen."})
    await h.prompt('compare @readings with @cfg["unit"] and @nothing_here')
    [request] = h.step_requests()
    system = "\n".join(request.system)
    assert "live Jupyter kernel (python) for the notebook analysis.ipynb" in system
    assert "readings" in system and "cfg" in system and "_hidden" not in system
    attached = [p.text for p in h.parts("text") if p.synthetic]
    assert any(t.startswith("The person mentioned @readings") and "3" in t for t in attached)
    assert any(t.startswith('The person mentioned @cfg["unit"]') for t in attached)
    assert not any("nothing_here" in t for t in attached)
