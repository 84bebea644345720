"""Value types that more than one part of the package passes around: tools make them, sessions store them.

They live below both `tool/` and `session/`, so a tool never has to import the session package to describe
what it returns, and the import graph keeps flowing one way (see DESIGN.md, "Data flow").
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """Stored and published values are never changed in place: a change is a new value (`model_copy`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Attachment(Frozen):
    """A file a tool returns or a person attaches, carried as a `data:` or `file:` URL."""

    mime: str
    url: str
    filename: str | None = None


class Todo(Frozen):
    """One item of a session's todo list, which `todowrite` replaces whole."""

    content: str
    status: Literal["pending", "in_progress", "completed", "cancelled"] = "pending"
    priority: Literal["high", "medium", "low"] = "medium"
    id: str = ""
