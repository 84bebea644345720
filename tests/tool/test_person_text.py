"""Every tool result says what happened in the person's words (`summary`), beside the text the model reads,
and what a card shows of it holds none of the sentences written for the model."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from opencode_nb.bus import Bus
from opencode_nb.errors import MODEL_TEMPLATES, ToolError
from opencode_nb.question.service import QuestionService
from opencode_nb.tool.base import MAX_OUTPUT_LINES, ToolResult, person_text, truncate
from opencode_nb.tool.bash import BashTool
from opencode_nb.tool.edit import EditTool
from opencode_nb.tool.glob import GlobTool
from opencode_nb.tool.grep import GrepTool
from opencode_nb.tool.list import ListTool
from opencode_nb.tool.notebook_edit import NotebookEditTool
from opencode_nb.tool.notebook_read import NotebookReadTool
from opencode_nb.tool.notebook_run import NotebookRunTool
from opencode_nb.tool.plan import KEEP_PLANNING
from opencode_nb.tool.python import WHERE
from opencode_nb.tool.question import QuestionTool
from opencode_nb.tool.read import ReadTool
from opencode_nb.tool.task import TaskTool
from opencode_nb.tool.todo import TodoReadTool, TodoWriteTool
from opencode_nb.tool.webfetch import WebFetchTool
from opencode_nb.tool.write import WriteTool

from .fakes import RecordingContext
from .memory_notebook import MemoryNotebook
from .test_notebook import sample
from .test_plan import _tool
from .test_plan import workspace as workspace  # the fixture
from .test_webfetch import site as site  # the fixture

MODEL_PHRASES = [
    *MODEL_TEMPLATES, WHERE["live"], KEEP_PLANNING, "Do not carry out", "Use offset", "call it again",
    "Call it again", "then call", "the person", "The person", "Continue with these answers", "task_metadata",
    "Output truncated", "Read it in pieces", "(exit code", "notebook_run", "pass it as task_id",
]
"""Sentences and words that only a text written for the model uses: it is told what the person did and what
to call next; the person is told neither."""


def assert_for_person(result: ToolResult) -> str:
    """The result's summary, checked: present, and free of anything written for the model (so is what the
    card shows of the output)."""
    summary = result.metadata.get("summary")
    assert isinstance(summary, str) and summary.strip(), f"{result.title}: no summary"
    shown = person_text(result.output, result.metadata)
    for phrase in MODEL_PHRASES:
        assert phrase not in summary, (phrase, summary)
        assert phrase not in shown, (phrase, shown)
    return summary


@pytest.mark.parametrize(("tool", "raw", "summary"), [
    (ReadTool(), {"path": "src/stats.py"}, "All 2 lines"),
    (ReadTool(), {"path": "src/stats.py", "offset": 2}, "Lines 2–2 of 2"),
    (ReadTool(), {"path": "src/stats.py", "limit": 1}, "Lines 1–1 of 2"),
    (WriteTool(), {"path": "notes.md", "content": "a\nb\n"}, "Created notes.md (2 lines)"),
    (EditTool(), {"path": "README.md", "old_string": "demo", "new_string": "Demo"}, "Edited README.md: +1 −1 lines"),
    (GlobTool(), {"pattern": "**/*.py"}, "3 files match"),
    (GlobTool(), {"pattern": "**/*.nothing"}, "No files match **/*.nothing in ."),
    (GrepTool(), {"pattern": "def mean"}, "2 matches in 2 files"),
    (GrepTool(), {"pattern": "no such text"}, "No matches"),
    (ListTool(), {"path": "src"}, "4 files"),
    (TodoWriteTool(), {"todos": [{"content": "Load `sales.csv`", "status": "completed"}, {"content": "Plot it"}]},
     "Updated the todo list: 1 of 2 done"),
    (TodoReadTool(), {}, "Read the todo list: it is empty"),
    (BashTool(), {"command": "echo hello && exit 3", "description": "Say hello"}, "Exit code 3"),
])
async def test_each_tool_says_what_it_did_in_the_persons_words(tree, tool, raw, summary):
    result = await tool.run(raw, RecordingContext(tree))
    assert assert_for_person(result) == summary


async def test_a_file_read_shows_its_lines_without_the_note_on_how_to_read_on(ctx):
    result = await ReadTool().run({"path": "src/stats.py", "limit": 1}, ctx)
    assert "Use offset=2 to continue" in result.output
    assert person_text(result.output, result.metadata) == "     1\tdef mean(values):"


async def test_a_command_shows_what_it_printed_and_not_the_exit_note(ctx):
    result = await BashTool().run({"command": "echo hello && exit 3"}, ctx)
    assert "(exit code 3)" in result.output
    assert person_text(result.output, result.metadata) == "hello"


async def test_writes_and_edits_show_their_diff_and_nothing_else(ctx):
    result = await WriteTool().run({"path": "notes.md", "content": "x\n"}, ctx)
    assert result.metadata["person_output"] == "" and result.metadata["diff"]


async def test_an_answered_question_is_summed_up_with_the_persons_answers(project):
    service = QuestionService(Bus())
    task = asyncio.create_task(QuestionTool().run(
        {"questions": [{"question": "Which chart?", "options": [{"label": "Bar"}, {"label": "Line"}]}]},
        RecordingContext(project, questions=service)))
    while not service.pending():
        await asyncio.sleep(0.01)
    threading.Thread(target=service.reply, args=(service.pending()[0].id, [["Line"]])).start()
    result = await asyncio.wait_for(task, 2)
    assert "The person answered your questions" in result.output
    assert assert_for_person(result) == "You answered: Line"


class FixedTasks:
    """A subagent runner that answers at once with `text`."""

    def __init__(self, text: str) -> None:
        self.text = text

    async def run(self, **_: Any) -> tuple[str, str]:
        return "ses_child", self.text


async def test_a_task_answer_is_shown_as_markdown_without_the_block_for_the_model(ctx):
    answer = "| region | total |\n|---|---|\n| north | 3 |"
    ctx.tasks = FixedTasks(answer)
    result = await TaskTool().run({"description": "Sum by region", "prompt": "sum", "subagent_type": "general"},
                                  ctx)
    assert "<task_metadata>" in result.output
    assert assert_for_person(result) == "@general answered"
    assert person_text(result.output, result.metadata) == answer and result.metadata["markdown"] is True


async def test_a_fetched_page_in_markdown_renders_as_markdown(ctx, site):
    result = await WebFetchTool().run({"url": f"{site}/doc"}, ctx)
    assert assert_for_person(result).endswith("as markdown") and result.metadata["markdown"] is True
    assert person_text(result.output, result.metadata) == result.output


async def test_the_notebook_tools_say_what_they_did_to_the_notebook(ctx):
    ctx.notebook = sample()
    read = await NotebookReadTool().run({}, ctx)
    assert assert_for_person(read) == "Read 5 of the notebook's 5 cells"
    edit = await NotebookEditTool().run({"action": "insert", "source": "x = 1", "after": "total"}, ctx)
    assert assert_for_person(edit) == "Inserted code cell [new1] below cell total, not run yet"
    ran = await NotebookRunTool().run({"cell_ids": ["load"]}, ctx)
    assert assert_for_person(ran) == "Ran [load] in your kernel; the outputs are in the notebook"


async def test_an_approved_plan_is_shown_as_the_plan_and_not_as_the_instructions_to_the_model(workspace):
    notebook = MemoryNotebook(["%%agent --agent plan\nplan a greeting"], calling="cell-0")
    ws, _, _ = workspace(notebook=notebook)
    session = ws.sessions.create()
    await ws.prompt(session.id, "plan a greeting", agent="plan")
    state = _tool(ws, session.id, "plan_exit").state
    assert "Do not carry out any step now" in state.output
    result = ToolResult(state.title, state.output, state.metadata)
    assert assert_for_person(result) == "Saved the plan as 2 steps in cells below, running now, one after another"
    assert state.metadata["person_output"].startswith("# Greet") and state.metadata["markdown"] is True


async def test_saying_no_to_a_plan_is_summed_up_for_the_person(workspace):
    ws, _, _ = workspace(notebook=MemoryNotebook(["%%agent --agent plan\nplan"], calling="cell-0"), answer="No")
    session = ws.sessions.create()
    await ws.prompt(session.id, "plan a greeting", agent="plan")
    state = _tool(ws, session.id, "plan_exit").state
    assert state.status == "error" and state.error == KEEP_PLANNING
    assert state.metadata["summary"] == "You chose to keep planning"


def test_a_cut_output_shows_the_person_where_the_whole_is_and_not_how_the_model_should_read_it(ctx):
    long = "\n".join(f"row {i}" for i in range(MAX_OUTPUT_LINES + 50))
    cut = truncate(ToolResult("t", long, {"summary": "rows"}), ctx)
    shown = person_text(cut.output, cut.metadata)
    assert "Read it in pieces" in cut.output and "Read it in pieces" not in shown
    assert shown.startswith("row 0\n") and shown.endswith(f"the whole output is saved in {cut.metadata['output_path']}")
    tail = truncate(ToolResult("t", long, {}), ctx, keep="tail")
    shown = person_text(tail.output, tail.metadata)
    assert shown.startswith("… the beginning is cut") and shown.endswith(f"row {MAX_OUTPUT_LINES + 49}")


async def test_a_call_with_invalid_arguments_says_which_for_the_person(ctx):
    with pytest.raises(ToolError) as raised:
        await ReadTool().run({"offset": "x"}, ctx)
    assert "Rewrite the input" in str(raised.value)
    assert raised.value.summary == "Not run: the agent's call had invalid arguments (offset, path)"
