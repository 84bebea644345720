"""`opencode-nb skills`: the skills of a directory as a terminal shows them."""

from .test_cli import cli_env, run


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_skills_lists_each_skill_where_it_came_from_what_it_shadows_and_what_is_broken(tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".claude/skills/report/SKILL.md", "---\nname: report\ndescription: Old report.\n---\nx\n")
    write(tmp_path / ".opencode/skills/report/SKILL.md", "---\nname: report\ndescription: Quarterly reports.\n---\nx\n")
    write(tmp_path / "xdg/opencode_nb/skills/tidy/SKILL.md", "---\nname: tidy\ndescription: Tidy data.\n---\nx\n")
    write(tmp_path / ".agents/skills/broken/SKILL.md", "---\nname: broken\n---\nx\n")
    result = run("skills", cwd=tmp_path, env=cli_env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "report  .opencode/skills/report/SKILL.md",
        "        Quarterly reports.",
        f"tidy    {tmp_path}/xdg/opencode_nb/skills/tidy/SKILL.md (global)",
        "        Tidy data.",
        "shadowed: .claude/skills/report/SKILL.md (by .opencode/skills/report/SKILL.md)",
    ]
    assert f"warning: {tmp_path}/.agents/skills/broken/SKILL.md:1 description: is required" in result.stderr


def test_without_skills_it_says_where_they_would_go(tmp_path):
    (tmp_path / ".git").mkdir()
    result = run("skills", cwd=tmp_path, env=cli_env(tmp_path))
    assert result.returncode == 0 and result.stdout.startswith("no skills here: a skill is a folder with a SKILL.md")
