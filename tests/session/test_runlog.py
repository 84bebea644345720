"""A running loop changes its session in one way: the store and the in-memory history together."""

from __future__ import annotations

import re
from pathlib import Path

from opencode_nb.session.history import History
from opencode_nb.session.models import AssistantMessage, TextPart, UserMessage
from opencode_nb.session.runlog import RunLog

SESSION_PACKAGE = Path(__file__).resolve().parents[2] / "opencode_nb" / "session"


def test_each_write_reaches_the_store_and_the_history_at_once(h):
    log = RunLog(h.ws.sessions, h.session.id)
    user = UserMessage(session_id=h.session.id, agent="build")
    log.add_message(user)
    part = TextPart(session_id=h.session.id, message_id=user.id, text="hel")
    log.add_part(part)
    log.update_part(part.model_copy(update={"text": "hello"}), delta="lo")
    answer = AssistantMessage(session_id=h.session.id, parent_id=user.id, agent="build", model="scripted/demo")
    log.add_message(answer)
    log.update_message(answer.model_copy(update={"finish": "stop"}))
    reloaded = History.load(h.ws.sessions, h.session.id)
    assert log.history.llm_messages() == reloaded.llm_messages()
    assert log.history.last_assistant().finish == "stop" == reloaded.last_assistant().finish
    assert [p.text for p in log.history.parts(user.id)] == ["hello"]


def test_no_session_module_writes_the_history_by_hand():
    """The loop, the processor, compaction and subtasks write through RunLog, never pairing writes themselves."""
    for path in SESSION_PACKAGE.glob("*.py"):
        if path.name in ("runlog.py", "history.py"):
            continue
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"history\.put_(message|part)\(", text), path.name
