"""A tool call as a card: icon, name, title, live state, then its output, diff or error.

The card's HTML comes from `render.tool_card_html`, the same function the saved transcript uses. Permission
and question prompts raised by this call sit inside the card, and a `task` call holds its child session.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import ipywidgets as widgets

from ..session.models import ToolPart
from .render import tool_card_html

if TYPE_CHECKING:
    from .child import ChildSessionView


class ToolCardView:
    def __init__(self, part: ToolPart) -> None:
        self.part = part
        self.html = widgets.HTML()
        self.prompts = widgets.VBox()
        self.child: ChildSessionView | None = None
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

    def add_prompt(self, widget: widgets.Widget, request_id: str) -> None:
        self.prompts.children = (*self.prompts.children, widget)
        self.waiting.add(request_id)

    def attach_child(self, child: ChildSessionView) -> None:
        self.child = child
        self.widget.children = (self.html, self.prompts, child.widget)
