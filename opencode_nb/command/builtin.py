"""The commands every workspace has."""

from __future__ import annotations

from importlib.resources import files

from ..config.schema import CommandConfig

LOCAL = ("agents", "help")
"""Answered from the workspace itself, without a model call."""


def _template(name: str) -> str:
    return files(__package__).joinpath("templates", f"{name}.txt").read_text(encoding="utf-8").strip()


def builtin_commands() -> dict[str, CommandConfig]:
    return {
        "init": CommandConfig(template=_template("init"), description="analyze the project and write or update "
                              "AGENTS.md"),
        "review": CommandConfig(template=_template("review"), description="review uncommitted changes, a commit "
                                "or a branch (as a subtask)", agent="general", subtask=True),
        "compact": CommandConfig(template="", description="summarize the session so far to free the context"),
        "agents": CommandConfig(template="", description="list the agents of this workspace"),
        "help": CommandConfig(template="", description="list the available commands"),
    }
