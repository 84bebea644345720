import asyncio
import threading

import pytest

from opencode_nb.bus import Bus
from opencode_nb.errors import NotFoundError, PolicyRefusedError, RejectedError
from opencode_nb.question import QuestionAsked, QuestionInfo, QuestionOption, QuestionReplied, QuestionService

COLOR = QuestionInfo(question="Which colour?", header="Colour",
                     options=[QuestionOption(label="Red"), QuestionOption(label="Blue")])
SIZE = QuestionInfo(question="Which size?", options=[QuestionOption(label="S"), QuestionOption(label="M")],
                    multiple=True)


@pytest.fixture
def bus():
    return Bus()


@pytest.fixture
def events(bus):
    seen = []
    bus.subscribe("*", seen.append)
    return seen


async def asked(service: QuestionService, count: int = 1):
    for _ in range(200):
        if len(service.pending()) >= count:
            return service.pending()
        await asyncio.sleep(0.005)
    raise AssertionError("nothing was asked")


def test_the_question_package_exports_its_contract():
    import opencode_nb.question as question

    assert set(question.__all__) == {"QuestionAsked", "QuestionInfo", "QuestionOption", "QuestionReplied",
                                     "QuestionService"}


async def test_ask_publishes_the_request_and_waits_for_the_reply(bus, events):
    service = QuestionService(bus)
    task = asyncio.create_task(service.ask("ses_1", [COLOR, SIZE], agent="build"))
    [request] = await asked(service)
    assert request.id.startswith("que_") and request.agent == "build" and request.questions == [COLOR, SIZE]
    assert events == [QuestionAsked(request=request)] and not task.done()
    service.reply(request.id, [["Blue"], ["S", "something in between"]])
    assert await task == [["Blue"], ["S", "something in between"]]
    assert events[-1] == QuestionReplied(session_id="ses_1", request_id=request.id,
                                         answers=[["Blue"], ["S", "something in between"]])
    assert service.pending() == []


async def test_a_reply_may_come_from_another_thread(bus):
    service = QuestionService(bus)
    task = asyncio.create_task(service.ask("ses_1", [COLOR]))
    [request] = await asked(service)
    thread = threading.Thread(target=service.reply, args=(request.id, [["Red"]]))
    thread.start()
    assert await asyncio.wait_for(task, 2) == [["Red"]]
    thread.join()


async def test_free_text_and_bare_strings_are_answers_and_missing_ones_are_empty(bus):
    service = QuestionService(bus)
    task = asyncio.create_task(service.ask("ses_1", [COLOR, SIZE]))
    [request] = await asked(service)
    service.reply(request.id, ["  a dark green  "])
    assert await task == [["a dark green"], []]


async def test_more_answers_than_questions_is_refused_and_the_request_stays(bus):
    service = QuestionService(bus)
    task = asyncio.create_task(service.ask("ses_1", [COLOR]))
    [request] = await asked(service)
    with pytest.raises(ValueError, match="2 answers for 1 question"):
        service.reply(request.id, [["Red"], ["Blue"]])
    assert service.pending() == [request]
    service.reply(request.id, [["Red"]])
    assert await task == [["Red"]]


async def test_reject_fails_the_waiting_ask_and_says_so_on_the_bus(bus, events):
    service = QuestionService(bus)
    task = asyncio.create_task(service.ask("ses_1", [COLOR]))
    [request] = await asked(service)
    service.reject(request.id)
    with pytest.raises(RejectedError, match="dismissed"):
        await task
    assert events[-1] == QuestionReplied(session_id="ses_1", request_id=request.id, answers=None, reason="dismissed")


async def test_unknown_or_already_answered_ids_are_not_found(bus):
    service = QuestionService(bus)
    with pytest.raises(NotFoundError, match="question request 'que_nope' not found"):
        service.reply("que_nope", [["x"]])
    with pytest.raises(NotFoundError):
        service.reject("que_nope")
    task = asyncio.create_task(service.ask("ses_1", [COLOR]))
    [request] = await asked(service)
    service.reply(request.id, [["Red"]])
    await task
    with pytest.raises(NotFoundError, match="already answered or dismissed"):
        service.reply(request.id, [["Blue"]])


