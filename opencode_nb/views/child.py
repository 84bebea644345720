"""A child session as a collapsible section under the task call that started it.

Collapsed by default, titled `@agent — description` with a live summary (how many tools, running or done).
Inside is the child's own full session view, so its text, tool cards and prompts (approvals included)
work exactly as at the top level; grandchildren nest the same way.
"""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar

import ipywidgets as widgets

from ..session.models import ToolPart
from .run_frame import child_title, task_state


class Shown(Protocol):
    """What the section needs of the child's own view (a `SessionView`): the widget to fold away."""

    @property
    def widget(self) -> widgets.Widget: ...


S = TypeVar("S", bound=Shown)


class ChildSessionView(Generic[S]):
    """Generic in the child's view, so the section knows nothing of the session view that holds it."""

    def __init__(self, session_view: S, *, agent: str, description: str) -> None:
        self.session: S = session_view
        self.agent = agent
        self.description = description
        self.widget = widgets.Accordion(children=[session_view.widget], selected_index=None)
        self.widget.add_class("ocnb-child")
        self._title = ""
        self.update_from_call(None)

    def update_from_call(self, part: ToolPart | None) -> None:
        tools: list[dict[str, Any]] = []
        if part is not None:
            tools = list((getattr(part.state, "metadata", {}) or {}).get("tools", []))
        title = child_title(self.agent, self.description, tools, task_state(part))
        if title != self._title:
            self._title = title
            self.widget.set_title(0, title)

    def expand(self) -> None:
        self.widget.selected_index = 0
