"""The plain-text transcript: what a terminal shows of a session, in the same words as the notebook's views."""

from __future__ import annotations

import io

from opencode_nb.bus import Bus
from opencode_nb.permission.events import PermissionReplied
from opencode_nb.session.events import MessagePartUpdated, MessageUpdated, SessionCreated, SessionStatus, TodoUpdated
from opencode_nb.session.models import (
    AssistantMessage,
    ReasoningPart,
    Session,
    TextPart,
    ToolCompleted,
    ToolErrored,
    ToolPart,
    ToolRunning,
    UserMessage,
)
from opencode_nb.views.render import TEXT_OUTPUT_CHARS, tool_card_html, tool_card_text
from opencode_nb.views.text import TextTranscript


def transcript() -> tuple[Bus, io.StringIO]:
    bus, out = Bus(), io.StringIO()
    TextTranscript(bus, out)
    return bus, out


def tool(state, name: str = "bash", session_id: str = "s") -> ToolPart:
    return ToolPart(session_id=session_id, message_id="m", call_id="c", tool=name, state=state)


def test_a_finished_call_prints_as_its_card_does():
    bus, out = transcript()
    part = tool(ToolCompleted(input={"command": "make"}, output="\n".join(f"line {i}" for i in range(9)),
                              title="Build", started_at=1.0, ended_at=2.5))
    bus.publish(MessagePartUpdated(part=part))
    assert out.getvalue() == "".join(f"  {line}\n" for line in tool_card_text(part).splitlines())
    assert out.getvalue().startswith("  ✓ bash Build  (1.5s)\n      line 0\n")
    assert out.getvalue().endswith("      line 5\n      … 3 more lines\n")


def test_a_failed_call_is_named_and_timed_as_its_card_names_and_times_it():
    bus, out = transcript()
    part = tool(ToolErrored(input={"command": "make"}, error="make: *** No rule", started_at=1.0, ended_at=63.0))
    bus.publish(MessagePartUpdated(part=part))
    assert out.getvalue() == "  ✗ bash make  (1m02s)\n      make: *** No rule\n"
    assert "make" in tool_card_html(part) and "✗ 1m02s" in tool_card_html(part)


def test_long_output_lines_are_clipped_as_in_the_saved_transcript():
    bus, out = transcript()
    part = tool(ToolCompleted(input={"path": "a.py"}, output="x" * 500, started_at=1.0, ended_at=1.0), name="read")
    bus.publish(MessagePartUpdated(part=part))
    assert out.getvalue().splitlines()[1] == "      " + tool_card_text(part).splitlines()[1].strip()


def test_a_long_line_of_words_is_cut_after_a_whole_word_with_an_ellipsis():
    bus, out = transcript()
    sentence = " ".join(["To confine them, install bubblewrap and run again."] * 6)
    part = tool(ToolCompleted(input={"command": "make"}, output=sentence, started_at=1.0, ended_at=1.0))
    bus.publish(MessagePartUpdated(part=part))
    shown = out.getvalue().splitlines()[1].strip()
    assert shown.endswith("…") and len(shown) <= TEXT_OUTPUT_CHARS
    assert sentence.startswith(shown[:-1]) and sentence[len(shown) - 1] in " .,"


def test_reasoning_is_cut_after_a_whole_word_with_an_ellipsis():
    bus, out = transcript()
    thought = "I should look at the configuration before touching the tests. " * 8
    bus.publish(MessagePartUpdated(part=ReasoningPart(session_id="s", message_id="m", text=thought, ended_at=2.0)))
    shown = out.getvalue().strip().removeprefix("(thinking) ")
    assert shown.endswith("…") and thought.startswith(shown[:-1]) and thought[len(shown) - 1] in " .,"


def test_a_call_prints_once_however_often_it_is_published():
    bus, out = transcript()
    part = tool(ToolCompleted(input={"command": "ls"}, output="a", started_at=1.0, ended_at=1.0))
    bus.publish(MessagePartUpdated(part=part))
    bus.publish(MessagePartUpdated(part=part))
    assert out.getvalue().count("✓ bash ls") == 1


def test_a_task_is_announced_as_it_starts_and_its_child_prints_indented_under_it():
    bus, out = transcript()
    task = tool(ToolRunning(input={"description": "Survey", "prompt": "look", "subagent_type": "explore"}), "task")
    bus.publish(MessagePartUpdated(part=task))
    bus.publish(SessionCreated(session=Session(id="child", parent_id="s", directory=".")))
    bus.publish(MessagePartUpdated(part=tool(ToolCompleted(input={"pattern": "*"}, output="a.py", started_at=1.0,
                                                           ended_at=1.0), "glob", session_id="child")))
    assert out.getvalue() == "  ▸ task @explore — Survey\n        ✓ glob *  (0.0s)\n            a.py\n"


def test_who_speaks_is_named_and_the_persons_prompt_is_marked_as_theirs():
    bus, out = transcript()
    bus.publish(MessageUpdated(message=UserMessage(id="u", session_id="s", agent="build")))
    bus.publish(MessageUpdated(message=AssistantMessage(id="a", session_id="s", parent_id="u", agent="plan",
                                                        model="scripted/t")))
    bus.publish(MessagePartUpdated(part=TextPart(session_id="s", message_id="u", text="Fix it")))
    bus.publish(MessagePartUpdated(part=TextPart(session_id="s", message_id="a", text="Planning.", ended_at=1.0)))
    assert out.getvalue() == "you: Fix it\n\nplan: Planning.\n\n"


def test_permission_replies_todos_and_retries_are_printed_in_the_views_words():
    bus, out = transcript()
    bus.publish(PermissionReplied(session_id="s", request_id="p", reply="reject", reason="timeout"))
    bus.publish(TodoUpdated(session_id="s", todos=[{"content": "Fix", "status": "in_progress"}]))
    bus.publish(SessionStatus(session_id="s", status="retry", attempt=2, message="overloaded"))
    bus.publish(SessionStatus(session_id="s", status="busy"))
    assert out.getvalue() == ("  ? permission rejected (timeout)\n  todo list:\n      [~] Fix\n"
                              "  … retrying (attempt 2): overloaded\n")


def test_what_hooks_say_for_the_person_is_printed_with_the_event():
    from opencode_nb.session.events import HookReported

    bus, out = transcript()
    bus.publish(HookReported(session_id="s", event="PreToolUse",
                             lines=['PreToolUse hook "sleep 30" timed out after 1 s and was stopped']))
    assert '⚑ PreToolUse hook: PreToolUse hook "sleep 30" timed out after 1 s and was stopped' in out.getvalue()
