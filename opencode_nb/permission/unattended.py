"""How an ask is answered when nobody is there to answer it.

A notebook run by nbclient, a CI job or a plain script has no person to click Allow. Such a run must neither
hang on an ask nor quietly do what the rules wanted a person to check, so it follows a policy the person
chose beforehand: `OPENCODE_NB_PERMISSION` = `deny` (the default), `allow`, or `allow-readonly` (looking is
allowed, changing, running and fetching are not). The decision is published like a reply, with its
reason, so the transcript and the prompt's result say what was decided and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from .events import PermissionRequest

POLICY_ENV = "OPENCODE_NB_PERMISSION"

UnattendedPolicy = Literal["deny", "allow", "allow-readonly"]
POLICIES: tuple[UnattendedPolicy, ...] = ("deny", "allow", "allow-readonly")

READONLY = frozenset({"read", "glob", "grep", "list", "todoread", "todowrite", "variables", "notebook_read"})
"""What `allow-readonly` lets through: looking, never changing, running or fetching."""


def policy_from_env(env: Mapping[str, str]) -> UnattendedPolicy:
    """The policy `env` names; an unknown value means deny, the safe reading of a typo."""
    value = env.get(POLICY_ENV, "deny").strip().lower()
    for policy in POLICIES:
        if value == policy:
            return policy
    return "deny"


def decide(policy: str, request: PermissionRequest) -> Literal["allow", "deny"]:
    if policy == "allow" or (policy == "allow-readonly" and request.permission in READONLY):
        return "allow"
    return "deny"
