"""The skill tool: a bounded list of skills in its description, a skill's instructions and files on a call, and
nothing of a skill's body anywhere before that call, nor ever for a skill the rules deny."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from opencode_nb import Workspace
from opencode_nb.agent import AgentInfo
from opencode_nb.config.skills import Skills
from opencode_nb.errors import DeniedError, ToolError
from opencode_nb.permission import from_config
from opencode_nb.provider import Scripted
from opencode_nb.tool.registry import default_registry
from opencode_nb.tool.skill import MAX_FILES, MAX_LISTED, SkillTool

from .fakes import RecordingContext

BODY = "Write every date as ISO 8601. Run scripts/check.py on the result."
"""A skill's instructions: text that must reach the model only through a call of the tool."""


def write_skill(root: Path, name: str, description: str = "", body: str = BODY, folder: str = ".opencode/skill",
                files: dict[str, str] | None = None) -> Path:
    directory = root / folder / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description or f'Use for {name} work.'}\n---\n\n{body}\n")
    for relative, text in (files or {}).items():
        (directory / relative).parent.mkdir(parents=True, exist_ok=True)
        (directory / relative).write_text(text)
    return directory


@pytest.fixture
def skills(project, tmp_path) -> Skills:
    (project / ".git").mkdir()
    return Skills(project, tmp_path / "xdg" / "opencode_nb")


def agent(rules: dict | None = None) -> AgentInfo:
    return AgentInfo(name="build", permission=from_config({"*": "allow", **(rules or {})}))


# ---------------------------------------------------------------------------------------------- the tool alone


async def test_a_call_returns_the_instructions_the_folder_and_the_files_by_absolute_path(project, skills, ctx):
    folder = write_skill(project, "iso-dates", files={"scripts/check.py": "print('ok')\n", "reference/formats.md": "x",
                                                      ".hidden": "x", ".git/HEAD": "x"})
    result = await SkillTool(skills).run({"name": "iso-dates"}, ctx)
    assert BODY in result.output and f"Skill folder: {folder}" in result.output
    listed = [line for line in result.output.splitlines() if line.startswith("/")]
    assert listed == [str(folder / "reference" / "formats.md"), str(folder / "scripts" / "check.py")]
    assert (result.title, result.metadata["files"]) == ("iso-dates", 2)
    [asked] = ctx.asked
    assert (asked.permission, asked.patterns, asked.always) == ("skill", ["iso-dates"], ["iso-dates"])
    assert asked.metadata["path"] == str(folder / "SKILL.md")


async def test_the_files_listed_are_bounded_and_the_rest_counted(project, skills, ctx):
    write_skill(project, "many", files={f"data/{i:04}.csv": "" for i in range(MAX_FILES + 7)})
    result = await SkillTool(skills).run({"name": "many"}, ctx)
    assert sum(line.startswith("/") for line in result.output.splitlines()) == MAX_FILES
    assert "… and 7 more; list the folder" in result.output


async def test_a_denied_skill_is_refused_before_anything_of_it_is_read(project, skills):
    write_skill(project, "iso-dates")
    ctx = RecordingContext(project, deny={"skill"})
    with pytest.raises(DeniedError):
        await SkillTool(skills).run({"name": "iso-dates"}, ctx)


async def test_an_unknown_name_is_an_error_naming_the_skills_the_agent_may_load(project, skills, ctx):
    write_skill(project, "iso-dates")
    write_skill(project, "secret-plan")
    ctx.permitted = lambda permission, pattern: "deny" if pattern.startswith("secret") else "allow"
    with pytest.raises(ToolError) as error:
        await SkillTool(skills).run({"name": "iso-date"}, ctx)
    assert "no skill named 'iso-date'" in str(error.value) and "iso-dates" in str(error.value)
    assert "secret-plan" not in str(error.value) and ctx.asked == []


async def test_a_skill_md_broken_after_it_was_listed_is_an_error_the_model_reads(project, skills, ctx):
    folder = write_skill(project, "iso-dates")
    spec = SkillTool(skills).spec()
    assert "iso-dates" in spec.description
    (folder / "SKILL.md").write_text("---\nname: iso-dates\n---\nno description now\n")
    with pytest.raises(ToolError, match="no skill named"):  # read again: it is no longer a skill
        await SkillTool(skills).run({"name": "iso-dates"}, ctx)


def test_the_description_lists_name_and_description_of_each_skill_the_agent_may_load(project, skills):
    write_skill(project, "iso-dates", "Formats dates: use it whenever a report shows dates.")
    write_skill(project, "secret-plan", "Internal.")
    tool = SkillTool(skills)
    text = tool.spec_for(agent(), None).description  # type: ignore[arg-type]
    assert text.startswith(tool.description)
    assert "- iso-dates: Formats dates: use it whenever a report shows dates." in text and "- secret-plan" in text
    assert BODY not in text
    narrower = tool.spec_for(agent({"skill": {"secret-*": "deny"}}), None).description  # type: ignore[arg-type]
    assert "iso-dates" in narrower and "secret-plan" not in narrower
    none = tool.spec_for(agent({"skill": {"*": "deny", "nothing-here": "allow"}}), None).description  # type: ignore[arg-type]
    assert none.endswith("No skills are available to you now.") and len(none) < 120, "a line, not the how-to"


