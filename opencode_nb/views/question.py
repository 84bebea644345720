"""The question prompt: the question tool's questions, with option buttons and a free-text answer.

A single question with single choice answers on the first click, with whatever was typed in its field.
Otherwise options toggle and Submit sends everything at once. A question whose options are its only answers
(`options_only`: each button says what happens) shows no Submit or Dismiss beside them. Like the permission
prompt, handlers only call the thread-safe service and hand widget changes to the views' loop.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence

import ipywidgets as widgets

from ..errors import NotFoundError
from ..question.events import QuestionReplied, QuestionRequest
from .asks import question_record_html
from .buttons import button as make_button
from .buttons import button_row, paint, typed_answer
from .markdown import escape
from .render import icon_html
from .widget_tree import close_tree

log = logging.getLogger(__name__)

TYPED_PLACEHOLDER = "Your own words"
"""Inside an answer's field only a few words, which fit at any width; the question's hint is the line above."""


class QuestionPromptView:
    def __init__(self, request: QuestionRequest, reply: Callable[[str, Sequence[Sequence[str]]], None],
                 dismiss: Callable[[str], None], call_soon: Callable[..., None]) -> None:
        self.request = request
        self._reply = reply
        self._dismiss = dismiss
        self._call_soon = call_soon
        self.answered: QuestionReplied | None = None
        self.chosen: list[set[str]] = [set() for _ in request.questions]
        self.option_buttons: list[list[widgets.Button]] = []
        self.free_text: list[widgets.Text | None] = []
        self.instant = len(request.questions) == 1 and not request.questions[0].multiple
        rows: list[widgets.Widget] = []
        for index, question in enumerate(request.questions):
            header = f"<b>{escape(question.header)}</b> " if question.header else ""
            who = f"{escape(request.agent)} asks: " if request.agent else ""
            rows.append(widgets.HTML(f"{icon_html('question-circle')}{who}{header}{escape(question.question)}"))
            buttons = []
            for option in question.options:
                button = make_button(option.label, tooltip=option.description or option.label)
                button.on_click(lambda _, i=index, label=option.label: self.choose(i, label))
                buttons.append(button)
            self.option_buttons.append(buttons)
            if buttons:
                rows.append(button_row(buttons))
            text = None
            if question.custom:
                hint, text = typed_answer(question.custom, TYPED_PLACEHOLDER)
                rows.extend([*([hint] if hint is not None else []), button_row([text])])
            self.free_text.append(text)
        self.submit_button: widgets.Button | None = None
        self.dismiss_button: widgets.Button | None = None
        if not all(q.options_only and q.options for q in request.questions):
            self.submit_button = make_button("Submit", "primary", icon="paper-plane")
            self.dismiss_button = make_button("Dismiss", icon="times")
            self.submit_button.on_click(lambda _: self.submit())
            self.dismiss_button.on_click(lambda _: self.dismiss())
            rows.append(button_row([self.submit_button, self.dismiss_button]))
        self.widget = widgets.VBox(rows, layout=widgets.Layout(
            margin="2px 0 6px 0", padding="4px 8px", border="1px solid #90caf9"))
        self.widget.add_class("ocnb-question")

    def choose(self, index: int, label: str) -> None:
        question = self.request.questions[index]
        if self.instant:
            self.chosen[index] = {label}
            self.submit()
            return
        chosen = self.chosen[index]
        if question.multiple:
            chosen.symmetric_difference_update({label})
        else:
            chosen.clear()
            chosen.add(label)
        self._call_soon(self._show_choice, index)

    def _show_choice(self, index: int) -> None:
        for option in self.option_buttons[index]:
            paint(option, "info" if option.description in self.chosen[index] else "")

    def answers(self) -> list[list[str]]:
        out = []
        for index, question in enumerate(self.request.questions):
            labels = [o.label for o in question.options if o.label in self.chosen[index]]
            field = self.free_text[index]
            typed = field.value.strip() if field is not None else ""
            out.append([*labels, typed] if typed else labels)
        return out

    def submit(self) -> None:
        self._call_soon(self._disable)
        try:
            self._reply(self.request.id, self.answers())
        except NotFoundError:
            pass
        except Exception:
            log.exception("question reply failed")

    def dismiss(self) -> None:
        self._call_soon(self._disable)
        with contextlib.suppress(NotFoundError):
            self._dismiss(self.request.id)

    def _disable(self) -> None:
        for button in [b for row in self.option_buttons for b in row] + [self.submit_button, self.dismiss_button]:
            if button is not None:
                button.disabled = True

    def resolve(self, event: QuestionReplied) -> None:
        self.answered = event
        old, self.widget.children = self.widget.children, (widgets.HTML(self.record_html()),)
        for widget in old:
            close_tree(widget)
        self.widget.layout.border = ""

    def record_html(self) -> str:
        assert self.answered is not None
        return question_record_html(self.request, self.answered.answers, self.answered.reason)
