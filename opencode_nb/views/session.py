"""The live view of one session: header, todo list, streamed text, tool cards, prompts and child sessions.

A view keeps the latest value of everything it shows and lets the hub decide when widgets are updated, so
a burst of deltas costs one widget update per flush. It reads only bus events of its own session (the hub
routes them) and, for a child created before its view, the store; it writes only replies to the
permission and question services and Stop requests.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from .. import id as ids
from ..bus import Event
from ..permission.events import PermissionAsked, PermissionReplied, PermissionRequest
from ..question.events import QuestionAsked, QuestionReplied, QuestionRequest
from ..session.events import (
    HookReported,
    MessagePartUpdated,
    MessageUpdated,
    SessionError,
    SessionStatus,
    SessionUpdated,
    TodoUpdated,
)
from ..session.models import (
    AssistantMessage,
    Part,
    ReasoningPart,
    RetryPart,
    TextPart,
    ToolPart,
    UserMessage,
)
from ..session.title import DEFAULT_PREFIXES
from .buttons import button
from .child import ChildSessionView
from .hub import ViewHub
from .labels import task_heading
from .markdown import escape, markdown_html
from .permission import PermissionPromptView
from .question import QuestionPromptView
from .render import COLORS, reasoning_html, synthetic_html, user_html
from .run_frame import ended_html, header_html, refused_call, task_state
from .todo import TodoView
from .tool_card import ToolCardView
from .widget_tree import close_tree

if TYPE_CHECKING:
    from ..workspace import Workspace


log = logging.getLogger(__name__)

ENDED = ("stopped", "error", "rejected", "idle", "done")
"""States a run ends in: a late "idle" from the bus does not replace them."""


def child_status(call: ToolPart) -> str:
    """How a child's run ended, from the task call that ran it: done, error or stopped (running while it runs)."""
    return {"failed": "error"}.get(task_state(call), task_state(call))


class _TextItem:
    """A short part (a user line, a synthetic switch, reasoning): re-rendered whole when it changed."""

    def __init__(self, part: TextPart | ReasoningPart, render: Callable[[Any], str], *,
                 min_interval_s: float = 0.0) -> None:
        self.part: Any = part
        self.render = render
        self.min_interval_s = min_interval_s
        self.widget = widgets.HTML()
        self._shown: tuple[int, bool] | None = None
        self._at = 0.0

    def flush(self) -> None:
        key = (len(self.part.text), self.part.ended_at is not None)
        if key == self._shown:
            return
        now = time.monotonic()
        if not key[1] and now - self._at < self.min_interval_s:
            return  # still streaming and shown recently; a later flush catches up
        self._shown, self._at = key, now
        self.widget.value = self.render(self.part)


FREEZE_CHARS = 8000
"""Streamed text longer than this past its last settled paragraph is split there (see `_StreamedText`)."""


class _StreamedText:
    """The model's text, rendered so that each character is turned into HTML about once.

    Re-rendering a long answer on every flush would cost time and bandwidth in proportion to its length.
    Paragraphs before the last blank line outside a code fence cannot change any more: they are rendered
    once and their HTML kept; each flush renders only the paragraph still being written. Once the kept
    HTML passes `FREEZE_CHARS` of text it moves into a widget of its own that is never sent again.
    """

    def __init__(self, part: TextPart) -> None:
        self.part: Any = part
        self.frozen = 0
        """Characters of the text already in block widgets."""
        self.settled = 0
        """Characters of the text whose HTML is in `_settled_html` (after the blocks)."""
        self._settled_html = ""
        self.tail = widgets.HTML()
        self.widget = widgets.VBox([self.tail], layout=widgets.Layout(margin="0"))
        self.widget.add_class("ocnb-text-stream")
        # Blocks share the tail's layout and style: a new block is then one widget, not three.
        self._block_traits = {"layout": self.tail.layout, "style": self.tail.style}
        self._shown: tuple[int, bool] | None = None

    def flush(self) -> None:
        text: str = self.part.text
        key = (len(text), self.part.ended_at is not None)
        if key == self._shown:
            return
        self._shown = key
        boundary = settled_boundary(text, self.settled)
        if boundary > self.settled:
            self._settled_html += markdown_html(text[self.settled:boundary])
            self.settled = boundary
        if self.settled - self.frozen > FREEZE_CHARS and self.part.ended_at is None:
            block = widgets.HTML(self._settled_html, **self._block_traits)
            self.frozen, self._settled_html = self.settled, ""
            self.widget.children = (*self.widget.children[:-1], block, self.tail)
        self.tail.value = self._settled_html + markdown_html(text[self.settled:])


