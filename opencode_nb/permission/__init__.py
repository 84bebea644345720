"""The permission engine: allow / ask / deny rules, last match wins, and the service that asks a person."""

from ..errors import CorrectedError, DeniedError, RejectedError
from .events import PermissionAsked, PermissionReplied, PermissionRequest, Reply, ToolRef
from .rules import (
    Action,
    Grant,
    Rule,
    Ruleset,
    RulesetField,
    disabled,
    evaluate,
    expand_home,
    from_config,
    merge,
)
from .service import NAMED_ONLY, GrantStore, PermissionService
from .wildcard import wildcard_match

__all__ = [
    "NAMED_ONLY",
    "Action",
    "CorrectedError",
    "DeniedError",
    "Grant",
    "GrantStore",
    "PermissionAsked",
    "PermissionReplied",
    "PermissionRequest",
    "PermissionService",
    "RejectedError",
    "Reply",
    "Rule",
    "Ruleset",
    "RulesetField",
    "ToolRef",
    "disabled",
    "evaluate",
    "expand_home",
    "from_config",
    "merge",
    "wildcard_match",
]