async def test_pending_lists_requests_oldest_first_and_per_session(bus):
    service = QuestionService(bus)
    tasks = [asyncio.create_task(service.ask(session, [COLOR])) for session in ("ses_a", "ses_b", "ses_a")]
    requests = await asked(service, 3)
    assert [r.session_id for r in requests] == ["ses_a", "ses_b", "ses_a"]
    assert [r.id for r in service.pending("ses_a")] == [requests[0].id, requests[2].id]
    service.close()
    for task in tasks:
        with pytest.raises(RejectedError):
            await task


async def test_close_rejects_everything_still_waiting(bus, events):
    service = QuestionService(bus)
    task = asyncio.create_task(service.ask("ses_1", [COLOR]))
    await asked(service)
    service.close()
    with pytest.raises(RejectedError):
        await task
    assert service.pending() == [] and events[-1].reason == "closed"


async def test_cancelling_the_asker_withdraws_the_request(bus, events):
    service = QuestionService(bus)
    task = asyncio.create_task(service.ask("ses_1", [COLOR]))
    [request] = await asked(service)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert service.pending() == [] and events[-1].reason == "aborted"
    with pytest.raises(NotFoundError):
        service.reply(request.id, [["Red"]])


async def test_a_policy_answers_when_nobody_is_there_and_the_bus_still_shows_it(bus, events):
    service = QuestionService(bus, policy=lambda request: [[q.options[0].label] for q in request.questions])
    assert await service.ask("ses_1", [COLOR, SIZE]) == [["Red"], ["S"]]
    assert [e.type for e in events] == ["question.asked", "question.replied"]
    assert "policy" in events[1].reason and service.pending() == []


async def test_a_policy_dismissing_tells_the_model_to_carry_on_rather_than_stopping_the_loop(bus, events):
    service = QuestionService(bus, policy=lambda request: False)
    with pytest.raises(PolicyRefusedError, match="best judgement") as err:
        await service.ask("ses_1", [COLOR])
    assert not isinstance(err.value, RejectedError), "a rejection would end the run"
    assert [e.type for e in events] == ["question.asked", "question.replied"]
    assert events[1].answers is None and "policy" in events[1].reason and service.pending() == []


async def test_a_policy_returning_none_leaves_the_question_to_a_person(bus):
    service = QuestionService(bus, policy=lambda request: None)
    task = asyncio.create_task(service.ask("ses_1", [COLOR]))
    [request] = await asked(service)
    service.reply(request.id, [["Blue"]])
    assert await task == [["Blue"]]


async def test_who_answered_is_a_field_the_policy_sets_and_a_persons_answer_does_not(bus, events):
    answering = QuestionService(bus, policy=lambda request: [["Red"]])
    await answering.ask("ses_1", [COLOR])
    dismissing = QuestionService(bus, policy=lambda request: False)
    with pytest.raises(PolicyRefusedError):
        await dismissing.ask("ses_1", [COLOR])
    person = QuestionService(bus)
    task = asyncio.create_task(person.ask("ses_1", [COLOR]))
    [request] = await asked(person)
    person.reply(request.id, [["Blue"]])
    await task
    task = asyncio.create_task(person.ask("ses_1", [COLOR]))
    [request] = await asked(person)
    person.reject(request.id, "dismissed by policy, says the person")
    with pytest.raises(RejectedError):
        await task
    task = asyncio.create_task(person.ask("ses_1", [COLOR]))
    await asked(person)
    person.close()
    with pytest.raises(RejectedError):
        await task
    assert [e.decided_by for e in events if isinstance(e, QuestionReplied)] == [
        "policy", "policy", "person", "person", "close"]
