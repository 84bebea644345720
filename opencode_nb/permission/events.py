"""Bus events of the permission service: a request waiting for a person, and the person's answer; and the
shape of the call that starts one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..bus import Event

Reply = Literal["once", "always", "reject"]

Ask = Callable[..., Awaitable[None]]
"""A tool call's way to ask: `await ask(permission, patterns, always=None, metadata=None, *, always_ask=False)`
(`PermissionService.ask` bound to the session, the agent and its ruleset). It lives here, with the events,
because the tools and the sandbox import this small module when the permission package may still be loading
on another thread (the kernel builds its workspace on one)."""


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
