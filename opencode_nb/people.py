"""Who answers: the person signed in to a page, and who may approve on a server several people use.

On a shared server (JupyterHub's server sharing, real-time collaboration) everyone who opens the notebook
sees its approval buttons. The person behind a click is the one the Jupyter server's identity provider
names to that page (`/api/me`): JupyterHub's user name on a hub. The page says who it is in its hello, so
this is what the page claims; anyone who can open the notebook can also run code in its kernel, so the
rule of `approvals: owner` keeps a visitor from answering by mistake or by habit, and is not a wall
against a visitor who means harm.

This module imports nothing: the kernel's comm client uses it when the extension loads.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

ApprovalsMode = Literal["auto", "owner", "anyone"]
"""`owner`: only the server's owner answers approvals; `anyone`: whoever sees the prompt; `auto`: `owner`
where JupyterHub names the owner (JUPYTERHUB_USER, which a hub gives every single-user server), else
`anyone`."""


@dataclass(frozen=True)
class Person:
    """Someone signed in to a page, as the Jupyter server names them."""

    username: str
    display_name: str = ""

    def __str__(self) -> str:
        shown = self.display_name.strip()
        return f"{shown} ({self.username})" if shown and shown != self.username else self.username


def nobody() -> Person | None:
    """Who sent the message being handled, where nothing can tell (no page, a terminal)."""
    return None


@dataclass(frozen=True)
class Approvers:
    """Only the owner of the server answers approvals (`approvals: owner`)."""

    owner: str
    source: str
    """Where the owner's name came from, for messages: `JUPYTERHUB_USER` or `the kernel's OS user`."""

    def refusal(self, person: Person | None) -> str | None:
        """Why `person` may not answer, or None when they may."""
        if person is not None and person.username == self.owner:
            return None
        who = (f"{person} tried to answer" if person is not None
               else "a page that did not say who is signed in to it tried to answer (update the opencode_nb "
                    "extension and reload it)")
        return (f"Only {self.owner}, who owns this server, can answer approvals here: {who}. Ask {self.owner} "
                "to answer, or the owner can set `approvals: anyone` to let everyone who sees the prompt answer.")

    @property
    def note(self) -> str:
        """What every prompt says on such a server: who may answer it."""
        return f"Only {self.owner} (this server's owner) can answer."


def approvers(mode: ApprovalsMode, env: Mapping[str, str] | None = None) -> Approvers | None:
    """The rule for who answers approvals, or None where anyone may."""
    env = os.environ if env is None else env
    hub_user = (env.get("JUPYTERHUB_USER") or "").strip()
    if mode == "anyone" or (mode == "auto" and not hub_user):
        return None
    if hub_user:
        return Approvers(owner=hub_user, source="JUPYTERHUB_USER")
    return Approvers(owner=getpass.getuser(), source="the kernel's OS user")
