"""skill: a skill's instructions, loaded when the task calls for them (skills themselves: config/skills.py).

The tool's description lists the skills the calling agent may load, each by name and description, so the
model knows what exists at the cost of a line per skill; the instructions reach it only through a call.
The list is bounded (`MAX_LISTED`, each description cut to `MAX_LISTED_DESCRIPTION`); the rest are named by
calling the tool with `*`. A skill the agent's rules deny by name is left out of the list, and calling it
anyway is denied before anything of it is read. So is a skill whose author wrote `disable-model-invocation:
true`: it is for the person alone, so the model is not told of it, and a call naming it (a guess, or a name
read in a file) is refused before anything of it is read; `%agent skills` still lists it.

Permission `skill`, with the skill's name as the pattern (`skill: {"release-*": ask, "*": allow}`). It has no
default rule of its own: like read, glob and grep, it falls under each built-in agent's catch-all, allowed
for build, plan and general (`"*": allow`) and kept from explore and data-explorer, whose `"*": deny` leaves
them only the tools they name. Loading a skill changes nothing and reads files the person put in the
configuration's folders, which agents cannot change without asking (`agent_config`; sandbox/protected.py),
so asking every time would only teach people to click allow; who wants a say writes a rule.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from ..config.skills import SKILL_FILE, Skill, Skills
from ..errors import ConfigError, ToolError
from ..permission.rules import evaluate
from ..provider.request import ToolSpec
from .base import Tool, ToolContext, ToolResult, for_person

if TYPE_CHECKING:
    from ..agent.info import AgentInfo
    from ..agent.registry import AgentRegistry

MAX_LISTED = 50
"""Skills named in the tool's description; past it, the model asks for the whole list with `*`."""
MAX_LISTED_DESCRIPTION = 300
"""Characters of each description shown in that list (a description may be longer: config/skills.py)."""
MAX_FULL_DESCRIPTION = 1024
"""Characters of each description in the `*` listing: the Agent Skills format's bound, which some skills pass."""
MAX_FILES = 100
"""Files of a skill listed in a call's result; past it, the result says how many more and where."""
MAX_WALK = 10_000
"""Entries looked at in a skill's folder at most: a folder holding a dataset is not walked to the end."""
ALL = "*"
NONE = "Loads a skill (instructions prepared for a kind of task) by name. No skills are available to you now."


class SkillParams(BaseModel):
    name: str = Field(description="The skill's name, exactly as listed in this tool's description")


class SkillTool(Tool[SkillParams]):
    id = "skill"
    params = SkillParams

    def __init__(self, skills: Skills) -> None:
        self.skills = skills

    def spec(self) -> ToolSpec:
        """Every skill in force, for a caller with no agent in view."""
        return self._spec([s for s in self.skills.current().skills if s.model_invocable])

    def spec_for(self, agent: AgentInfo, agents: AgentRegistry) -> ToolSpec:
        """The skills `agent` may load: built per agent, and read again per prompt (a skill written since shows)."""
        return self._spec([s for s in self.skills.current().skills
                           if s.model_invocable and evaluate("skill", s.name, agent.permission).action != "deny"])

    def _spec(self, skills: list[Skill]) -> ToolSpec:
        # With nothing to load, a line instead of the whole how-to: it rides along in every request.
        text = self.description + "\n\n" + listing(skills) if skills else NONE
        return ToolSpec(name=self.id, description=text, parameters=self.params.model_json_schema())

    async def execute(self, params: SkillParams, ctx: ToolContext) -> ToolResult:
        name = params.name.strip()
        skills = await asyncio.to_thread(self.skills.current)
        visible = [s for s in skills.skills if s.model_invocable
                   and (ctx.permitted is None or ctx.permitted("skill", s.name) != "deny")]
        if name == ALL:
            return ToolResult("all skills", every_skill(visible), {"count": len(visible),
                                                                   **for_person(f"Listed {len(visible)} skills")})
        skill = skills.get(name)
        if skill is None:
            names = ", ".join(s.name for s in visible[:200]) or "none"
            raise ToolError(f"There is no skill named {name!r}. The skills you may load: {names}.")
        if not skill.model_invocable:
            raise ToolError(f"The skill {name!r} is not for you to load: its author marked it "
                            "`disable-model-invocation: true`, so only the person uses it. Carry on without it.")
        await ctx.ask("skill", [skill.name], always=[skill.name],
                      metadata={"name": skill.name, "description": skill.description, "path": str(skill.path)})
        try:
            fresh, body = await asyncio.to_thread(self.skills.load, skill.name)
        except KeyError:
            raise ToolError(f"The skill {name!r} was removed a moment ago; it cannot be loaded.") from None
        except ConfigError as exc:
            raise ToolError(f"The skill {name!r} cannot be loaded: its SKILL.md changed and now has a problem "
                            f"({exc}). Carry on without it, and tell the person.") from None
        files, more = await asyncio.to_thread(skill_files, fresh.directory)
        return ToolResult(fresh.name, loaded(fresh, body, files, more),
                          {"name": fresh.name, "path": str(fresh.path), "files": len(files) + more,
                           **for_person(f"Loaded the skill {fresh.name}: {fresh.description}", body, markdown=True)})


def listing(skills: list[Skill]) -> str:
    """The part of the tool's description that names the skills."""
    lines = [f"- {s.name}: {_cut(s.description)}" for s in skills[:MAX_LISTED]]
    left = len(skills) - MAX_LISTED
    if left > 0:
        lines.append(f"({left} more skill{'s' * (left != 1)} not listed here; call this tool with name "
                     f'"{ALL}" for the names and descriptions of all {len(skills)}.)')
    return "Available skills:\n" + "\n".join(lines)


def every_skill(skills: list[Skill]) -> str:
    if not skills:
        return "No skills are available to you."
    return f"All {len(skills)} skills you may load:\n" + "\n".join(
        f"- {s.name}: {_cut(s.description, MAX_FULL_DESCRIPTION)}" for s in skills)


def loaded(skill: Skill, body: str, files: list[Path], more: int) -> str:
    """What the model reads after loading a skill: its folder, its instructions, then its files."""
    parts = [f'<skill name="{skill.name}">',
             f"Skill folder: {skill.directory} (relative paths in the instructions are relative to it)", "",
             body.strip() or "(This skill has no instructions beyond its description.)"]
    if files:
        parts += ["", "Files of this skill (read one with the read tool when the instructions call for it):",
                  *(str(f) for f in files)]
        if more:
            parts.append(f"… and {more} more; list the folder with the list or glob tool.")
    parts.append("</skill>")
    return "\n".join(parts)


def skill_files(folder: Path) -> tuple[list[Path], int]:
    """The files of a skill's folder but its SKILL.md, by path (at most MAX_FILES), and how many more.

    Hidden files and folders (`.git`) are left out and linked folders not followed, so the walk stays in the
    skill.
    """
    found: list[Path] = []
    seen = 0
    for top, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(n for n in names if not n.startswith(".")):
            path = Path(top) / name
            if path.parent == folder and name == SKILL_FILE:
                continue
            found.append(path)
        seen += len(dirs) + len(names)
        if seen >= MAX_WALK:
            break
    found.sort()
    return found[:MAX_FILES], max(0, len(found) - MAX_FILES)


def _cut(text: str, limit: int = MAX_LISTED_DESCRIPTION) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + " …"
