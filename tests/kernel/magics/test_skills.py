"""`%agent skills` in a real kernel, and a skill an agent loads there."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(90)
HEADLESS = {"OPENCODE_NB_HEADLESS": "1"}
LOAD = [{"tool_calls": [{"name": "skill", "input": {"name": "iso-dates"}}]}, {"text": "Loaded the date rules."}]


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_skills_lists_each_skill_its_origin_and_rule_then_the_shadowed_and_the_broken(kernel, tmp_path):
    fe = kernel(LOAD, render_views=False, env=HEADLESS,
                permission={"skill": {"*": "allow", "secret-*": "deny"}})
    project = tmp_path / "project"
    write(project / ".claude/skills/iso-dates/SKILL.md", "---\nname: iso-dates\ndescription: Old dates.\n---\nx\n")
    write(project / ".opencode/skills/iso-dates/SKILL.md",
          "---\nname: iso-dates\ndescription: Dates as ISO 8601 in every report.\n---\nWrite 2026-11-26.\n")
    write(project / ".agents/skills/secret-plan/SKILL.md", "---\nname: secret-plan\ndescription: Plan.\n---\nx\n")
    write(project / ".agents/skills/broken/SKILL.md", "---\nname: Broken\ndescription: x\n---\nx\n")
    listing = fe.execute("%agent skills")
    assert fe.done(listing)["content"]["status"] == "ok"
    text = fe.text(listing)
    assert f"warning: {project}/.agents/skills/broken/SKILL.md:2 name: 'Broken' is not a skill name" in text
    rows = {line.split()[0]: line.split() for line in text.splitlines() if line.split()[:1] in (["iso-dates"],
                                                                                                  ["secret-plan"])}
    assert rows["iso-dates"][-2:] == [".opencode/skills/iso-dates/SKILL.md", "allow"]
    assert rows["secret-plan"][-2:] == [".agents/skills/secret-plan/SKILL.md", "deny"]
    assert ("shadowed: .claude/skills/iso-dates/SKILL.md (by .opencode/skills/iso-dates/SKILL.md)" in text)
    assert f"not loaded: {project}/.agents/skills/broken/SKILL.md:2 name:" in text
    assert "<table" in fe.html(listing)

    prompt = fe.execute("%agent follow the house rules for dates")
    assert fe.done(prompt)["content"]["status"] == "ok"
    assert "Loaded the date rules." in fe.text(prompt)
    check = fe.execute("import opencode_nb.kernel as k; a = k.current(); ws = a.workspace(); "
                       "[p] = [p for m in ws.sessions.messages(a.session_id) for p in m.parts if p.type == 'tool']; "
                       "print(p.tool, p.state.status, 'Write 2026-11-26.' in p.state.output)")
    fe.done(check)
    assert fe.text(check).strip() == "skill completed True"


def test_skills_says_where_skills_go_when_there_are_none(kernel):
    fe = kernel([], render_views=False, env=HEADLESS)
    listing = fe.execute("%agent skills")
    fe.done(listing)
    assert "No skills here. A skill is a folder holding a SKILL.md" in fe.text(listing)


def test_skills_alone_is_the_subcommand_and_skills_followed_by_words_a_prompt():
    from opencode_nb.kernel.magics.subcommands import HELP, split_line

    assert split_line("skills") == ("skills", [])
    assert split_line("skills for the quarterly report, please") == (None, [])
    assert "%agent skills" in HELP
