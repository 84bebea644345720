"""Pending cell changes on the page: `show_pending` to it, `decide_pending` from it (labextension/PROTOCOL.md).

The page shows each pending change in place (a panel in the cell, or below the cell an insert goes under)
and never changes a cell itself: its Accept and Reject ask the kernel, which applies the change as
`%agent accept` would. The kernel sends the changes whose state changed, with every one still pending,
after each proposal and decision, and all pending ones whenever a page connects, so a reloaded page shows
them again. A page that cannot show them (an older extension: no `show_pending` capability) is sent
nothing; the tool's card then prints the `%agent accept N` lines instead.

Requests arrive on the comm's thread; the changes belong to the kernel's loop, so the work is handed to it
(`handoff.run_on`) and the reply sent from there, as the card's Undo does (`card_undo.py`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from ...handoff import run_on
from ...people import Approvers
from .frontend import Frontend, FrontendError
from .pending import PendingChange, PendingChanges

log = logging.getLogger(__name__)

SHOW = "show_pending"
DECIDE = "decide_pending"


class PendingPage:
    def __init__(self, pending: PendingChanges, frontend: Frontend,
                 loop: Callable[[], asyncio.AbstractEventLoop | None],
                 approvers: Callable[[], Approvers | None] = lambda: None) -> None:
        self.pending = pending
        self.frontend = frontend
        self.loop = loop
        self.approvers = approvers
        """Who may decide a change from a page (`approvals`): a change accepted is a cell change approved."""
        self._tasks: set[asyncio.Task[None]] = set()

    def attach(self) -> None:
        self.pending.on_change = self.show
        self.pending.in_place = lambda: self.shows_pending
        self.frontend.answer(DECIDE, self._decide_asked)
        self.frontend.on_page(lambda: run_on(self.loop(), self.show, []))

    @property
    def shows_pending(self) -> bool:
        """A connected page draws pending changes in place."""
        return self.frontend.live and SHOW in self.frontend.capabilities

    def show(self, changed: list[PendingChange]) -> None:
        """Send `changed` and every pending change; nothing when no page can show them."""
        if not self.shows_pending:
            return
        sent = {c.n: c for c in [*changed, *self.pending.pending()]}
        if not sent:
            return  # a page that connects shows nothing to begin with
        try:
            self.frontend.send(SHOW, changes=[c.page_view() for c in sorted(sent.values(), key=lambda c: c.n)])
        except FrontendError as exc:  # the page went away meanwhile: the next one is sent them when it connects
            log.debug("could not show the pending changes: %s", exc)

    def _decide_asked(self, request: dict[str, Any], reply: Callable[[dict[str, Any]], None]) -> None:
        n, accept = request.get("n"), request.get("accept")
        rerun, force = request.get("rerun", True), request.get("force", False)
        if not (n is None or (isinstance(n, int) and not isinstance(n, bool))) or not isinstance(accept, bool) \
                or not isinstance(rerun, bool) or not isinstance(force, bool):
            reply({"ok": False, "error": "decide_pending takes n (a change's number, or null for every pending one), "
                                         "accept (true or false), and optionally rerun and force (true or false)."})
            return
        rule = self.approvers()
        refusal = rule.refusal(self.frontend.person_now()) if rule is not None else None
        if refusal is not None:
            reply({"ok": False, "error": refusal})
            return
        loop = self.loop()
        if loop is None or loop.is_closed():
            reply({"ok": False, "error": "No change is pending in this kernel."})
            return

        def start() -> None:
            task = asyncio.ensure_future(self._decide(n, accept, rerun, force, reply))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

        run_on(loop, start)

    async def _decide(self, n: int | None, accept: bool, rerun: bool, force: bool,
                      reply: Callable[[dict[str, Any]], None]) -> None:
        try:
            decisions = await self.pending.decide(n, accept, rerun=rerun, force=force)
        except LookupError as exc:
            reply({"ok": False, "error": str(exc.args[0])})
            return
        except Exception as exc:
            log.exception("deciding a pending change from the page failed")
            reply({"ok": False, "error": f"Deciding the change failed: {exc}"})
            return
        reply({"decisions": [d.reply() for d in decisions]})
