"""Asking a person, and remembering what they said "always" to.

`ask` decides at once when it can: a deny on any pattern refuses the call, allow on every pattern lets
it through. Otherwise the request is published as `permission.asked` and the calling tool waits on a
future until `reply` is called, typically by a widget click.

Clicks may arrive on another thread (JupyterLab sends widget messages over kernel subshells). `reply`
therefore takes the request out of the pending table under a lock, so a double click is a clear
`NotFoundError`, and hands the rest of the work to the event loop the request was made on with
`call_soon_threadsafe`: futures, bus events and cascades only ever run on that loop.

"Always" grants are scoped to the agent that asked and to the session tree it asked in: approving
`npm test *` for the explore subagent grants nothing to build, and nothing outside that tree. They are
kept on the root session through a `GrantStore`, so they survive a kernel restart.

Some permissions guard what a catch-all must not reach (`NAMED_ONLY`): for them only the rules whose
permission is exactly that name are checked, last match wins among them, nothing naming it means ask. A
global `"*": allow` (or `"git_*": allow`) is the very configuration these asks hold against; "always"
grants name their permission, so they count.

A grant counts for exactly the permission it was given at, never for another its name would match as a
pattern: "always" at one tool's prompt allows that tool and nothing else. Tool names are kept off the built-in
permissions' names (`tool/reserved.py`), so no tool from elsewhere is asked under one of ours.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from .. import id as ids
from ..bus import Bus
from ..errors import CorrectedError, DeniedError, NotFoundError, PolicyRefusedError, RejectedError
from ..handoff import run_on
from .events import DecidedBy, PermissionAsked, PermissionReplied, PermissionRequest, Reply, ToolRef
from .rules import Action, Grant, Rule, Ruleset, as_ruleset, deciding_rules, evaluate
from .wildcard import wildcard_match

if TYPE_CHECKING:
    from .managed import ManagedRules

log = logging.getLogger(__name__)

Policy = Callable[[PermissionRequest], Action | None]
"""Decides for runs with nobody to ask: "allow", "deny", or None (or "ask") to ask a person after all."""

REPLIES: tuple[Reply, ...] = ("once", "always", "reject")

class GrantStore(Protocol):
    """Where "always" grants live: on the root session of a tree."""

    def root_of(self, session_id: str) -> str: ...

    def load_grants(self, root_id: str) -> list[Grant]: ...

    def save_grants(self, root_id: str, grants: list[Grant]) -> None: ...


Decider = Callable[[PermissionRequest], Awaitable[tuple[str, Literal["allow", "deny", "ask"]] | None]]
"""A plugin's `permission.ask`: its name and its answer, or None to leave the ask to the person."""


@dataclass
class _Pending:
    request: PermissionRequest
    ruleset: Ruleset
    root: str
    future: asyncio.Future[str | None]
    """Settled with who allowed the call (see `ask`), or failed with why it may not go ahead."""
    loop: asyncio.AbstractEventLoop
    held: bool = False
    """A managed rule asks for this call: only a person's reply to it counts, never a grant."""


