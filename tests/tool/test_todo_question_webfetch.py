import asyncio
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from opencode_nb.bus import Bus
from opencode_nb.errors import RejectedError, ToolError
from opencode_nb.question import QuestionService
from opencode_nb.tool.question import QuestionTool
from opencode_nb.tool.todo import TodoReadTool, TodoWriteTool
from opencode_nb.tool.webfetch import WebFetchTool

from .fakes import recording_context


async def test_todos_are_written_whole_and_read_back(ctx):
    todos = [{"content": "Load the data", "status": "completed"}, {"content": "Plot sales", "status": "in_progress",
                                                                     "priority": "high"}]
    result = await TodoWriteTool().run({"todos": todos}, ctx)
    assert result.title == "1 open of 2" and result.output == "[x] Load the data\n[~] Plot sales"
    assert (await TodoReadTool().run({}, ctx)).output == "[x] Load the data\n[~] Plot sales"


async def test_an_unknown_todo_status_is_explained(ctx):
    with pytest.raises(ToolError, match="Use status pending, in_progress"):
        await TodoWriteTool().run({"todos": [{"content": "x", "status": "doing"}]}, ctx)


async def test_questions_wait_for_the_persons_answer(project):
    bus = Bus()
    service = QuestionService(bus)
    asked = []
    bus.subscribe("question.asked", asked.append)
    ctx = recording_context(project, questions=service)
    task = asyncio.create_task(QuestionTool().run({"questions": [
        {"question": "Which chart?", "header": "Chart", "options": [{"label": "Bar"}, {"label": "Line"}]}]}, ctx))
    for _ in range(100):
        if asked:
            break
        await asyncio.sleep(0.01)
    [event] = asked
    assert event.request.questions[0].options[1].label == "Line"
    threading.Thread(target=service.reply, args=(event.request.id, [["Line"]])).start()
    result = await asyncio.wait_for(task, 2)
    assert '"Which chart?" = "Line"' in result.output and result.metadata["answers"] == [["Line"]]


async def test_a_dismissed_question_is_a_rejection(project):
    service = QuestionService(Bus())
    ctx = recording_context(project, questions=service)
    task = asyncio.create_task(QuestionTool().run({"questions": [{"question": "Go on?"}]}, ctx))
    while not service.pending():
        await asyncio.sleep(0.01)
    service.reject(service.pending()[0].id)
    with pytest.raises(RejectedError):
        await task


async def test_a_question_policy_answers_runs_with_nobody_present(project):
    service = QuestionService(Bus(), policy=lambda request: [["Yes"]])
    ctx = recording_context(project, questions=service)
    result = await QuestionTool().run({"questions": [{"question": "Switch?", "options": [{"label": "Yes"}]}]}, ctx)
    assert result.metadata["answers"] == [["Yes"]]


@pytest.fixture
def site():
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            if self.path == "/missing":
                self.send_response(404)
                self.end_headers()
                return
            body = (b"<html><head><style>p{}</style><script>alert(1)</script></head><body><h1>Docs</h1>"
                    b"<p>Use <b>mean</b> wisely.</p></body></html>")
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


async def test_webfetch_turns_html_into_markdown_or_text(ctx, site):
    markdown = await WebFetchTool().run({"url": f"{site}/doc"}, ctx)
    assert "# Docs" in markdown.output and "**mean**" in markdown.output and "alert" not in markdown.output
    text = await WebFetchTool().run({"url": f"{site}/doc", "format": "text"}, ctx)
    assert "Use mean wisely." in text.output and "<" not in text.output
    assert ctx.extra["asked"][0].patterns == [f"{site}/doc"]


async def test_webfetch_errors_are_clear(ctx, site):
    with pytest.raises(ToolError, match="HTTP 404"):
        await WebFetchTool().run({"url": f"{site}/missing"}, ctx)
    with pytest.raises(ToolError, match="http:// or https://"):
        await WebFetchTool().run({"url": "file:///etc/passwd"}, ctx)
