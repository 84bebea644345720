"""Is a person looking? Deciding whether asks wait for a click or are answered by policy.

Signals that a front end is there: the kernel was started by a Jupyter server for a notebook
(`JPY_SESSION_NAME`), our labextension answers the `opencode_nb` comm with a hello, or a front end reports
that it displayed a view (ipywidgets' `_view_count`, which JupyterLab, Notebook 7 and VS Code send when
they render a widget). nbclient, `jupyter nbconvert --execute` and other headless runners
send neither, and `OPENCODE_NB_HEADLESS=1` says so outright. The first prompt waits briefly for a signal;
without one the kernel is headless for good, and every ask is answered at once by the policy
(`Agent.permission`: deny, allow or allow-readonly), with the reason shown in the transcript.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # the extension must load fast: pydantic models are imported with the workspace
    from ..permission.events import PermissionRequest
    from ..question.events import QuestionRequest

Mode = Literal["unknown", "interactive", "headless", "terminal"]


class Presence:
    def __init__(self, *, headless: bool | None = None, terminal: bool = False,
                 policy: Callable[[], str] = lambda: "deny") -> None:
        """`policy` gives the current headless policy (`Agent.permission`), read at each ask."""
        if headless is None:
            headless = os.environ.get("OPENCODE_NB_HEADLESS", "").strip().lower() in ("1", "true", "yes")
        self.mode: Mode = "terminal" if terminal else "headless" if headless else "unknown"
        self.reason = "OPENCODE_NB_HEADLESS is set" if headless else ""
        if self.mode == "unknown" and os.environ.get("JPY_SESSION_NAME"):
            # A Jupyter server started this kernel for a notebook a person has open. Its front end may not
            # render a view at once (JupyterLab draws only the cells in sight), so do not wait for one.
            self.mode, self.reason = "interactive", "a Jupyter server started the kernel for a notebook"
        self.frontend: dict[str, Any] | None = None
        """The labextension's latest hello (`{"hello", "version", "capabilities", "path", "frontend"}`)."""
        self.policy = policy
        self._waiters: list[asyncio.Future[None]] = []

    # ------------------------------------------------------------------------------------------ signals

    def greeted(self, hello: dict[str, Any]) -> None:
        """The JupyterLab extension said hello (`Frontend` passes it on): a person has the notebook open.

        This is the one exact signal; the others (the server's variable, a rendered view) only suggest it.
        May be called from any thread.
        """
        self.frontend = dict(hello)
        name = hello.get("frontend") or hello.get("hello") or "JupyterLab"
        self.present(f"{name} answered with the opencode_nb extension", exact=True)

    def watch(self, widget: Any) -> None:
        """Count the front end's renderings of `widget` as a sign of a person."""
        if self.mode != "unknown":
            return
        widget._view_count = 0

        def seen(change: dict[str, Any]) -> None:
            if (change.get("new") or 0) > 0:
                self.present("a front end displayed the view")

        widget.observe(seen, "_view_count")

    def present(self, reason: str, *, exact: bool = False) -> None:
        """A front end showed itself; may be called from any thread. An exact sign replaces a guessed reason."""
        if self.mode == "terminal" or (self.mode == "interactive" and not exact):
            return
        self.mode, self.reason = "interactive", reason
        for waiter in self._waiters:
            loop = waiter.get_loop()
            loop.call_soon_threadsafe(_settle, waiter)

    async def decide(self, timeout_s: float) -> Mode:
        """Wait up to `timeout_s` for a front end, once; afterwards answer at once."""
        if self.mode != "unknown":
            return self.mode
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        started = time.monotonic()
        try:
            await asyncio.wait_for(waiter, timeout_s)
        except TimeoutError:
            if self.mode == "unknown":
                self.mode = "headless"
                self.reason = f"no front end showed itself within {time.monotonic() - started:.1f} s"
        finally:
            self._waiters.remove(waiter)
        return self.mode

    # ------------------------------------------------------------------------------------------ policies

    @property
    def interactive(self) -> bool:
        return self.mode in ("interactive", "terminal", "unknown")

    def permission(self, request: PermissionRequest) -> Literal["allow", "deny"] | None:
        """The workspace's permission policy: None (ask a person) unless nobody is present."""
        if self.interactive:
            return None
        from ..permission.unattended import decide  # loaded at the first ask: the extension must load fast

        return decide(self.policy(), request)

    def question(self, request: QuestionRequest) -> list[list[str]] | Literal[False] | None:
        """Headless answers: with policy allow, each question's first option; otherwise dismissed."""
        if self.interactive:
            return None
        from ..question.service import unattended_answers

        return unattended_answers(self.policy(), request)


def _settle(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
