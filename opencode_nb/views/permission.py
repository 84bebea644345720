"""The permission prompt: who asks for what, and the buttons that answer.

Click handlers may run on a kernel subshell thread (JupyterLab ≥ 4.4 sends widget messages over
subshells), so they only call `PermissionService.reply`, which is thread-safe, and hand every widget change
to the views' loop. The prompt turns into a one-line record when the service publishes the reply, whoever
gave it: this prompt, another view, `%agent stop`, a policy or a timeout.

On a server several people use, the click is told apart by who made it (`who`, the person signed in to the
page it came from): the answer records them, and under `approvals: owner` anyone else's click is refused in
the prompt itself, which says from the start who may answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

import ipywidgets as widgets

from ..errors import NotFoundError
from ..people import Approvers, Person, nobody
from ..permission.events import PermissionReplied, PermissionRequest, Reply
from .asks import always_note, permission_html, permission_record_html
from .buttons import button, button_row, typed_answer
from .colors import MUTED
from .markdown import escape
from .widget_tree import close_tree

log = logging.getLogger(__name__)

FEEDBACK_HINT = "Or tell the agent what to do instead, then press Reject with feedback:"
FEEDBACK_PLACEHOLDER = "What to do instead"
"""Inside the field only a few words, which fit at any width; the whole hint is the line above it."""


class Replier(Protocol):
    """`PermissionService.reply`."""

    def __call__(self, request_id: str, reply: Reply, message: str | None = None, *,
                 by: str | None = None) -> None: ...


class PermissionPromptView:
    def __init__(self, request: PermissionRequest, reply: Replier, call_soon: Callable[..., None], *,
                 who: Callable[[], Person | None] = nobody, approvers: Approvers | None = None) -> None:
        self.request = request
        self._reply = reply
        self._call_soon = call_soon
        self._who = who
        self._approvers = approvers
        self.answered: PermissionReplied | None = None
        self.refused = widgets.HTML()
        """Why the last click was not taken (someone other than the owner clicked); empty otherwise."""
        self.allow = button("Allow once", "success", icon="check", tooltip="Let this one call go ahead")
        self.always = button("Always allow", "info", icon="check-double",
                             tooltip=f"Also allow from now on: {always_note(request)}")
        self.reject = button("Reject", "danger", icon="times", tooltip="Refuse; the agent stops and waits for you")
        hint, self.feedback = typed_answer(FEEDBACK_HINT, FEEDBACK_PLACEHOLDER)
        self.send_feedback = button("Reject with feedback", icon="comment",
                                    tooltip="Refuse and tell the agent why; it reads this and carries on")
        self.allow.on_click(lambda _: self.answer("once"))
        self.always.on_click(lambda _: self.answer("always"))
        self.reject.on_click(lambda _: self.answer("reject"))
        self.send_feedback.on_click(lambda _: self.answer("reject", self.feedback.value.strip() or None))
        note = widgets.HTML(f'<span style="font-size:11px;color:{MUTED}">Always allow covers: '
                            f"{escape(always_note(request))}</span>")
        owner = ([widgets.HTML(f'<span class="ocnb-approvers" style="font-size:12px">{escape(approvers.note)}'
                               "</span>")] if approvers is not None else [])
        self.widget = widgets.VBox([
            widgets.HTML(permission_html(request)),
            *owner,
            button_row([self.allow, self.always, self.reject]),
            self.refused,
            *([hint] if hint is not None else []),
            button_row([self.feedback, self.send_feedback]),
            note,
        ], layout=widgets.Layout(margin="2px 0 6px 0"))
        self.widget.add_class("ocnb-permission")

    def answer(self, reply: Reply, message: str | None = None) -> None:
        """Send the person's answer; safe from any thread, and a second click is ignored.

        The person is read here, while the click's message is the one the kernel handles.
        """
        person = self._who()
        refusal = self._approvers.refusal(person) if self._approvers is not None else None
        if refusal is not None:
            log.info("an approval click refused: %s", refusal)
            self._call_soon(self._refuse, refusal)
            return
        self._call_soon(self._disable)
        try:
            self._reply(self.request.id, reply, message, by=str(person) if person is not None else None)
        except NotFoundError:
            pass  # already answered (double click, or answered elsewhere first)
        except Exception:
            log.exception("permission reply failed")

    def _refuse(self, refusal: str) -> None:
        self.refused.value = f'<div class="ocnb-approval-refused" style="font-size:12px">✗ {escape(refusal)}</div>'

    def _disable(self) -> None:
        for each in (self.allow, self.always, self.reject, self.send_feedback):
            each.disabled = True
        self.feedback.disabled = True

    def resolve(self, event: PermissionReplied) -> None:
        """Collapse to the record of the decision (on the views' loop)."""
        self.answered = event
        old, self.widget.children = self.widget.children, (widgets.HTML(self.record_html()),)
        for widget in old:
            close_tree(widget)

    def record_html(self) -> str:
        assert self.answered is not None
        return permission_record_html(self.request, self.answered.reply, message=self.answered.message,
                                      reason=self.answered.reason, by=self.answered.by)

