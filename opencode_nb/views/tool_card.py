"""A tool call as a card: icon, name, title, live state, then its output, diff or error.

The card's HTML comes from `render.tool_card_html`, the same function the saved transcript uses. Permission
and question prompts raised by this call sit inside the card, and a `task` call holds its child session.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from ..session.models import ToolPart
from .buttons import button as make_button
from .buttons import button_row
from .child import ChildSessionView
from .markdown import escape
from .render import tool_card_html


class ToolCardView:
    """`undo(run_id) -> message`, when given, puts an Undo button on finished live python runs that bound names."""

    def __init__(self, part: ToolPart, *, undo: Callable[[str], str] | None = None) -> None:
        self.part = part
        self.undo = undo
        self.undo_button: widgets.Button | None = None
        self.html = widgets.HTML()
        self.prompts = widgets.VBox()
        self.child: ChildSessionView[Any] | None = None
        self.widget = widgets.VBox([self.html, self.prompts], layout=widgets.Layout(margin="0"))
        self.widget.add_class("ocnb-tool-card")
        self._shown = ""
        self.waiting: set[str] = set()
        """Requests put to the person by this call and not answered yet."""

    @property
    def running(self) -> bool:
        return self.part.state.status in ("pending", "running")

    def update(self, part: ToolPart) -> None:
        self.part = part

    def flush(self, now: float | None = None) -> None:
        value = tool_card_html(self.part, time.time() if now is None else now, waiting=bool(self.waiting))
        if value != self._shown:
            self._shown = value
            self.html.value = value
        if self.child is not None:
            self.child.update_from_call(self.part)
        run_id = undoable_run(self.part)
        if run_id is not None and self.undo is not None and self.undo_button is None:
            self._add_undo(run_id)

    def _add_undo(self, run_id: str) -> None:
        button = make_button("Undo", icon="undo", tooltip="Take back the names this run bound")
        note = widgets.HTML()
        undo = self.undo
        assert undo is not None

        def clicked(_: widgets.Button) -> None:
            if button.disabled:  # a second click already on its way: undo once
                return
            button.disabled = True
            note.value = f'<span style="font-size:0.9em">{escape(undo(run_id))}</span>'

        button.on_click(clicked)
        self.undo_button = button
        self.widget.children = (*self.widget.children, button_row([button, note]))

    def add_prompt(self, widget: widgets.Widget, request_id: str) -> None:
        self.prompts.children = (*self.prompts.children, widget)
        self.waiting.add(request_id)

    def attach_child(self, child: ChildSessionView[Any]) -> None:
        self.child = child
        self.widget.children = (self.html, self.prompts, child.widget)


def undoable_run(part: ToolPart) -> str | None:
    """The run id of a finished live python call that changed the namespace, else None."""
    state = part.state
    if part.tool != "python" or state.status != "completed":
        return None
    run = state.metadata.get("run") or {}
    changes = run.get("changes") or {}
    if run.get("mode") != "live" or not any(changes.get(k) for k in ("created", "rebound", "deleted")):
        return None
    return run.get("run_id")
