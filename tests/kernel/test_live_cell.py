"""A prompt cell's live view is built once its run lasts long enough to watch; a quicker run goes straight to its
transcript, sent before the cell ends. Whatever happened before the view was built, the view shows it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pytest

from opencode_nb.kernel.live_cell import LiveCell
from opencode_nb.provider.scripted import Scripted
from opencode_nb.views import SessionView, ViewHub
from opencode_nb.workspace import Workspace

from .frontend import WIDGET_VIEW, FakeFrontend

READ = [{"text": "Reading the notes.", "tool_calls": [{"name": "read", "input": {"path": "notes.txt"}}]},
        {"text": "The notes say hello."}]
ASK = [{"text": "Let me check first.", "tool_calls": [{"name": "bash", "input": {"command": "echo hi"}}]},
       {"text": "It printed hi."}]


def html_of(widget: widgets.Widget) -> str:
    own = widget.value if isinstance(widget, widgets.HTML) else ""
    return own + "".join(html_of(child) for child in getattr(widget, "children", ()) or ())


class Cell:
    """A workspace, a hub and the live cell of one run, recording what the cell was asked to show."""

    def __init__(self, tmp_path: Path, turns: list[dict[str, Any]], *, after_s: float,
                 permission: dict[str, Any] | None = None) -> None:
        (tmp_path / "project").mkdir(exist_ok=True)
        (tmp_path / "project" / "notes.txt").write_text("hello\n")
        self.ws = Workspace(tmp_path / "project", {"model": "scripted/test",
                                                   "permission": permission or {"read": "allow"}},
                            data_dir=tmp_path / "data", env={})
        self.ws.providers.register("scripted", Scripted(turns))
        self.hub = ViewHub(self.ws.bus)
        self.session_id = self.ws.sessions.create(str(self.ws.directory)).id
        self.built: list[SessionView] = []
        self.shown: list[SessionView] = []
        self.cell = LiveCell(self.hub, self.session_id, self.make, self.show, at_once=False, after_s=after_s)

    def make(self) -> SessionView:
        view = SessionView(self.ws, self.hub, self.session_id, floor="~")
        self.built.append(view)
        return view

    def show(self, view: SessionView) -> Any:
        self.shown.append(view)
        return None

    async def run(self) -> None:
        self.cell.floor = ""
        self.cell.start()
        await self.ws.prompt(self.session_id, "What do the notes say?")
        self.cell.finish("done")


async def test_a_run_shorter_than_a_beat_builds_no_view_and_its_transcript_is_the_cell_output(tmp_path, monkeypatch):
    shown: list[dict[str, Any]] = []
    monkeypatch.setattr("IPython.display.display", lambda bundle, **kwargs: shown.append(bundle))
    cell = Cell(tmp_path, READ, after_s=3600)
    await cell.run()
    cell.cell.update({"text/plain": "the transcript"}, raw=True)
    cell.cell.close()
    assert cell.built == [] and shown == [{"text/plain": "the transcript"}]
    assert cell.hub._watchers == {}, "nothing is left watching the session"
    await cell.ws.aclose()


async def test_a_run_that_lasts_shows_its_view_with_everything_that_came_before_it(tmp_path):
    slow = [READ[0], {**READ[1], "delay": 0.3}]
    cell = Cell(tmp_path, slow, after_s=0.05)
    await cell.run()
    [view] = cell.shown
    assert "Reading the notes." in html_of(view.widget), "the text streamed before the view was built"
    assert "ocnb-completed" in html_of(view.widget) and "The notes say hello." in html_of(view.widget)
    assert view.status == "done" and "done" in view.header.value
    assert view.elapsed_s() is not None and view.elapsed_s() >= 0.3, "its clock counts from the run's start"
    await cell.ws.aclose()


async def test_an_ask_shows_the_view_at_once_with_the_prompt_and_what_came_before_it(tmp_path):
    cell = Cell(tmp_path, ASK, after_s=3600, permission={"bash": "ask"})
    asked = asyncio.Event()
    cell.ws.bus.subscribe("permission.asked", lambda event: asked.set(), watch_only=True)
    run = asyncio.ensure_future(cell.run())
    await asyncio.wait_for(asked.wait(), 10)
    [view] = cell.shown
    view.flush()
    assert "Let me check first." in html_of(view.widget)
    [request] = cell.ws.permissions.pending()
    cell.ws.permissions.reply(request.id, "once")
    await asyncio.wait_for(run, 10)
    assert "It printed hi." in html_of(view.widget)
    await cell.ws.aclose()


async def test_a_queued_run_shows_its_view_at_once(tmp_path):
    cell = Cell(tmp_path, READ, after_s=3600)
    cell.cell.queued()
    [view] = cell.shown
    assert view.status == "queued"
    cell.cell.finish("done")
    cell.cell.close()
    await cell.ws.aclose()


# ---------------------------------------------------------------------------------------------- in a kernel


OPENCODE = {"edit": "allow", "bash": "allow"}
"""OpenCode's defaults instead of the notebook's: these cells show only the run (no line about the defaults)."""


def notebook(kernel: Any, tmp_path: Path, script: list[dict[str, Any]]) -> FakeFrontend:
    """A kernel a Jupyter server started for a notebook a person has open."""
    return kernel(script, permission={"read": "allow", **OPENCODE}, files={"notes.txt": "hello\n"},
                  env={"JPY_SESSION_NAME": str(tmp_path / "project" / "notes.ipynb")})


def iopub(fe: FakeFrontend, msg_id: str) -> list[dict[str, Any]]:
    with fe._lock:
        return [m for m in fe.iopub if m["parent_header"].get("msg_id") == msg_id]


@pytest.mark.timeout(90)
def test_a_quick_turn_in_a_notebook_goes_straight_to_its_transcript_before_the_cell_ends(kernel, tmp_path):
    fe = notebook(kernel, tmp_path, READ)
    msg = fe.execute("%%agent\nWhat do the notes say?")
    assert fe.done(msg)["content"]["status"] == "ok"
    messages = iopub(fe, msg)
    kinds = [m["msg_type"] for m in messages]
    assert "comm_open" not in kinds and not any(WIDGET_VIEW in m["content"].get("data", {}) for m in messages)
    [transcript] = [i for i, m in enumerate(messages) if m["msg_type"] == "display_data"]
    assert "ocnb-transcript" in messages[transcript]["content"]["data"]["text/html"]
    assert "The notes say hello." in fe.text(msg)
    assert kinds.index("status", transcript) > transcript, "the transcript is sent before the cell goes idle"


@pytest.mark.timeout(90)
def test_a_longer_turn_shows_its_live_view_and_then_the_transcript_in_its_place(kernel, tmp_path):
    fe = notebook(kernel, tmp_path, [READ[0], {**READ[1], "delay": 0.5}])
    msg = fe.execute("%%agent\nWhat do the notes say?")
    assert fe.done(msg)["content"]["status"] == "ok"
    shown = [m for m in iopub(fe, msg) if m["msg_type"] in ("display_data", "update_display_data")]
    assert [m["msg_type"] for m in shown] == ["display_data", "update_display_data"]
    assert WIDGET_VIEW in shown[0]["content"]["data"], "the live view while it worked"
    assert "ocnb-transcript" in shown[1]["content"]["data"]["text/html"], "then the transcript in its place"
    assert shown[0]["content"]["transient"]["display_id"] == shown[1]["content"]["transient"]["display_id"]
    [live] = [s for s in fe.models.values() if 'class="ocnb-tool ' in str(s.get("value", ""))]
    assert "ocnb-completed" in live["value"], "the live card ended in its final state"


@pytest.mark.timeout(90)
def test_a_view_shown_while_the_models_code_runs_in_the_kernel_lands_in_the_cell_not_in_the_codes_output(
        kernel, tmp_path):
    code = "import time\ntime.sleep(0.5)\n6 * 7"
    fe = kernel([{"tool_calls": [{"name": "python", "input": {"code": code}}]}, {"text": "It is 42."}],
                permission={"python": "allow", **OPENCODE},
                env={"JPY_SESSION_NAME": str(tmp_path / "project" / "nb.ipynb")})
    msg = fe.execute("%%agent\nWhat is six times seven?")
    assert fe.done(msg)["content"]["status"] == "ok", fe.text(msg)
    shown = [m for m in iopub(fe, msg) if m["msg_type"] in ("display_data", "update_display_data")]
    assert WIDGET_VIEW in shown[0]["content"]["data"], "the view was shown in the cell while the code ran"
    assert "It is 42." in fe.text(msg) and "42" in fe.text(msg)
    assert "VBox" not in fe.text(msg), "the code's output holds only what the code displayed"
