"""`%config Agent.*`: the notebook's settings, in IPython's own configuration system.

The class is named `Agent` because that is the section people type (`%config Agent.model = "…"`,
`c.Agent.model` in `ipython_config.py`).
"""

from __future__ import annotations

import os
from typing import Any

from traitlets import Enum, Float, Unicode, default
from traitlets.config import Configurable

POLICIES = ("deny", "allow", "allow-readonly")


class Agent(Configurable):
    """Settings of the `%agent` magics in this kernel."""

    model = Unicode(None, allow_none=True,
                    help="provider/model for prompts, e.g. anthropic/claude-sonnet-4-6; None: the config's").tag(
        config=True)
    agent = Unicode(None, allow_none=True, help="The agent for prompts that name none; None: the config's").tag(
        config=True)
    directory = Unicode(None, allow_none=True,
                        help="The project directory agents work in; None: the notebook's directory").tag(config=True)
    mode = Enum(["auto", "attached", "detached"], default_value="auto",
                help="attached: the prompt cell stays busy until the agent is done (default with ipykernel "
                     ">= 7.4 and when headless); detached: the cell returns at once").tag(config=True)
    permission = Enum(list(POLICIES), default_value="deny",
                      help="How asks are answered when nobody is present (nbclient, nbconvert, CI): deny, allow, "
                           "or allow-readonly; default from $OPENCODE_NB_PERMISSION, else deny").tag(config=True)
    probe_timeout_s = Float(2.0, help="How long the first prompt waits for a front end to show itself").tag(
        config=True)

    @default("permission")
    def _permission_default(self) -> str:
        value = os.environ.get("OPENCODE_NB_PERMISSION", "deny").strip().lower()
        return value if value in POLICIES else "deny"


def explain_settings(settings: Agent) -> list[tuple[str, Any, str]]:
    """(name, value, where it came from) of each setting, for `%agent config`.

    A value other than the built-in default was set with `%config` (or `c.Agent.…` in an IPython profile);
    `permission` also reads `$OPENCODE_NB_PERMISSION`.
    """
    rows: list[tuple[str, Any, str]] = []
    for name in ("model", "agent", "directory", "mode", "permission"):
        value = getattr(settings, name)
        if name in settings.config.get("Agent", {}):
            source = "%config"
        elif name == "permission" and os.environ.get("OPENCODE_NB_PERMISSION"):
            source = "$OPENCODE_NB_PERMISSION"
        else:
            source = "default"
        rows.append((name, value, source))
    return rows