async def test_the_list_is_bounded_and_says_how_to_see_the_rest(project, skills, ctx):
    for i in range(MAX_LISTED + 3):
        write_skill(project, f"skill-{i:03}", "x" * 400)
    text = SkillTool(skills).spec_for(agent(), None).description  # type: ignore[arg-type]
    assert text.count("\n- skill-") == MAX_LISTED
    assert '3 more skills not listed here; call this tool with name "*"' in text
    assert "x" * 301 not in text
    everything = await SkillTool(skills).run({"name": "*"}, ctx)
    assert everything.output.count("\n- skill-") == MAX_LISTED + 3 and ctx.asked == []


def test_the_skill_tool_is_registered_for_a_workspace_that_has_skills_to_offer(skills):
    assert "skill" in default_registry(skills).ids()
    assert "skill" not in default_registry().ids()


# ---------------------------------------------------------------------------------------------- through the loop


def workspace(tmp_path: Path, permission: dict | None = None) -> tuple[Workspace, Scripted]:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    write_skill(root, "iso-dates", "Formats dates in reports.", files={"scripts/check.py": "print('ok')\n"})
    write_skill(root, "secret-plan", "The release plan.", body="SECRET-BODY: ship on Friday.", folder=".claude/skills")
    config: dict = {"model": "scripted/demo"}
    if permission is not None:
        config["permission"] = permission
    ws = Workspace(root, config, data_dir=tmp_path / "data",
                   env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)})
    model = Scripted()
    ws.providers.register("scripted", model)
    return ws, model


def step_requests(model: Scripted) -> list:
    return [r for r in model.requests if r.purpose == "step"]


def sent(request) -> str:
    """Everything a request tells the model: system, history and tool descriptions."""
    return request.model_dump_json()


async def run(ws: Workspace, model: Scripted, *turns: dict) -> list:
    model.turns.extend(Scripted(list(turns)).turns)
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "Write the quarterly report."), 30)
    return [p.state for m in ws.sessions.messages(session.id) for p in m.parts if p.type == "tool"]


async def test_a_skills_body_reaches_the_model_only_after_the_skill_call(tmp_path):
    ws, model = workspace(tmp_path)
    with ws:
        states = await run(ws, model, {"tool_calls": [{"name": "skill", "input": {"name": "iso-dates"}}]},
                           {"text": "Done, dates in ISO 8601."})
        first, second = step_requests(model)
        assert BODY not in sent(first)
        [spec] = [t for t in first.tools if t.name == "skill"]
        assert "- iso-dates: Formats dates in reports." in spec.description
        [result] = [b for m in second.messages for b in m.content if b.type == "tool-result"]
        assert result.name == "skill" and BODY in result.output
        assert str(ws.root / ".opencode/skill/iso-dates/scripts/check.py") in result.output
        assert states[0].status == "completed"


async def test_a_skill_denied_by_name_is_not_listed_and_its_body_never_reaches_the_model(tmp_path):
    ws, model = workspace(tmp_path, {"skill": {"secret-*": "deny"}})
    with ws:
        states = await run(ws, model, {"tool_calls": [{"name": "skill", "input": {"name": "secret-plan"}}]},
                           {"text": "I may not load it."})
        first = step_requests(model)[0]
        [spec] = [t for t in first.tools if t.name == "skill"]
        assert "iso-dates" in spec.description and "secret-plan" not in spec.description
        assert states[0].status == "error"
        assert all("SECRET-BODY" not in sent(request) for request in model.requests)


async def test_an_agent_whose_rules_deny_skill_altogether_is_not_offered_the_tool(tmp_path):
    ws, model = workspace(tmp_path, {"skill": "deny"})
    with ws:
        await run(ws, model, {"text": "No skills for me."})
        [first] = step_requests(model)
        assert "skill" not in [t.name for t in first.tools]
        assert "read" in [t.name for t in first.tools]


async def test_a_skill_written_after_the_workspace_was_built_is_offered_at_the_next_prompt(tmp_path):
    ws, model = workspace(tmp_path)
    with ws:
        await run(ws, model, {"text": "first"})
        write_skill(ws.root, "late-comer", "Arrived later.")
        await run(ws, model, {"text": "second"})
        before, after = (next(t for t in r.tools if t.name == "skill").description for r in step_requests(model))
        assert "late-comer" not in before and "- late-comer: Arrived later." in after


def test_the_readme_rules_ask_for_some_skills_hide_others_and_give_explore_the_tool(tmp_path):
    from opencode_nb.permission import disabled, evaluate

    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    for name in ("quarterly-report", "release-notes", "internal-audit"):
        write_skill(root, name)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)}
    with Workspace(root, {"model": "scripted/demo"}, data_dir=tmp_path / "data", env=env) as plain:
        assert disabled(["skill"], plain.agents.get("explore").permission) == {"skill"}
        assert disabled(["skill"], plain.agents.get("build").permission) == set()
    config = {"model": "scripted/demo",
              "permission": {"skill": {"*": "allow", "release-*": "ask", "internal-*": "deny"}},
              "agent": {"explore": {"permission": {"skill": "allow"}}}}
    with Workspace(root, config, data_dir=tmp_path / "data", env=env) as ws:
        build = ws.agents.get("build")
        assert [evaluate("skill", n, build.permission).action
                for n in ("quarterly-report", "release-notes", "internal-audit")] == ["allow", "ask", "deny"]
        text = ws.tools.get("skill").spec_for(build, ws.agents).description
        assert "quarterly-report" in text and "release-notes" in text and "internal-audit" not in text
        assert disabled(["skill"], ws.agents.get("explore").permission) == set()
