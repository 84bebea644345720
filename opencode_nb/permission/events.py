"""Bus events of the permission service: a request waiting for a person, and the person's answer; and the
shape of the call that starts one."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..bus import Event

Reply = Literal["once", "always", "reject"]

DecidedBy = Literal["person", "grant", "policy", "hook", "timeout", "stop", "close"]
"""Who answered an ask: the person; an "always" grant the person just gave (a request waiting beside the one
answered); the unattended policy of a run with nobody present; a plugin's `permission.ask` (`hook`); the
timeout; the run's stop; the service closing. Code that treats an answer by who gave it reads this, never the
`reason` text, which is for people."""


class Ask(Protocol):
    """A tool call's way to ask (`PermissionService.ask` bound to the session, the agent and its ruleset).

    It lives here, with the events, because the tools and the sandbox import this small module when the
    permission package may still be loading on another thread (the kernel builds its workspace on one).
    """

    def __call__(self, permission: str, patterns: list[str], always: list[str] | None = None,
                 metadata: dict[str, Any] | None = None, *, always_ask: bool = False) -> Awaitable[str | None]:
        """Return when the call may go ahead, with who allowed it where a page named them; raise `DeniedError`,
        `RejectedError`, `CorrectedError` or `PolicyRefusedError` otherwise. `always` is what an "always" answer
        grants; `metadata` is what the person sees (a diff, a command); `always_ask` asks even where the rules
        allow."""
        ...


class ToolRef(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    message_id: str
    call_id: str


class PermissionRequest(BaseModel):
    """What a view shows a person: who asks, for what, and what "always" would cover."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str
    session_id: str
    agent: str
    permission: str
    patterns: list[str]
    always: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    tool: ToolRef | None = None


class PermissionAsked(Event):
    type: Literal["permission.asked"] = "permission.asked"
    request: PermissionRequest


class PermissionReplied(Event):
    type: Literal["permission.replied"] = "permission.replied"
    session_id: str
    request_id: str
    reply: Reply
    message: str | None = None
    reason: str | None = None
    """Why it was answered without a person (policy, timeout, workspace closed), for transcripts."""
    decided_by: DecidedBy = "person"
    by: str | None = None
    """The person who answered, as the Jupyter server names them (`alice`, `Alice Smith (alice)`), where a page
    said who is signed in to it; None for other answers."""
