"""Which model a prompt would use and why, and the checks made before a prompt starts.

A prompt that cannot start (no API key, an unknown provider or agent) should fail as one clear message in
its cell, before anything exists: no session left behind with nothing in it, no live view whose header
has no agent or model to show. So the magic resolves the agent and the model the run would use, exactly
as the loop will (`model_for`), before it hands the prompt over. Providers are built once and kept, so
the loop then finds the same provider ready.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...config.layer import place
from ...session.model_choice import DEFAULT_MODEL

if TYPE_CHECKING:
    from ...agent.info import AgentInfo
    from ...workspace import Workspace


@dataclass(frozen=True)
class ModelChoice:
    model: str
    why: str
    """`--model`, `%config Agent.model`, `agent build (file:line)`, `opencode.yaml:3` or `built-in default`."""


def default_model(ws: Workspace) -> ModelChoice:
    """The model used when neither the prompt, the notebook nor the agent chooses one."""
    if ws.config.model:
        return ModelChoice(ws.config.model, place(*ws.loaded.where("model")))
    return ModelChoice(DEFAULT_MODEL, "built-in default")


def agent_for(ws: Workspace, agent: str | None, session_id: str | None) -> AgentInfo:
    """The agent that answers: the one named, else the one the session's latest prompt went to, else the default.

    Raises:
        NotFoundError: the agent named does not exist (the message lists the known ones).
    """
    name = agent or (ws.sessions.current_agent(session_id) if session_id else None) or ws.agents.default.name
    return ws.agents.get(name)


def model_in_use(ws: Workspace, *, option: str | None, setting: str | None, agent: AgentInfo) -> ModelChoice:
    """The model the loop will use for a prompt, in the loop's own order (`model_for`), and what chose it."""
    if option:
        return ModelChoice(option, "--model")
    if setting:
        return ModelChoice(setting, "%config Agent.model")
    if agent.model:
        source, line = ws.loaded.where("agent", agent.name, "model")
        return ModelChoice(agent.model, f"agent {agent.name}" + (f" ({place(source, line)})" if source else ""))
    return default_model(ws)


def check(ws: Workspace, *, agent: str | None, model: str | None, setting: str | None,
          session_id: str | None) -> ModelChoice:
    """Fail now, with the provider's or the registry's own message, if the prompt could not start.

    Raises:
        NotFoundError: an unknown agent.
        ConfigError: a model id the files misspell (`model:`, `small_model:`, an agent's; each at its file and line,
            whichever the prompt would use), a malformed model id or an unknown or incomplete provider.
        ProviderError: no API key for the model's provider (the message names the other ways in).
    """
    from ...errors import ConfigError
    from ...provider.configured import model_id_problems

    misspelt = model_id_problems(ws.loaded, ws.providers, listed_by="%agent models")
    if misspelt:
        raise ConfigError.combine(misspelt)
    choice = model_in_use(ws, option=model, setting=setting, agent=agent_for(ws, agent, session_id))
    ws.providers.resolve(choice.model)
    return choice
