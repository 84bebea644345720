"""A session nothing was ever written to can be discarded, so failed prompts leave no empty sessions behind."""

import pytest

from opencode_nb.bus import Bus
from opencode_nb.session.models import UserMessage
from opencode_nb.session.service import SessionService
from opencode_nb.session.store import SessionStore


@pytest.fixture
def svc(tmp_path):
    service = SessionService(SessionStore(tmp_path / "s.sqlite"), Bus(), directory="/p")
    yield service
    service.close()


def test_a_session_with_no_message_is_discarded(svc):
    session = svc.create()
    assert svc.is_empty(session.id)
    assert svc.discard_if_empty(session.id)
    assert svc.list() == []


def test_a_session_with_a_message_is_kept(svc):
    session = svc.create()
    svc.add_message(UserMessage(session_id=session.id, agent="build"))
    assert not svc.is_empty(session.id)
    assert not svc.discard_if_empty(session.id), "the message is written first, even if still buffered"
    assert [s.id for s in svc.list()] == [session.id]


def test_a_session_with_a_child_is_kept(svc):
    parent = svc.create()
    svc.create(parent_id=parent.id)
    assert not svc.discard_if_empty(parent.id)
    assert [s.id for s in svc.list()] == [parent.id]
