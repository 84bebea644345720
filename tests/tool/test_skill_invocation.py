"""Who may invoke a skill: one marked `disable-model-invocation: true` never reaches the model, through the loop.

The author's switch is judged by effect: the model is not told of the skill, and a model that names it anyway
(a guess, or a name read in a file) gets an error and none of its instructions; the person's listings still
show it. Long descriptions, by contrast, load, and only the tool's listing shortens them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from opencode_nb import Workspace
from opencode_nb.cli import format_skills
from opencode_nb.kernel.magics.listing import skills as skills_listing
from opencode_nb.provider import Scripted
from opencode_nb.tool.skill import MAX_LISTED_DESCRIPTION

PERSONAL = "PERSONAL-BODY: publish with the release key."
"""The instructions of the skill kept from the model: they must never be in anything sent to it."""


def write(root: Path, folder: str, frontmatter: str, body: str) -> None:
    path = root / ".claude" / "skills" / folder / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"---\n{frontmatter}\n---\n\n{body}\n")


def workspace(tmp_path: Path) -> tuple[Workspace, Scripted]:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    write(root, "publish-site", "description: Publishes the site to the web host.\ndisable-model-invocation: true",
          PERSONAL)
    write(root, "chart-style", "description: " + "Draws charts in the house style, with labelled axes. " * 25,
          "Label every axis.")
    ws = Workspace(root, {"model": "scripted/demo"}, data_dir=tmp_path / "data",
                   env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)})
    model = Scripted()
    ws.providers.register("scripted", model)
    return ws, model


async def run(ws: Workspace, model: Scripted, *turns: dict) -> list:
    model.turns.extend(Scripted(list(turns)).turns)
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "Publish the site."), 30)
    return [p.state for m in ws.sessions.messages(session.id) for p in m.parts if p.type == "tool"]


async def test_a_skill_kept_from_the_model_is_not_listed_and_a_call_naming_it_is_refused(tmp_path):
    ws, model = workspace(tmp_path)
    with ws:
        states = await run(ws, model, {"tool_calls": [{"name": "skill", "input": {"name": "publish-site"}}]},
                           {"tool_calls": [{"name": "skill", "input": {"name": "*"}}]},
                           {"text": "I may not load it."})
        steps = [r for r in model.requests if r.purpose == "step"]
        [spec] = [t for t in steps[0].tools if t.name == "skill"]
        assert "chart-style" in spec.description and "publish-site" not in spec.description
        refused, everything = states
        assert refused.status == "error"
        assert "disable-model-invocation: true" in refused.error and "only the person" in refused.error
        assert "publish-site" not in everything.output and "chart-style" in everything.output
        assert all(PERSONAL not in r.model_dump_json() for r in model.requests)


async def test_a_skill_kept_from_the_model_is_still_in_the_persons_listings(tmp_path):
    ws, _ = workspace(tmp_path)
    with ws:
        cli = format_skills(ws)
        assert "publish-site" in cli and "kept from the model" in cli
        table = skills_listing(ws, ws.agents.get("build"))["text/plain"]
        assert "publish-site" in table and "not offered" in table and "as the command /publish-site" in table


async def test_a_long_description_is_offered_shortened_in_the_listing_and_whole_on_request(tmp_path):
    ws, model = workspace(tmp_path)
    with ws:
        states = await run(ws, model, {"tool_calls": [{"name": "skill", "input": {"name": "chart-style"}}]},
                           {"text": "Charts done."})
        [first, _] = [r for r in model.requests if r.purpose == "step"]
        [spec] = [t for t in first.tools if t.name == "skill"]
        [line] = [row for row in spec.description.splitlines() if row.startswith("- chart-style: ")]
        assert len(line) <= len("- chart-style: ") + MAX_LISTED_DESCRIPTION + 2 and line.endswith("…")
        assert states[0].status == "completed" and "Label every axis." in states[0].output
        assert any("past the 1,024" in w for w in ws.warnings)


async def test_control_without_the_switch_the_same_call_brings_the_instructions_to_the_model(tmp_path):
    """The first test would see the harm: the same skill without `disable-model-invocation` is loaded."""
    ws, model = workspace(tmp_path)
    path = ws.root / ".claude" / "skills" / "publish-site" / "SKILL.md"
    path.write_text(path.read_text().replace("disable-model-invocation: true\n", ""))
    with ws:
        states = await run(ws, model, {"tool_calls": [{"name": "skill", "input": {"name": "publish-site"}}]},
                           {"text": "Loaded."})
        assert states[0].status == "completed"
        assert any(PERSONAL in r.model_dump_json() for r in model.requests)


async def test_the_person_runs_a_skill_kept_from_the_model_as_a_slash_command(tmp_path):
    ws, model = workspace(tmp_path)
    with ws:
        session = ws.sessions.create()
        assert "/publish-site" in await ws.command(session.id, "help")
        model.turns.extend(Scripted([{"text": "Published to staging."}]).turns)
        await asyncio.wait_for(ws.command(session.id, "publish-site", "to staging"), 30)
        [request] = [r for r in model.requests if r.purpose == "step"]
        prompt = request.messages[-1].content[0].text
        assert prompt.startswith(PERSONAL) and prompt.endswith("to staging")
        assert f"Base directory for this skill: {ws.root / '.claude/skills/publish-site'}" in prompt
        [spec] = [t for t in request.tools if t.name == "skill"]
        assert "publish-site" not in spec.description  # the model still is not offered it


async def test_a_skill_marked_user_invocable_false_is_no_command(tmp_path):
    from opencode_nb.errors import NotFoundError

    ws, _ = workspace(tmp_path)
    write(ws.root, "house-style", "description: The house style.\nuser-invocable: false", "Use the house style.")
    with ws:
        session = ws.sessions.create()
        assert "/house-style" not in await ws.command(session.id, "help")
        try:
            await ws.command(session.id, "house-style")
        except NotFoundError as exc:
            assert "/publish-site" in str(exc) or "available commands" in str(exc)
        else:
            raise AssertionError("a user-invocable: false skill ran as a command")
