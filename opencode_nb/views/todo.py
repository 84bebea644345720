"""The session's todo list, pinned at the top of the session view while the agent works.

Once the run has ended, nothing works on an item still marked in progress: the list then shows how the run
ended beside it (`run_frame.todo_html`'s `ended`), as the saved transcript does, instead of a mark that says work
goes on.
"""

from __future__ import annotations

import ipywidgets as widgets

from ..values import Todo
from .run_frame import todo_html


class TodoView:
    def __init__(self) -> None:
        self.todos: list[Todo] = []
        self.ended: str | None = None
        """How the run ended (done, error, stopped, rejected), or None while it runs."""
        self.widget = widgets.HTML()
        self.widget.add_class("ocnb-todo")
        self._shown = ""

    def update(self, todos: list[Todo]) -> None:
        self.todos = list(todos)

    def end(self, status: str) -> None:
        """The run is over: items still in progress are shown as left when it ended (`status`)."""
        self.ended = status

    def flush(self) -> None:
        value = todo_html(self.todos, ended=self.ended)
        if value != self._shown:
            self._shown = value
            self.widget.value = value
