"""Hooks: what runs at the agents' events besides the agents, and what it answers.

Command hooks in Claude Code's format (`command.py`, configured under `hooks:` and read by `config.py`), the
tool names their matchers may use (`names.py`), and the one shape every hook's answer takes (`outcome.py`).
Inside the package, modules import these from the module that defines them.
"""

from .command import CommandHooks, SessionInfo, sandboxed
from .config import HookApprovals, hook_entries
from .outcome import NOTHING, HookOutcome

__all__ = ["NOTHING", "CommandHooks", "HookApprovals", "HookOutcome", "SessionInfo", "hook_entries", "sandboxed"]
