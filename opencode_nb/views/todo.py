"""The session's todo list, pinned at the top of the session view while the agent works."""

from __future__ import annotations

import ipywidgets as widgets

from ..values import Todo
from .render import todo_html


class TodoView:
    def __init__(self) -> None:
        self.todos: list[Todo] = []
        self.widget = widgets.HTML()
        self.widget.add_class("ocnb-todo")
        self._shown = ""

    def update(self, todos: list[Todo]) -> None:
        self.todos = list(todos)

    def flush(self) -> None:
        value = todo_html(self.todos)
        if value != self._shown:
            self._shown = value
            self.widget.value = value
