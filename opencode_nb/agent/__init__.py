"""Agents: identities of the one loop, each with a persona, a ruleset and settings."""

from .builtin import PLAN_FILES, default_rules
from .info import AgentInfo, Mode
from .registry import AgentRegistry

__all__ = ["PLAN_FILES", "AgentInfo", "AgentRegistry", "Mode", "default_rules"]
