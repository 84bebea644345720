"""Agents: identities of the one loop, each with a persona, a ruleset and settings."""

from .info import AgentInfo
from .registry import AgentRegistry

__all__ = ["AgentInfo", "AgentRegistry"]
