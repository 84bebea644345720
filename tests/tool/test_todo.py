import pytest

from opencode_nb.errors import DeniedError, ToolError
from opencode_nb.session.events import Todo
from opencode_nb.tool.todo import TodoReadTool, TodoWriteTool

from .fakes import RecordingContext

TODOS = [{"content": "Load the data", "status": "completed"},
         {"content": "Plot sales", "status": "in_progress", "priority": "high"},
         {"content": "Write the summary"}]


async def test_todos_are_written_whole_per_session_and_read_back(ctx):
    result = await TodoWriteTool().run({"todos": TODOS}, ctx)
    expected = "[x] Load the data\n[~] Plot sales (high priority)\n[ ] Write the summary"
    assert result.title == "2 todos left of 3" and result.output == expected
    assert ctx.todo_store.todos("ses_test") == [
        Todo(content="Load the data", status="completed", id="1"),
        Todo(content="Plot sales", status="in_progress", priority="high", id="2"),
        Todo(content="Write the summary", id="3")]
    assert ctx.permissions() == [("todowrite", ["*"])] and ctx.asked[0].always == ["*"]
    read = await TodoReadTool().run({}, ctx)
    assert read.output == expected and read.metadata["todos"] == result.metadata["todos"]


async def test_a_new_list_replaces_the_old_one(ctx):
    await TodoWriteTool().run({"todos": TODOS}, ctx)
    await TodoWriteTool().run({"todos": [{"content": "Only this", "status": "cancelled"}]}, ctx)
    assert (await TodoReadTool().run({}, ctx)).output == "[-] Only this"
    assert ctx.todo_store.writes == 2


async def test_an_empty_list_reads_as_empty(ctx):
    assert (await TodoReadTool().run({}, ctx)).output == "(The todo list is empty.)"


async def test_an_unknown_status_is_invalid_input_naming_the_allowed_ones(ctx):
    with pytest.raises(ToolError, match="todos.0.status: Input should be 'pending', 'in_progress', 'completed'"):
        await TodoWriteTool().run({"todos": [{"content": "x", "status": "doing"}]}, ctx)


async def test_a_denied_todowrite_leaves_the_list_alone(project):
    ctx = RecordingContext(project, deny={"todowrite"})
    with pytest.raises(DeniedError):
        await TodoWriteTool().run({"todos": TODOS}, ctx)
    assert ctx.todo_store.writes == 0
