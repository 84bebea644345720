"""A skill run by the person as a slash command: `/publish-site staging` in a prompt.

As in OpenCode and Claude Code, each skill is also a command of its name, unless a configured or built-in
command has that name, or its author wrote `user-invocable: false` (background knowledge for the model). The
person's command is the way to use a skill its author kept from the model (`disable-model-invocation: true`):
the model is never offered such a skill (tool/skill.py), but the person may hand it over. The prompt is the
skill's instructions, the folder its relative paths are relative to, then the arguments, and `` !`cmd` `` in the
instructions runs as in any command template (the bash rules first, then the sandbox).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..config.schema import CommandConfig
from ..errors import ConfigError, NotFoundError

if TYPE_CHECKING:
    from ..config.skills import Skills
    from ..tool.registry import ToolRegistry


HELP_DESCRIPTION = 100
"""Characters of a skill's description on its `/help` line."""


def skill_command(tools: ToolRegistry, name: str) -> CommandConfig | None:
    """The command that runs the skill `name`, or None when no skill of that name is a command."""
    skills = _skills(tools)
    skill = skills.current().get(name) if skills is not None else None
    if skills is None or skill is None or not skill.user_invocable:
        return None
    try:
        skill, body = skills.load(name)
    except (KeyError, ConfigError):
        return None  # removed or broken a moment ago: the unknown-command error lists what there is
    template = f"{body.strip()}\n\nBase directory for this skill: {skill.directory}"
    return CommandConfig(template=template, description=f"skill: {skill.description}")


def skill_commands(tools: ToolRegistry) -> dict[str, CommandConfig]:
    """Every skill that is a command, for `/help`: by name, with the start of its description (the
    instructions are read only when one runs)."""
    skills = _skills(tools)
    if skills is None:
        return {}
    return {s.name: CommandConfig(template="", description=f"skill: {_cut(s.description)}")
            for s in skills.current().skills if s.user_invocable}


def _skills(tools: ToolRegistry) -> Skills | None:
    from ..tool.skill import SkillTool

    try:
        tool = tools.get("skill")
    except NotFoundError:  # a registry without the skill tool has no skills either
        return None
    return tool.skills if isinstance(tool, SkillTool) else None


def _cut(text: str) -> str:
    return text if len(text) <= HELP_DESCRIPTION else text[:HELP_DESCRIPTION].rsplit(" ", 1)[0] + " …"
