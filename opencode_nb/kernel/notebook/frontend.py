"""The kernel's end of the `opencode_nb` comm, which the JupyterLab extension answers (labextension/PROTOCOL.md).

Either side may open the comm: the kernel opens one when the extension loads, and registers the target so
a page opened or reloaded later can open its own. Whichever comm sent the latest hello is the live one,
and requests go there. A hello on a comm other than the live one means a page connected anew (a reload,
the notebook reopened): the page that showed the cells running now is gone, and whoever keeps a cell up
to date (a run in flight) must hand its outputs to the new page itself, since the kernel's messages to
the old cell's request reach nobody (`pages`, `on_page`).

A request carries a fresh id and waits, with a timeout, for the one reply whose `reply_to` names it;
events (`cell_done`) name the request they belong to. The page asks the kernel too (`answer`: a card's
Undo), and is answered on the comm it asked on.

Several pages can be connected at once: two people on one notebook under real-time collaboration, or two
tabs. The comm the kernel opened reaches all of them, so each request names the page that is to answer it
(`to`, the page id of its hello) and the others ignore it: a change is made once, in one page, and reaches
the others through the shared document. When the live page goes, the one that greeted before it takes over.
Each hello also names the person signed in to that page (the server's identity, `/api/me`), keyed by the
page's kernel client session, which every message from that page carries in its header: so a click on a
widget can be told apart by who made it (`person_now`).

Comm callbacks may run on a thread other than the kernel loop's (JupyterLab sends comm messages over
kernel subshells, which ipykernel 7.0–7.3 handle on their own threads), and while an `%%agent` cell
awaits, ipykernel 7.4 dispatches them beside it. So a callback only reads the message and hands the
result to the waiting loop with `call_soon_threadsafe`; it never waits for anything itself, or the
kernel would stop handling the very reply it waits for.

This module imports nothing heavy: it is built when the extension loads.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...people import Person
from ..futures import fail, settle

log = logging.getLogger(__name__)

COMM_TARGET = "opencode_nb"

REQUEST_TIMEOUT_S = 10.0
"""How long a request waits for its reply unless the caller says otherwise (running cells says otherwise)."""

Event = Callable[[dict[str, Any]], None]
Answer = Callable[[dict[str, Any], Callable[[dict[str, Any]], None]], None]
"""`answer(request, reply)`: called on the comm's thread; `reply(result)` once, from any thread."""


class FrontendError(Exception):
    """A request to the front end could not be made or failed; `str()` says what and what to do."""


class FrontendTimeout(FrontendError):
    """No reply came in time; the front end may still be doing what it was asked."""


NO_EXTENSION = (
    "The opencode_nb JupyterLab extension is not connected to this kernel, so the live notebook cannot be "
    "reached. It ships with the opencode-nb package: check that `jupyter labextension list` shows "
    "opencode-nb enabled, then reload the page.")


@dataclass
class _Pending:
    action: str
    comm: Any
    loop: asyncio.AbstractEventLoop | None
    future: asyncio.Future[dict[str, Any]] | None
    on_event: Event | None