def settled_boundary(text: str, start: int) -> int:
    """The end of the last blank line after `start` that is outside a code fence, or `start`."""
    fenced = text.count("```", 0, start) % 2 == 1
    best = start
    index = start
    while True:
        found = text.find("\n\n", index)
        if found < 0:
            break
        fenced ^= text.count("```", index, found) % 2 == 1
        index = found + 2
        if not fenced:
            best = index
    return best


class SessionView:
    """Everything one session shows while it runs, as ipywidgets.

    Args:
        ws: the workspace whose services receive replies.
        hub: routes this session's events here and paces updates.
        session_id: the session to show.
        floor: a message id; messages older than it are not shown (a prompt cell shows its own exchange,
            not the whole history). None shows everything (child sessions).
        root: the top-level view of a prompt cell: it has a header with a Stop button.
        on_stop: called (on any thread) when Stop is pressed.
    """

    def __init__(self, ws: Workspace, hub: ViewHub, session_id: str, *, floor: str | None = None,
                 root: bool = True, on_stop: Callable[[], None] | None = None, replay: bool = False) -> None:
        self.ws = ws
        self.hub = hub
        self.session_id = session_id
        self.floor = floor
        self.root = root
        self.on_stop = on_stop
        self.status = "starting"
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self.title = ""
        self.continues = False
        """The run goes on from earlier prompts of its session: the header names the session, not "new"."""
        self.agent = ""
        self.model = ""
        self.children: dict[str, ChildSessionView[SessionView]] = {}
        self.cards: dict[str, ToolCardView] = {}
        self._items: dict[str, Any] = {}
        self._order: list[widgets.Widget] = []
        self._shown_order: tuple[int, ...] = ()
        self._dirty: set[str] = set()
        self._users: dict[str, bool] = {}
        self._switches: dict[str, str] = {}
        """Synthetic user messages that hand the session to another agent, with that agent."""
        self._assistants: dict[str, AssistantMessage] = {}
        self._prompts: dict[str, PermissionPromptView | QuestionPromptView] = {}
        self._placing: list[tuple[str | None, PermissionPromptView | QuestionPromptView]] = []
        self._header_shown = ""
        self.reveal: Callable[[], None] | None = None
        """Opens the sections this view is folded in (set on child views)."""

        self.header = widgets.HTML(layout=widgets.Layout(flex="1 1 auto", min_width="0"))  # it wraps; Stop keeps
        self.stop_button = button("Stop", "warning", icon="stop", tooltip="Stop the agent; what it did so far is kept")
        self.stop_button.on_click(lambda _: self.stop())
        self.todo = TodoView()
        self.body = widgets.VBox()
        top = [widgets.HBox([self.stop_button, self.header], layout=widgets.Layout(align_items="center"))] \
            if root else []
        self.widget = widgets.VBox([*top, self.todo.widget, self.body])
        self.widget.add_class("ocnb-session" if root else "ocnb-child-session")
        self._unwatch = hub.watch(session_id, self)
        if replay:
            self._replay()
        elif root:
            self._read_session()

    # ------------------------------------------------------------------------------------------ lifecycle

    @property
    def running(self) -> bool:
        return self.status in ("running", "retry")

    def queued(self) -> None:
        """Another prompt of this session is still running; this one waits its turn."""
        self.status = "queued"
        self._line("queued", "queued: another prompt of this session is still running")
        self.hub.mark(self)

    def start(self) -> None:
        self.status = "running"
        self.started_at = time.time()
        if self.root:
            self._read_session()
        self.hub.mark(self)

    def _read_session(self) -> None:
        """The session's title as stored, and whether prompts before this run's floor were answered in it."""
        try:
            self.title = self.ws.sessions.get(self.session_id).title
            floor = self.floor
            self.continues = floor not in (None, ids.NOT_STARTED) and \
                self.ws.sessions.current_agent(self.session_id, before=floor) is not None
        except Exception:  # a header must not stop the run it heads
            log.debug("could not read session %s for its header", self.session_id, exc_info=True)

    def stop(self) -> None:
        """The Stop button: ask whoever runs the session to stop it; safe from any thread."""
        if self.on_stop is not None:
            self.hub.call_soon(self.on_stop)
        self.hub.call_soon(self._disable_stop)

    def _disable_stop(self) -> None:
        self.stop_button.disabled = True

    def finish(self, status: str = "idle") -> None:
        """The run is over: show the state it ended in and stop following the bus.

        Everything shown says how it ended, not how it was going: the header, todo items still in progress,
        each child (as far as its task call got), and for a run a refusal ended, a closing sentence.
        """
        self.status = status
        self.ended_at = time.time()
        self.stop_button.disabled = True
        self.todo.end(status)
        self._dirty.add("todo")
        for card in self.cards.values():
            if card.child is not None and card.child.session.ended_at is None:
                card.child.session.finish(child_status(card.part))
        note = ended_html(status, refused_call(card.part for card in self.cards.values()))
        if note and "ended" not in self._items:
            self._items["ended"] = line = widgets.HTML(note)
            self._order.append(line)
        self.hub.mark(self)
        self.hub.flush_all()
        self._unwatch()

    # ------------------------------------------------------------------------------------------ events

    def handle(self, event: Event) -> None:
        match event:
            case MessagePartUpdated(part=part):
                self._on_part(part)
            case MessageUpdated(message=message):
                self._on_message(message)
            case SessionUpdated(session=session):
                self.title = session.title
            case SessionStatus():
                self._on_status(event)
            case SessionError(error=error):
                self._line(f"error-{len(self._items)}", f"✗ {error}", color=COLORS["error"])
            case HookReported(event=hook_event, lines=lines):
                for line in lines:
                    self._line(f"hook-{len(self._items)}", f"⚑ {hook_event} hook: {line}")
            case PermissionAsked(request=request):
                self._on_permission(request)
            case QuestionAsked(request=request):
                self._on_question(request)
            case PermissionReplied() | QuestionReplied():
                self._on_replied(event)
            case TodoUpdated(todos=todos):
                self.todo.update(todos)
                self._dirty.add("todo")
            case _:
                return
        self.hub.mark(self)

    def _on_status(self, event: SessionStatus) -> None:
        # A late "idle" must not overwrite how the run ended (stopped, error, rejected, done).
        if self.status not in ENDED or event.status != "idle":
            self.status = {"busy": "running", "retry": "retry", "idle": "idle"}[event.status]
        if event.status == "retry":
            self._line(f"retry-{event.attempt}", f"⟳ retrying (attempt {event.attempt}): {event.message}")

    def _visible(self, message_id: str) -> bool:
        return self.floor is None or message_id >= self.floor

    def _on_message(self, message: UserMessage | AssistantMessage) -> None:
        if not self._visible(message.id):
            return
        if isinstance(message, UserMessage):
            self._users[message.id] = message.synthetic
            if message.synthetic and self.agent and message.agent != self.agent:
                self._switches[message.id] = message.agent
            self.agent = self.agent or message.agent
        else:
            self._assistants[message.id] = message
            self.agent, self.model = message.agent, message.model

    def _on_part(self, part: Part) -> None:
        if not self._visible(part.message_id):
            return
        item = self._items.get(part.id)
        if item is not None:
            if isinstance(item, ToolCardView):
                item.update(part)  # type: ignore[arg-type]
                self._follow_child(item)
            else:
                item.part = part
            self._dirty.add(part.id)
            return
        if isinstance(part, TextPart):
            if part.message_id in self._users:
                if self._users[part.message_id] or part.synthetic:
                    self._add(part.id, _TextItem(part, lambda p: synthetic_html(p.text,
                                                                                self._switches.get(p.message_id))))
                elif not self.root:
                    self._add(part.id, _TextItem(part, lambda p: user_html(p.text, 'task')))
            elif part.text or part.ended_at is None:
                self._add(part.id, _StreamedText(part))
        elif isinstance(part, ReasoningPart):
            self._add(part.id, _TextItem(part, reasoning_html, min_interval_s=1.0))
        elif isinstance(part, ToolPart):
            kernel = self.ws.kernel
            card = ToolCardView(part, undo=kernel.undo if kernel is not None else None)
            self.cards[part.call_id] = card
            self._add(part.id, card)
            self._follow_child(card)
        elif isinstance(part, RetryPart):
            self._line(part.id, f"⟳ retry {part.attempt}: {part.error}")

    def _follow_child(self, card: ToolCardView) -> None:
        part = card.part
        if part.tool != "task" or card.child is not None:
            return
        metadata = getattr(part.state, "metadata", {}) or {}
        child_id = metadata.get("session_id")
        if not child_id:
            return
        view = SessionView(self.ws, self.hub, child_id, root=False, replay=True)
        view.status = "running"
        view.started_at = time.time()
        agent, description = task_heading(part)
        child = ChildSessionView(view, agent=agent, description=description)
        self.children[child_id] = child
        card.attach_child(child)

        def reveal() -> None:
            child.expand()
            if self.reveal is not None:
                self.reveal()

        view.reveal = reveal

    def _on_permission(self, request: PermissionRequest) -> None:
        view = PermissionPromptView(request, self.ws.permissions.reply, self.hub.call_soon, who=self.hub.person,
                                    approvers=self.ws.approvers)
        self._prompts[request.id] = view
        self._placing.append((request.tool.call_id if request.tool else None, view))

    def _on_question(self, request: QuestionRequest) -> None:
        view = QuestionPromptView(request, self.ws.questions.reply, self.ws.questions.reject, self.hub.call_soon)
        self._prompts[request.id] = view
        self._placing.append((request.tool.call_id if request.tool else None, view))

    def _on_replied(self, event: PermissionReplied | QuestionReplied) -> None:
        view = self._prompts.pop(event.request_id, None)
        match view, event:
            case PermissionPromptView(), PermissionReplied():
                view.resolve(event)
            case QuestionPromptView(), QuestionReplied():
                view.resolve(event)
            case _:
                return
        card = self.cards.get(view.request.tool.call_id) if view.request.tool else None
        if card is not None and view.request.id in card.waiting:
            card.waiting.discard(view.request.id)
            self._dirty.add(card.part.id)

    def _line(self, key: str, text: str, color: str = COLORS["warning"]) -> None:
        if key in self._items:
            return
        html = widgets.HTML(f'<div style="color:{color};margin:2px 0">{escape(text)}</div>')
        self._items[key] = html
        self._order.append(html)

    def _add(self, key: str, item: Any) -> None:
        self._items[key] = item
        self._order.append(item.widget)
        self._dirty.add(key)

    def _replay(self) -> None:
        """Show what the store already holds (a child whose first events came before its view)."""
        for entry in self.ws.sessions.messages(self.session_id):
            self._on_message(entry.message)
            for part in entry.parts:
                self._on_part(part)
        self.title = self.ws.sessions.get(self.session_id).title
        self.hub.mark(self)

    # ------------------------------------------------------------------------------------------ output

    def flush(self) -> None:
        """Push what changed since the last flush to the widgets (the hub calls this, paced)."""
        now = time.time()
        dirty, self._dirty = self._dirty, set()
        for key in dirty:
            if key == "todo":
                self.todo.flush()
                continue
            item = self._items.get(key)
            if isinstance(item, ToolCardView):
                item.flush(now)
            elif item is not None and hasattr(item, "flush"):
                item.flush()
        for card in self.cards.values():
            if card.running and card.part.id not in dirty:
                card.flush(now)  # the elapsed time of running tools: it changes once a second
        placing, self._placing = self._placing, []
        if placing and self.reveal is not None:
            self.reveal()  # a person must see a question put to them, however deep the child is
        for call_id, prompt in placing:
            asking = self.cards.get(call_id) if call_id else None
            if asking is not None:
                if prompt.answered is None:
                    asking.add_prompt(prompt.widget, prompt.request.id)
                    asking.flush(now)
                else:
                    asking.prompts.children = (*asking.prompts.children, prompt.widget)
            else:
                self._order.append(prompt.widget)
        order = tuple(id(w) for w in self._order)
        if order != self._shown_order:
            self._shown_order = order
            self.body.children = tuple(self._order)
        if self.root:
            self._flush_header(now)

    def totals(self) -> tuple[int, float]:
        """Tokens and dollars of this view's messages and of its children's."""
        tokens = sum(m.tokens.total for m in self._assistants.values())
        cost = sum(m.cost for m in self._assistants.values())
        for child in self.children.values():
            t, c = child.session.totals()
            tokens, cost = tokens + t, cost + c
        return tokens, cost

    def elapsed_s(self, now: float | None = None) -> float | None:
        if self.started_at is None:
            return None
        return (self.ended_at or now or time.time()) - self.started_at

    def _flush_header(self, now: float) -> None:
        tokens, cost = self.totals()
        value = header_html(agent=self.agent or "…", model=self.model or "…", title=self.heading(),
                            status=self.status, elapsed_s=self.elapsed_s(now), tokens=tokens, cost=cost)
        if value != self._header_shown:
            self._header_shown = value
            self.header.value = value

    def heading(self) -> str:
        """What the header calls the session: `continues “<title>”` for a run of a session already under way,
        its title once the title agent named a new one, else "new session"."""
        named = bool(self.title) and not self.title.startswith(DEFAULT_PREFIXES)
        if self.continues:
            return f"continues “{self.title}”" if named else f"continues session {self.session_id}"
        return self.title if named else "new session"

    def close(self) -> None:
        """Close every widget of this view (after the transcript replaced it), here and in the front end."""
        close_tree(self.widget)
