"""Finding skills: where `SKILL.md` folders are looked for, which one wins a name, and what a bad one costs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from opencode_nb.config.skills import Skills, find_skills, read_skill


def skill(name: str, description: str = "", body: str = "Do it well.") -> str:
    return f"---\nname: {name}\ndescription: {description or f'The {name} skill.'}\n---\n\n{body}\n"


def found(project, directory: Path | None = None):
    return find_skills(directory or project.cwd, project.global_dir)


@pytest.mark.parametrize("folder", [".opencode/skill", ".opencode/skills", ".claude/skills", ".agents/skills"])
def test_a_skill_is_a_folder_with_a_skill_md_in_any_of_the_four_project_folders(project, folder):
    project.write(f"repo/{folder}/pdf-forms/SKILL.md",
                  "---\nname: pdf-forms\ndescription: Fills PDF forms: use it for any form.\n---\n\n"
                  "Open the form with pypdf.\n")
    project.write(f"repo/{folder}/pdf-forms/scripts/fill.py", "print('filled')\n")
    [found_skill] = found(project).skills
    assert found_skill.name == "pdf-forms"
    assert found_skill.description == "Fills PDF forms: use it for any form."
    assert found_skill.path == project.repo / folder / "pdf-forms" / "SKILL.md"
    assert found_skill.directory == project.repo / folder / "pdf-forms"
    assert read_skill(found_skill.path)[1] == "Open the form with pypdf."


def test_skills_are_found_in_every_folder_from_the_git_root_down_but_not_above_it(project):
    project.write("repo/.claude/skills/at-root/SKILL.md", skill("at-root"))
    project.write("repo/analysis/.agents/skills/in-between/SKILL.md", skill("in-between"))
    project.write("repo/analysis/q3/.opencode/skill/here/SKILL.md", skill("here"))
    project.write(".claude/skills/above-the-repository/SKILL.md", skill("above-the-repository"))
    project.write("repo/analysis/q3/deeper/.opencode/skill/below/SKILL.md", skill("below"))
    assert [s.name for s in found(project).skills] == ["at-root", "here", "in-between"]


def test_outside_a_repository_skills_are_found_up_to_the_filesystem_root(tmp_path):
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    (tmp_path / ".claude" / "skills" / "far").mkdir(parents=True)
    (tmp_path / ".claude" / "skills" / "far" / "SKILL.md").write_text(skill("far"))
    assert [s.name for s in find_skills(work, tmp_path / "xdg").skills] == ["far"]


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="file owners are a POSIX notion")
def test_outside_a_repository_a_skill_above_the_directory_that_another_user_owns_is_refused(tmp_path, monkeypatch):
    """`/tmp/.claude/skills` may be anybody's: only the person's own (or the system's) skills load from above."""
    work = tmp_path / "shared" / "mine"
    planted = tmp_path / "shared" / ".claude" / "skills" / "planted" / "SKILL.md"
    here = work / ".claude" / "skills" / "here" / "SKILL.md"
    for path in (planted, here):
        path.parent.mkdir(parents=True)
        path.write_text(skill(path.parent.name))
    if os.getuid() == 0:
        for path in (planted, planted.parent, here, here.parent):
            os.chown(path, 4242, 4242)
    else:
        monkeypatch.setattr(os, "getuid", lambda: 4243)  # every file here then belongs to somebody else
    skills = find_skills(work, tmp_path / "xdg")
    assert [s.name for s in skills.skills] == ["here"], "in the working directory itself the person chose to be"
    [problem] = skills.problems
    assert str(problem).startswith(f"{planted}: belongs to another user (uid ")
    assert "outside any repository, so it is not loaded" in str(problem)


@pytest.mark.parametrize("folder", ["skill", "skills"])
def test_the_global_config_dir_holds_the_persons_own_skills(project, folder):
    project.write(f"xdg/opencode_nb/{folder}/house-style/SKILL.md", skill("house-style"))
    [mine] = found(project).skills
    assert mine.path == project.global_dir / folder / "house-style" / "SKILL.md"


def test_a_nearer_skill_shadows_a_farther_one_of_the_same_name_and_the_shadowed_are_named(project):
    project.write("xdg/opencode_nb/skills/report/SKILL.md", skill("report", "Global report."))
    project.write("repo/.claude/skills/report/SKILL.md", skill("report", "Root report."))
    project.write("repo/analysis/q3/.claude/skills/report/SKILL.md", skill("report", "Here, from .claude."))
    project.write("repo/analysis/q3/.opencode/skills/report/SKILL.md", skill("report", "Here, from .opencode."))
    project.write("repo/.agents/skills/other/SKILL.md", skill("other"))
    skills = found(project)
    assert [(s.name, s.description) for s in skills.skills] == [("other", "The other skill."),
                                                               ("report", "Here, from .opencode.")]
    assert [(s.skill.description, s.by.description) for s in skills.shadowed] == [
        ("Global report.", "Root report."), ("Root report.", "Here, from .claude."),
        ("Here, from .claude.", "Here, from .opencode.")]


BAD = {
    "no frontmatter": ("Just instructions.\n", 1, "has no frontmatter"),
    "invalid yaml": ("---\nname: broken\ndescription: [unclosed\n---\nbody\n", 4, "invalid YAML"),
    "frontmatter never closed": ("---\nname: broken\ndescription: x\n", 1, "never closed"),
    "no description": ("---\nname: broken\n---\nbody\n", 1, "description: is required"),
    "empty description": ("---\nname: broken\ndescription: ''\n---\nbody\n", 3, "description: is required"),
    "name of another folder": ("---\nname: other\ndescription: x\n---\nbody\n", 2,
                               "'other' is not the name of its folder 'broken'"),
    "name with bad characters": ("---\nname: Broken_Skill\ndescription: x\n---\nbody\n", 2,
                                 "'Broken_Skill' is not a skill name"),
    "description not text": ("---\nname: broken\ndescription:\n  a: 1\n---\nbody\n", 3, "expected text"),
    "a switch that is not true or false": ("---\ndescription: x\ndisable-model-invocation: sometimes\n---\nbody\n",
                                           3, "'sometimes' is not true or false"),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_a_bad_skill_md_is_a_problem_with_file_and_line_and_the_other_skills_still_load(project, case):
    text, line, words = BAD[case]
    bad = project.write("repo/.opencode/skill/broken/SKILL.md", text)
    project.write("repo/.opencode/skill/good/SKILL.md", skill("good"))
    skills = found(project)
    assert [s.name for s in skills.skills] == ["good"]
    [problem] = skills.problems
    assert str(problem).startswith(f"{bad}:{line}"), str(problem)
    assert words in str(problem)


def test_every_problem_of_one_file_is_listed_at_once(project):
    bad = project.write("repo/.claude/skills/broken/SKILL.md", "---\nname: Nope\n---\nbody\n")
    problems = [str(p) for p in found(project).problems]
    assert problems == [f"{bad}:2 name: 'Nope' is not a skill name: at most 64 lowercase letters, digits and single "
                        "hyphens inside, e.g. name: pdf-forms",
                        f"{bad}:1 description: is required: one or two sentences on what the skill does and when to "
                        "use it; the model decides from it whether to load the skill"]


def test_a_description_with_an_unquoted_colon_is_read_as_people_mean_it(project):
    project.write("repo/.opencode/skill/csv/SKILL.md", "---\nname: csv\ndescription: Cleans CSV: dates, units\n---\nx")
    assert found(project).skills[0].description == "Cleans CSV: dates, units"


def test_folders_without_a_skill_md_and_hidden_folders_are_not_skills(project):
    project.write("repo/.opencode/skill/notes/README.md", "not a skill\n")
    project.write("repo/.opencode/skill/.cache/SKILL.md", skill(".cache"))
    project.write("repo/.opencode/skill/loose.md", skill("loose"))
    skills = found(project)
    assert skills.skills == () and skills.problems == ()


def test_skills_are_read_again_when_a_skill_md_is_added_edited_or_removed(project):
    live = Skills(project.cwd, project.global_dir)
    assert live.current().skills == ()
    path = project.write("repo/.claude/skills/later/SKILL.md", skill("later", "First words."))
    assert [s.description for s in live.current().skills] == ["First words."]
    unchanged = live.current()
    assert live.current() is unchanged, "nothing changed: nothing parsed again"
    path.write_text(skill("later", "Second words, longer."))
    assert [s.description for s in live.current().skills] == ["Second words, longer."]
    assert live.load("later")[1] == "Do it well."
    path.unlink()
    assert live.current().skills == ()
    with pytest.raises(KeyError):
        live.load("later")


def test_a_linked_skill_folder_is_followed(project, tmp_path):
    shared = project.write("shared/tidy/SKILL.md", skill("tidy")).parent
    (project.repo / ".claude" / "skills").mkdir(parents=True)
    os.symlink(shared, project.repo / ".claude" / "skills" / "tidy")
    assert [s.name for s in found(project).skills] == ["tidy"]


def test_where_a_skill_came_from_is_relative_to_the_project_or_marked_global(project):
    project.write("repo/.claude/skills/a/SKILL.md", skill("a"))
    project.write("xdg/opencode_nb/skills/b/SKILL.md", skill("b"))
    live = Skills(project.cwd, project.global_dir)
    a, b = live.current().skills
    assert live.where(a, project.repo) == ".claude/skills/a/SKILL.md"
    assert live.where(b, project.repo) == f"{project.global_dir}/skills/b/SKILL.md (global)"


def test_the_workspace_lists_skill_problems_with_its_other_warnings(project):
    from opencode_nb import Workspace

    bad = project.write("repo/.opencode/skills/broken/SKILL.md", "---\nname: broken\n---\nbody\n")
    with Workspace(project.cwd, {"model": "scripted/demo"}, data_dir=project.base / "data", env=project.env()) as ws:
        assert f"{bad}:1 description: is required" in "\n".join(ws.warnings)
