"""The rules an Explain run answers under: it may look at everything it could before, and change nothing.

They are the run's own (`UserMessage.permission`, checked after the agent's and the session's rules, for that
answer only), so the notebook's session is as free as before at the next prompt. Only denials are added:
whatever the person's configuration already refuses stays refused. A permission denied for every pattern is
not even offered to the model (`permission.disabled`), so edit, write, bash, notebook_edit and notebook_run
are simply absent; python keeps its sandbox, a copy of the kernel that cannot change the person's namespace,
and of the subagents only the read-only explorers remain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...permission.rules import Rule, from_config

if TYPE_CHECKING:
    from ...workspace import Workspace

READ_ONLY_SUBAGENTS = ("data-explorer", "explore")
"""The subagents an explanation may still ask: neither can change a file, a cell or the namespace."""

CHANGES = ("edit", "bash", "notebook_edit", "notebook_run", "plan_enter", "plan_exit")
"""Permissions whose every use changes something (write and edit share `edit`); denied outright."""


def explain_rules(ws: Workspace) -> list[Rule]:
    others = {agent.name: "deny" for agent in ws.agents.subagents() if agent.name not in READ_ONLY_SUBAGENTS}
    config: dict[str, object] = {name: "deny" for name in CHANGES}
    config["python"] = {"live": "deny"}
    if others:
        config["task"] = others
    return list(from_config(config, source="Explain (changes nothing)"))