class Frontend:
    """The comm client: who answered, what it can do, and requests to it."""

    def __init__(self, *, version: str = "", on_hello: Callable[[dict[str, Any]], None] | None = None) -> None:
        """`on_hello(hello)` is told each hello, on whatever thread the comm delivers it."""
        self.version = version
        self.on_hello = on_hello
        self.hello: dict[str, Any] | None = None
        """The latest hello: `{hello, version, capabilities, path, frontend}`; kept after its comm closes."""
        self._live: Any = None
        self._own: Any = None
        self._pending: dict[str, _Pending] = {}
        self._listeners: list[tuple[Event, asyncio.AbstractEventLoop | None]] = []
        self._page_listeners: list[Callable[[], None]] = []
        self._answers: dict[str, Answer] = {}
        self._lock = threading.Lock()
        self._registered = False
        self.pages = 0
        """How many times a page connected: each hello on a comm that was not the live one counts."""
        self._greeters: dict[tuple[int, str], tuple[Any, dict[str, Any]]] = {}
        """Each (comm, page) that greeted, oldest first: where requests go when the live page leaves."""
        self._people: dict[str, Person] = {}
        """The person of each page, by the kernel client session its messages carry in their header."""
        self._by_session: dict[str, tuple[Any, dict[str, Any]]] = {}
        """The comm and hello of each page that greeted, by its client session."""
        self._preferred: str | None = None
        """The client session of the page that ran the latest prompt: its requests go there while it is here."""

    # ------------------------------------------------------------------------------------------ state

    @property
    def live(self) -> bool:
        """A comm whose hello we have is open: requests can be made."""
        return self._live is not None

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset((self.hello or {}).get("capabilities") or [])

    @property
    def path(self) -> str | None:
        """The notebook's path relative to the server root, as the extension said."""
        path = (self.hello or {}).get("path")
        return str(path) if path else None

    @property
    def name(self) -> str:
        """`JupyterLab 4.6.6` and the extension's version, for messages."""
        hello = self.hello or {}
        name = str(hello.get("frontend") or hello.get("hello") or "the front end")
        return f"{name} (extension {hello['version']})" if hello.get("version") else name

    # ------------------------------------------------------------------------------------------ opening

    def open(self) -> None:
        """Register the comm target and open our own comm; quietly nothing where comms are unavailable."""
        try:
            from comm import create_comm, get_comm_manager

            manager = get_comm_manager()
            manager.register_target(COMM_TARGET, self._opened_by_frontend)
            self._registered = True
            self._own = create_comm(target_name=COMM_TARGET, data={"hello": "kernel", "version": self.version})
            self._attach(self._own)
        except Exception:  # terminal IPython, or a comm implementation that refuses
            log.debug("could not open the opencode_nb comm", exc_info=True)

    def close(self) -> None:
        """Unregister the target and close our comm (the extension is unloaded)."""
        if self._registered:
            try:
                from comm import get_comm_manager

                get_comm_manager().unregister_target(COMM_TARGET, self._opened_by_frontend)
            except Exception:
                log.debug("could not unregister the opencode_nb target", exc_info=True)
            self._registered = False
        with self._lock:
            comms = {id(c): c for c in (self._own, self._live) if c is not None}
        for comm in comms.values():
            self._closed(comm)
            try:
                comm.close()
            except Exception:
                log.debug("could not close an opencode_nb comm", exc_info=True)

    @property
    def collaborative(self) -> bool:
        """The live page's notebook is a shared document (real-time collaboration is on)."""
        return bool((self.hello or {}).get("collaborative"))

    def person_now(self) -> Person | None:
        """The person whose page sent the message the kernel handles now (a widget's click), if known."""
        session = _session_now()
        with self._lock:
            return self._people.get(session) if session is not None else None

    def prefer_sender(self) -> None:
        """Send requests to the page that sent the message handled now (the cell that runs a prompt), so its
        notices, pending changes and active cell are that person's, not whoever's page greeted last."""
        session = _session_now()
        with self._lock:
            if session is not None and session in self._by_session:
                self._preferred = session

    def _opened_by_frontend(self, comm: Any, msg: dict[str, Any]) -> None:
        self._attach(comm)
        data = (msg.get("content") or {}).get("data") or {}
        if "hello" in data:
            self._greeted(comm, data, msg)

    def _attach(self, comm: Any) -> None:
        comm.on_msg(lambda msg: self._received(comm, msg))
        comm.on_close(lambda msg: self._closed(comm))

    # ------------------------------------------------------------------------------------------ receiving

    def _received(self, comm: Any, msg: dict[str, Any]) -> None:
        data = (msg.get("content") or {}).get("data") or {}
        if not isinstance(data, dict):
            return
        if "hello" in data:
            self._greeted(comm, data, msg)
        elif "reply_to" in data:
            self._replied(data)
        elif "action" in data and "request_id" in data:
            self._asked(comm, data)
        elif "event" in data:
            self._event(data)

    def _greeted(self, comm: Any, hello: dict[str, Any], msg: dict[str, Any]) -> None:
        page = str(hello.get("page") or "")
        person = _person(hello.get("user"))
        session = (msg.get("header") or {}).get("session")
        with self._lock:
            # The extension sends its hello twice on each comm it opens, and again once it knows its person.
            fresh = comm is not self._live or page != str((self.hello or {}).get("page") or "")
            self._live = comm
            self.hello = dict(hello)
            self._greeters.pop((id(comm), page), None)
            self._greeters[(id(comm), page)] = (comm, dict(hello))
            if isinstance(session, str) and session:
                self._by_session[session] = (comm, dict(hello))
                if person is not None:
                    self._people[session] = person
            if fresh:
                self.pages += 1
                if session != self._preferred:
                    # A page connected since the prompt ran (a reload, another tab): the page that ran it may be
                    # gone without a word, so the newest page answers again, as before any prompt.
                    self._preferred = None
            listeners = list(self._page_listeners) if fresh else []
        if self.on_hello is not None:
            self.on_hello(dict(hello))
        for listener in listeners:
            try:
                listener()
            except Exception:
                log.exception("an opencode_nb page listener failed")

    def _replied(self, data: dict[str, Any]) -> None:
        with self._lock:
            pending = self._pending.pop(str(data.get("reply_to")), None)
        if pending is None:
            log.debug("a reply nobody waits for: %s", data.get("reply_to"))
            return
        if pending.future is None:  # sent without waiting (`send`): only a failure is worth a word
            if not data.get("ok"):
                log.warning("the front end could not %s: %s", pending.action, data.get("error"))
            return
        future = pending.future
        assert pending.loop is not None
        pending.loop.call_soon_threadsafe(settle, future, data)

    def _asked(self, comm: Any, data: dict[str, Any]) -> None:
        request_id, action = data.get("request_id"), str(data.get("action"))

        def reply(result: dict[str, Any]) -> None:
            try:
                comm.send({"ok": True, **result, "reply_to": request_id})
            except Exception:  # the page went away: nobody is left to answer
                log.debug("could not answer the page's %s", action, exc_info=True)

        answer = self._answers.get(action)
        if answer is None:
            reply({"ok": False, "error": f"this kernel does not answer {action!r}; known: {sorted(self._answers)}"})
            return
        try:
            answer(data, reply)
        except Exception as exc:
            log.exception("answering the page's %s failed", action)
            reply({"ok": False, "error": str(exc)})

    def _event(self, data: dict[str, Any]) -> None:
        with self._lock:
            pending = self._pending.get(str(data.get("request_id")))
            listeners = list(self._listeners)
        targets: list[tuple[Event, asyncio.AbstractEventLoop | None]] = list(listeners)
        if pending is not None and pending.on_event is not None:
            targets.append((pending.on_event, pending.loop))
        for callback, loop in targets:
            if loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(_quietly, callback, data)
            else:
                _quietly(callback, data)

    def _closed(self, comm: Any) -> None:
        with self._lock:
            if self._own is comm:
                self._own = None
            for key in [k for k, (c, _) in self._greeters.items() if c is comm]:
                del self._greeters[key]
            for session in [s for s, (c, _) in self._by_session.items() if c is comm]:
                del self._by_session[session]
            if self._live is comm:
                self._live = None
                if self._greeters:  # another page is still connected: it answers from now on
                    self._live, hello = list(self._greeters.values())[-1]
                    self.hello = dict(hello)
            gone = [(rid, p) for rid, p in self._pending.items() if p.comm is comm]
            for rid, _ in gone:
                del self._pending[rid]
        for _, pending in gone:
            if pending.future is not None and pending.loop is not None and not pending.loop.is_closed():
                error = FrontendError(f"The front end closed the connection (the page was reloaded or the notebook "
                                      f"closed) before it answered {pending.action}.")
                future = pending.future
                pending.loop.call_soon_threadsafe(fail, future, error)

    def subscribe(self, callback: Event) -> Callable[[], None]:
        """Be told every event (`cell_done`, …), on the loop running now if any; returns the unsubscriber."""
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        entry = (callback, loop)
        with self._lock:
            self._listeners.append(entry)

        def unsubscribe() -> None:
            with self._lock:
                if entry in self._listeners:
                    self._listeners.remove(entry)

        return unsubscribe

    def answer(self, action: str, answer: Answer) -> None:
        """Answer the page's requests for `action` (PROTOCOL.md, requests from the page)."""
        self._answers[action] = answer

    def on_page(self, callback: Callable[[], None]) -> None:
        """Be told (on the comm's thread) each time a page connects anew, after `pages` has counted it."""
        with self._lock:
            self._page_listeners.append(callback)

    # ------------------------------------------------------------------------------------------ requesting

    def require(self, action: str) -> tuple[Any, dict[str, Any]]:
        """The live comm, if it can do `action`, and the address of its page (`{"to": page}`; none for an
        extension that names no page).

        Raises:
            FrontendError: no extension answers, or the one that does cannot do `action`.
        """
        with self._lock:
            comm, hello = self._live, self.hello
            if self._preferred is not None and self._preferred in self._by_session:
                comm, hello = self._by_session[self._preferred]
        if comm is None:
            raise FrontendError(NO_EXTENSION)
        if action not in set((hello or {}).get("capabilities") or []):
            raise FrontendError(f"{self.name} cannot {action}: update the opencode_nb JupyterLab extension "
                                "(it ships with the opencode-nb package) and reload the page.")
        page = (hello or {}).get("page")
        return comm, ({"to": page} if page else {})

    async def request(self, action: str, timeout_s: float = REQUEST_TIMEOUT_S, *, on_event: Event | None = None,
                      **params: Any) -> dict[str, Any]:
        """Send `{request_id, action, **params}` and return the reply (`ok: true`).

        Args:
            on_event: told each event of this request (`cell_done` while cells run), on this loop.

        Raises:
            FrontendError: no extension, a missing capability, the comm closed, or the extension answered
                `ok: false` (its `error` is in the message).
            FrontendTimeout: no reply within `timeout_s`.
        """
        comm, to = self.require(action)
        loop = asyncio.get_running_loop()
        request_id = _request_id()
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        with self._lock:
            self._pending[request_id] = _Pending(action, comm, loop, future, on_event)
        try:
            comm.send({"request_id": request_id, "action": action, **params, **to})
            async with asyncio.timeout(timeout_s):
                reply = await future
        except TimeoutError:
            raise FrontendTimeout(f"{self.name} did not answer {action} within {timeout_s:g} s.") from None
        finally:
            with self._lock:
                self._pending.pop(request_id, None)
        if not reply.get("ok"):
            raise FrontendError(f"{self.name} could not {action}: {reply.get('error') or 'it gave no reason'}")
        return reply

    def send(self, action: str, **params: Any) -> str:
        """Send a request without waiting for its reply (a failure is logged); returns its id.

        Raises:
            FrontendError: no extension, or it cannot do `action`.
        """
        comm, to = self.require(action)
        request_id = _request_id()
        with self._lock:
            self._pending[request_id] = _Pending(action, comm, None, None, None)
        comm.send({"request_id": request_id, "action": action, **params, **to})
        return request_id


def _session_now() -> str | None:
    """The client session (one per page's kernel connection) of the message the kernel handles now."""
    try:
        from IPython import get_ipython

        kernel = getattr(get_ipython(), "kernel", None)
        parent = kernel.get_parent() if kernel is not None else None
    except Exception:
        return None
    session = ((parent or {}).get("header") or {}).get("session")
    return session if isinstance(session, str) and session else None


def _person(user: Any) -> Person | None:
    if not isinstance(user, dict) or not isinstance(user.get("username"), str) or not user["username"]:
        return None
    shown = user.get("display_name") or user.get("name") or ""
    return Person(username=user["username"], display_name=shown if isinstance(shown, str) else "")


def _request_id() -> str:
    return f"req_{uuid.uuid4().hex}"


def _quietly(callback: Event, data: dict[str, Any]) -> None:
    try:
        callback(data)
    except Exception:
        log.exception("an opencode_nb event callback failed")
