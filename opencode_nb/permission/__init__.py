"""The permission engine: allow / ask / deny rules, last match wins, and the service that asks a person."""

from .events import PermissionAsked, PermissionRequest, ToolRef
from .rules import NAMED_ONLY, Grant, Rule, Ruleset, disabled, evaluate, from_config, merge
from .service import PermissionService
from .wildcard import wildcard_match

__all__ = [
    "NAMED_ONLY",
    "Grant",
    "PermissionAsked",
    "PermissionRequest",
    "PermissionService",
    "Rule",
    "Ruleset",
    "ToolRef",
    "disabled",
    "evaluate",
    "from_config",
    "merge",
    "wildcard_match",
]
