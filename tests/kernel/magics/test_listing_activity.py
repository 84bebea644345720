"""`%agent sessions`' "last activity" is when something last happened in the session (its newest message or
part), not when the session was made or last renamed, and the newest activity lists first."""

from __future__ import annotations

import time
from pathlib import Path

from opencode_nb.kernel.magics import listing
from opencode_nb.provider.scripted import Scripted
from opencode_nb.session.models import Session
from opencode_nb.workspace import Workspace

HOUR_S = 3600.0


def workspace(tmp_path: Path, turns: int) -> Workspace:
    (tmp_path / "project").mkdir(parents=True, exist_ok=True)
    ws = Workspace(tmp_path / "project", {"model": "scripted/test", "permission": {"*": "allow"}},
                   data_dir=tmp_path / "data")
    ws.providers.register("scripted", Scripted([{"text": f"answer {n}"} for n in range(turns)]))
    return ws


def made_hours_ago(ws: Workspace, session: Session, hours: float) -> None:
    """As if the session had been made (and last renamed) `hours` ago: what a session resumed days later is."""
    then = time.time() - hours * HOUR_S
    ws.sessions.store.update_session(session.model_copy(update={"created_at": then, "updated_at": then}))


def activity_of(ws: Workspace, session_id: str) -> str:
    row = next(line for line in listing.sessions(ws, notebook=None, current=None)["text/plain"].splitlines()
               if session_id in line)
    return row.rsplit("  ", 1)[-1].strip()


async def test_last_activity_is_the_newest_prompt_not_when_the_session_was_made_or_named(tmp_path):
    ws = workspace(tmp_path, 2)
    session = ws.sessions.create(str(ws.directory))
    await ws.prompt(session.id, "what is in the data?")
    await ws.loop.titles.wait()
    made_hours_ago(ws, ws.sessions.get(session.id), 5)
    await ws.prompt(session.id, "and the mean?")
    assert activity_of(ws, session.id).endswith("s ago"), listing.sessions(ws, notebook=None, current=None)
    await ws.aclose()


async def test_a_session_resumed_now_lists_before_one_made_later_but_left_alone(tmp_path):
    ws = workspace(tmp_path, 2)
    resumed = ws.sessions.create(str(ws.directory))
    await ws.prompt(resumed.id, "first look")
    made_hours_ago(ws, ws.sessions.get(resumed.id), 5)
    left = ws.sessions.create(str(ws.directory))
    await ws.prompt(left.id, "another question")
    made_hours_ago(ws, ws.sessions.get(left.id), 2)
    then = time.time() - 2 * HOUR_S
    for message in ws.sessions.messages(left.id):  # everything in it happened two hours ago
        ws.sessions.store.update_message(message.message.model_copy(update={"created_at": then,
                                                                            "completed_at": then}))
        for part in message.parts:
            times = {k: then for k in ("started_at", "ended_at") if getattr(part, k, None) is not None}
            ws.sessions.store.update_part(part.model_copy(update=times))
    listed = listing.sessions(ws, notebook=None, current=None)["text/plain"]
    assert listed.index(resumed.id) < listed.index(left.id), listed
    assert activity_of(ws, resumed.id).endswith("s ago") and activity_of(ws, left.id) == "2h ago"
    await ws.aclose()


def test_a_session_nothing_happened_in_shows_when_it_was_made(tmp_path):
    ws = workspace(tmp_path, 0)
    session = ws.sessions.create(str(ws.directory))
    made_hours_ago(ws, session, 3)
    assert ws.sessions.last_activity(session.id) == ws.sessions.get(session.id).created_at
    ws.close()