class PermissionService:
    def __init__(
        self,
        bus: Bus,
        *,
        tree: GrantStore | None = None,
        policy: Policy | None = None,
        timeout_s: float | None = None,
        managed: ManagedRules | None = None,
    ) -> None:
        self.bus = bus
        self.managed = managed
        """The administrator's policy: its deny and ask are decided here before, and above, every other rule."""
        self.tree = tree
        self.policy = policy
        self.timeout_s = timeout_s
        self.deciders: list[Decider] = []
        """Plugins' `permission.ask`, consulted in order before a person is asked."""
        self._pending: dict[str, _Pending] = {}
        self._grants: dict[str, list[Grant]] = {}
        self._lock = threading.RLock()

    # ------------------------------------------------------------------------------------------ asking

    async def ask(
        self,
        session_id: str,
        agent: str,
        permission: str,
        patterns: Iterable[str],
        always: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
        ruleset: Iterable[Rule] = (),
        tool: ToolRef | None = None,
        always_ask: bool = False,
        preapproved: str | None = None,
    ) -> str | None:
        """Return when the call may go ahead: with the person who allowed it where a page named them, else None.

        `always_ask` makes a person decide even when the rules allow everything (a shell line that did
        not parse cleanly cannot be trusted to mean what its patterns say); a deny still refuses at once.
        A call with no patterns at all is asked about too: nothing was checked, so nothing is allowed.

        `preapproved` names a hook that allowed this call: it answers what would be asked, and nothing more: a
        deny rule still refuses, and a managed ask still goes to a person. Before a person (or the unattended
        policy) is asked, each `deciders` entry (a plugin's `permission.ask`) may answer: `allow`, `deny`,
        or nothing (then the person is asked); a managed ask is a person's to answer, never a plugin's.

        Raises:
            DeniedError: a rule denies one of the patterns (even if another would only ask).
            PolicyRefusedError: nobody is present to ask and the policy refuses.
            CorrectedError: the person refused and said why.
            RejectedError: the person (or a timeout) refused.
        """
        patterns = list(patterns)
        held, by = self.managed.decide(permission, patterns) if self.managed is not None else (None, None)
        if held == "deny" and self.managed is not None and by is not None:
            raise DeniedError([by], reason=f"The administrator's managed configuration ({self.managed.path}) denies "
                              f"{permission} {by.pattern!r}; no setting here can allow it. Do without it.",
                              managed=str(self.managed.path))
        rules = deciding_rules(permission, as_ruleset(ruleset))
        root = self._root(session_id)
        granted = self._granted(root, agent, permission)
        decisions = [evaluate(permission, p, rules, granted).action for p in patterns]
        if "deny" in decisions:
            raise DeniedError([r for r in rules if wildcard_match(permission, r.permission)])
        if decisions and all(d == "allow" for d in decisions) and not always_ask and held != "ask":
            return None
        if preapproved is not None and held != "ask":
            return None
        request = PermissionRequest(
            id=ids.ascending("permission"),
            session_id=session_id,
            agent=agent,
            permission=permission,
            patterns=patterns,
            always=list(always),
            metadata=dict(metadata or {}),
            tool=tool,
        )
        for decider in self.deciders if held != "ask" else ():
            said = await _decided(decider, request)
            if said is not None:
                self.bus.publish(PermissionAsked(request=request))  # so transcripts show what was decided
                name, answer = said
                if answer == "allow":
                    self._publish(request, "once", reason=f"allowed by {name}", decided_by="hook")
                    return None
                self._publish(request, "reject", reason=f"denied by {name}", decided_by="hook")
                raise DeniedError([], reason=f"{name} denied {permission} {', '.join(patterns)}. Do without it, "
                                             "or say what you need the person to allow.")
        if self.policy is not None:
            decision = self.policy(request)
            if held == "ask" and decision == "allow":
                decision = "deny"  # the managed ask wants a person; a policy for nobody present cannot be one
            if decision == "allow" or decision == "deny":
                self.bus.publish(PermissionAsked(request=request))  # so transcripts show what was decided
                self._decide_by_policy(request, decision)
                return None
        loop = asyncio.get_running_loop()
        pending = _Pending(request, rules, root, loop.create_future(), loop, held=held == "ask")
        with self._lock:
            self._pending[request.id] = pending
        self.bus.publish(PermissionAsked(request=request))
        timer = loop.call_later(self.timeout_s, self._expire, request.id) if self.timeout_s else None
        try:
            return await pending.future
        except asyncio.CancelledError:
            if self._take(request.id) is not None:  # stopped while waiting: close the prompt
                self._publish(request, "reject", reason="aborted", decided_by="stop")
            raise
        finally:
            if timer is not None:
                timer.cancel()

    def _decide_by_policy(self, request: PermissionRequest, decision: Action) -> None:
        if decision == "allow":
            self._publish(request, "once", reason="allowed by policy: nobody is present to ask", decided_by="policy")
            return
        self._publish(request, "reject", reason="refused by policy: nobody is present to ask", decided_by="policy")
        raise PolicyRefusedError(
            f"Permission for {request.permission} {', '.join(request.patterns)} was refused: this run has "
            "nobody to approve it and its policy refuses what it would have to ask for. Do without it, "
            "or say what you need the person to allow."
        )

    # ------------------------------------------------------------------------------------------ replying

    def reply(self, request_id: str, reply: Reply, message: str | None = None, *, by: str | None = None) -> None:
        """Answer a pending request; safe to call from any thread. `by` is who answered, for the record.

        Raises:
            NotFoundError: no pending request has this id (never asked, or already answered).
            ValueError: `reply` is not once, always or reject.
        """
        if reply not in REPLIES:
            raise ValueError(f"reply must be one of {', '.join(REPLIES)}, not {reply!r}")
        pending = self._take(request_id)
        if pending is None:
            raise NotFoundError("permission request", request_id)
        run_on(pending.loop, self._apply, pending, reply, message, by)

    def _apply(self, pending: _Pending, reply: Reply, message: str | None, by: str | None) -> None:
        request = pending.request
        self._publish(request, reply, message=message, by=by)
        if reply == "reject":
            _fail(pending.future, CorrectedError(message) if message else RejectedError())
            for other in self._take_where(lambda p: p.request.session_id == request.session_id):
                self._publish(other.request, "reject")
                run_on(other.loop, _fail, other.future, RejectedError())
            return
        _succeed(pending.future, by)
        if reply == "always" and not pending.held:
            self._grant(pending.root, [
                Grant(agent=request.agent, permission=request.permission, pattern=p) for p in request.always
            ])
            for other in self._take_where(
                lambda p: p.root == pending.root and p.request.agent == request.agent and self._now_allowed(p)
            ):
                self._publish(other.request, "always", decided_by="grant", by=by)
                run_on(other.loop, _succeed, other.future, by)

    def _now_allowed(self, pending: _Pending) -> bool:
        request = pending.request
        if pending.held:
            return False
        granted = self._granted(pending.root, request.agent, request.permission)
        return all(
            evaluate(request.permission, p, pending.ruleset, granted).action == "allow" for p in request.patterns
        )

    def _expire(self, request_id: str) -> None:
        pending = self._take(request_id)
        if pending is not None:
            self._publish(pending.request, "reject", reason="timeout", decided_by="timeout")
            _fail(pending.future, RejectedError(
                f"Nobody answered the permission request within {self.timeout_s:g} s, so the call was not made."
            ))

    # ------------------------------------------------------------------------------------------ state

    def pending(self, session_id: str | None = None) -> list[PermissionRequest]:
        with self._lock:
            items = list(self._pending.values())
        return [p.request for p in items if session_id is None or p.request.session_id == session_id]

    def grants(self, session_id: str) -> list[Grant]:
        """The "always" grants of the session's tree, for every agent."""
        return list(self._load(self._root(session_id)))

    def close(self) -> None:
        """Refuse everything still waiting: nobody will answer it any more."""
        for pending in self._take_where(lambda p: True):
            run_on(pending.loop, self._close_one, pending)

    def _close_one(self, pending: _Pending) -> None:
        self._publish(pending.request, "reject", reason="closed", decided_by="close")
        _fail(pending.future, RejectedError("The workspace was closed before the request was answered."))

    def _root(self, session_id: str) -> str:
        return self.tree.root_of(session_id) if self.tree is not None else session_id

    def _load(self, root: str) -> list[Grant]:
        with self._lock:
            grants = self._grants.get(root)
            if grants is None:
                grants = list(self.tree.load_grants(root)) if self.tree is not None else []
                self._grants[root] = grants
            return grants

    def _granted(self, root: str, agent: str, permission: str) -> Ruleset:
        """The grants that count for `permission`: only those naming exactly it (see the module docstring)."""
        return Ruleset(g.rule() for g in self._load(root) if g.agent == agent and g.permission == permission)

    def _grant(self, root: str, new: list[Grant]) -> None:
        with self._lock:
            grants = self._load(root)
            grants.extend(g for g in new if g not in grants)
            snapshot = list(grants)
        if self.tree is not None:
            self.tree.save_grants(root, snapshot)

    def _take(self, request_id: str) -> _Pending | None:
        with self._lock:
            return self._pending.pop(request_id, None)

    def _take_where(self, keep: Callable[[_Pending], bool]) -> list[_Pending]:
        with self._lock:
            chosen = [p for p in self._pending.values() if keep(p)]
            for p in chosen:
                del self._pending[p.request.id]
        return chosen

    def _publish(self, request: PermissionRequest, reply: Reply, *, message: str | None = None,
                 reason: str | None = None, decided_by: DecidedBy = "person", by: str | None = None) -> None:
        self.bus.publish(PermissionReplied(session_id=request.session_id, request_id=request.id, reply=reply,
                                           message=message, reason=reason, decided_by=decided_by, by=by))


async def _decided(decider: Decider, request: PermissionRequest) -> tuple[str, Literal["allow", "deny"]] | None:
    """What a decider said, with its name; None when it left the ask to the person (or failed, which it
    reports itself: a broken plugin never answers for anyone)."""
    try:
        answer = await decider(request)
    except Exception:
        log.exception("a permission decider failed")
        return None
    if answer is None or answer[1] == "ask":
        return None
    return answer[0], answer[1]


def _succeed(future: asyncio.Future[str | None], by: str | None) -> None:
    if not future.done():
        future.set_result(by)


def _fail(future: asyncio.Future[str | None], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)
