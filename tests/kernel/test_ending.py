"""How a run's end shows in its cell: the state read from its last answer."""

from __future__ import annotations

from typing import Any

from opencode_nb.kernel.ending import cell_error, status_of
from opencode_nb.session.models import AssistantMessage, MessageError


def answer(**fields: Any) -> AssistantMessage:
    return AssistantMessage(session_id="ses_1", parent_id="msg_1", agent="build", model="scripted/test", **fields)


def test_a_run_whose_last_answer_still_asks_for_calls_ended_at_a_refusal_and_its_cell_does_not_fail():
    refused = answer(finish="tool-calls")
    assert status_of(refused, stop_requested=False) == "rejected"
    assert cell_error("rejected", refused) is None, "the person chose it: Run All goes on"


def test_an_answer_that_finished_is_done_an_abort_or_a_stop_request_stopped_and_any_other_error_an_error():
    assert status_of(answer(finish="stop"), stop_requested=False) == "done"
    assert status_of(answer(finish="tool-calls"), stop_requested=True) == "stopped"
    aborted = answer(finish="aborted", error=MessageError(kind="aborted", message="stopped"))
    assert status_of(aborted, stop_requested=False) == "stopped"
    failed = answer(finish="error", error=MessageError(kind="provider", message="overloaded"))
    assert status_of(failed, stop_requested=False) == "error"
    assert status_of(None, stop_requested=False) == "done"
