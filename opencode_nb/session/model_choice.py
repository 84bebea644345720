"""Which model answers a step: the prompt's, else the agent's, else the configured one, else ours."""

from __future__ import annotations

from ..agent.info import AgentInfo
from ..config.schema import Config
from .models import UserMessage

DEFAULT_MODEL = "anthropic/claude-sonnet-4-6"


def model_for(user: UserMessage, agent: AgentInfo, config: Config) -> str:
    return user.model or agent.model or config.model or DEFAULT_MODEL
