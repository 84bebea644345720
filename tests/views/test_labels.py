"""Every view names a tool call by the same words: its title, else a label from its input."""

from __future__ import annotations

from opencode_nb.session.models import ToolErrored, ToolPart, ToolPending, ToolRunning
from opencode_nb.views.labels import call_title, task_heading, tool_title
from opencode_nb.views.run_frame import child_title


def test_a_call_is_labelled_by_the_first_field_that_names_what_it_works_on():
    assert call_title({"path": "a.py", "description": "read it"}) == "a.py"
    assert call_title({"command": "make test", "description": "run the tests"}) == "make test"
    assert call_title({"pattern": "def mean"}) == "def mean"
    assert call_title({"url": "https://example.org"}) == "https://example.org"
    assert call_title({"description": "Survey"}) == "Survey"
    assert call_title({"todos": []}) == ""


def test_a_tool_title_wins_over_the_label_from_its_input():
    running = ToolPart(session_id="s", message_id="m", call_id="c", tool="bash",
                       state=ToolRunning(input={"command": "make"}, title="Build the project"))
    assert tool_title(running) == "Build the project"
    failed = running.model_copy(update={"state": ToolErrored(input={"command": "make"}, error="x", started_at=1.0)})
    assert tool_title(failed) == "make", "an error has no title: the input names the call"
    assert tool_title(running.model_copy(update={"state": ToolPending()})) == ""


def test_a_child_section_names_a_running_call_without_a_title_from_its_input():
    tools = [{"tool": "read", "status": "completed", "title": "README.md", "input": {"path": "README.md"}},
             {"tool": "grep", "status": "running", "title": "", "input": {"pattern": "def mean"}}]
    assert child_title("explore", "Survey", tools, "running") == "@explore — Survey · 2 tools, running: grep def mean"


def test_a_child_section_prefers_the_title_the_tool_gave_its_call():
    tools = [{"tool": "bash", "status": "running", "title": "Run the tests", "input": {"command": "pytest -x"}}]
    assert child_title("general", "Check", tools, "running").endswith("running: bash Run the tests")


def test_summaries_stored_without_the_calls_input_still_read():
    assert child_title("explore", "Survey", [{"tool": "glob", "status": "running", "title": ""}], "running") == \
        "@explore — Survey · 1 tool, running: glob"
    assert child_title("explore", "Survey", [{"tool": "glob", "status": "running", "title": "*.py"}], "running") \
        .endswith("running: glob *.py")


def test_a_task_call_is_headed_by_its_subagent_and_description():
    state = ToolRunning(input={"description": "Survey", "prompt": "look", "subagent_type": "explore"})
    part = ToolPart(session_id="s", message_id="m", call_id="c", tool="task", state=state)
    assert task_heading(part) == ("explore", "Survey")
    resumed = part.model_copy(update={"state": state.model_copy(update={"metadata": {"agent": "general"}})})
    assert task_heading(resumed) == ("general", "Survey"), "the agent that actually runs, once the call says"
    assert task_heading(part.model_copy(update={"state": ToolPending()})) == ("?", "")
