import asyncio
import threading

import pytest

from opencode_nb.bus import Bus
from opencode_nb.errors import RejectedError, ToolError
from opencode_nb.question import QuestionService
from opencode_nb.tool.question import QuestionTool

from .fakes import RecordingContext

CHART = {"questions": [
    {"question": "Which chart?", "header": "Chart", "options": [{"label": "Bar"}, {"label": "Line"}]},
    {"question": "Which years?", "header": "Years", "options": [{"label": "2023"}, {"label": "2024"}],
     "multiple": True},
]}


async def first_request(service: QuestionService):
    for _ in range(200):
        if service.pending():
            return service.pending()[0]
        await asyncio.sleep(0.01)
    raise AssertionError("nothing was asked")


async def test_the_tool_waits_for_the_answers_and_formats_them_for_the_model(project):
    bus = Bus()
    service = QuestionService(bus)
    asked = []
    bus.subscribe("question.asked", asked.append)
    ctx = RecordingContext(project, questions=service)
    task = asyncio.create_task(QuestionTool().run(CHART, ctx))
    request = await first_request(service)
    assert [q.question for q in request.questions] == ["Which chart?", "Which years?"]
    assert request.agent == "build" and request.session_id == "ses_test" and asked[0].request == request
    threading.Thread(target=service.reply, args=(request.id, [["Line"], ["2023", "2024 only Q4"]])).start()
    result = await asyncio.wait_for(task, 2)
    assert result.output == ('The person answered your questions:\n"Which chart?" = "Line"\n'
                             '"Which years?" = "2023, 2024 only Q4"\nContinue with these answers in mind.')
    assert result.title == "Asked 2 questions" and result.metadata["answers"] == [["Line"], ["2023", "2024 only Q4"]]
    assert ctx.asked == []  # questions never go through the permission engine


async def test_an_unanswered_question_says_so(project):
    service = QuestionService(Bus(), policy=lambda request: [["Bar"]])
    result = await QuestionTool().run(CHART, RecordingContext(project, questions=service))
    assert '"Which years?" = (unanswered)' in result.output


async def test_a_dismissed_question_is_a_rejection_that_stops_the_loop(project):
    service = QuestionService(Bus())
    task = asyncio.create_task(QuestionTool().run(CHART, RecordingContext(project, questions=service)))
    service.reject((await first_request(service)).id)
    with pytest.raises(RejectedError, match="dismissed this question"):
        await task


async def test_without_a_question_service_the_model_is_told_to_decide_itself(ctx):
    with pytest.raises(ToolError, match="Nobody can be asked questions in this session"):
        await QuestionTool().run(CHART, ctx)


async def test_at_least_one_question_is_needed(ctx):
    with pytest.raises(ToolError, match="questions: List should have at least 1 item"):
        await QuestionTool().run({"questions": []}, ctx)
