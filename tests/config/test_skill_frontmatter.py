"""Skills as their authors write them for other programs: Claude Code's fields, long descriptions, no `name`.

The fixtures have the shapes of real published skills (a description past 1,024 characters, a folder-named
skill without `name:`, a skill kept from the model, Claude Code's extra fields) in words of our own.
"""

from __future__ import annotations

from opencode_nb.config.skills import FIELDS, MAX_DESCRIPTION, PERSON_ONLY, find_skills, invocation, read_skill

LONG = ("Builds programs that call a hosted language model through its official client libraries. "
        "Use it when the code imports that client, when the person asks for an agent built on it, or when a "
        "request mentions streaming replies, tool calls, batches, prompt caching or token counting. ")
"""Three sentences of the kind long published descriptions are made of; repeated past the format's bound."""


def long_description() -> str:
    text = ""
    while len(text) < 1068:
        text += LONG
    text = text[:1068].rstrip()
    return text + "x" * (1068 - len(text))


def found(project):
    return find_skills(project.cwd, project.global_dir)


def test_a_description_of_1068_characters_loads_with_a_note_and_is_kept_whole(project):
    description = long_description()
    assert len(description) == 1068 > MAX_DESCRIPTION
    path = project.write("repo/.claude/skills/model-client/SKILL.md",
                         f"---\nname: model-client\ndescription: {description}\nlicense: See LICENSE.txt\n---\n\n"
                         "Read the client's reference before writing code.\n")
    skills = found(project)
    assert skills.problems == ()
    [skill] = skills.skills
    assert skill.description == description
    [note] = skills.notes
    assert note.startswith(f"{path}:3: the description is 1,068 characters")
    assert "the skill loads" in note


def test_a_skill_without_name_takes_its_folders_name_as_claude_code_does(project):
    project.write("repo/.claude/skills/tidy-notebooks/SKILL.md",
                  "---\ndescription: Tidies notebooks before they are shared.\n---\n\nClear the outputs first.\n")
    [skill] = found(project).skills
    assert skill.name == "tidy-notebooks"
    assert found(project).notes == []


def test_without_name_a_folder_that_is_not_a_skill_name_is_a_problem_saying_to_rename_it(project):
    path = project.write("repo/.claude/skills/Tidy Notebooks/SKILL.md", "---\ndescription: Tidies.\n---\nx\n")
    [problem] = found(project).problems
    assert str(problem).startswith(f"{path}:1 name: 'Tidy Notebooks' is not a skill name")
    assert "rename the folder" in str(problem)


def test_when_to_use_is_appended_to_the_description(project):
    project.write("repo/.claude/skills/units/SKILL.md",
                  "---\ndescription: Converts units in tables.\nwhen_to_use: When a column mixes units.\n---\nx\n")
    [skill] = found(project).skills
    assert skill.description == "Converts units in tables. When a column mixes units."


def test_disable_model_invocation_marks_the_skill_as_the_persons_only(project):
    project.write("repo/.claude/skills/deploy-site/SKILL.md",
                  "---\nname: deploy-site\ndescription: Publishes the site.\ndisable-model-invocation: true\n---\n"
                  "Run the publish script.\n")
    project.write("repo/.claude/skills/quoted/SKILL.md",
                  "---\ndescription: Quoted switch.\ndisable-model-invocation: \"true\"\n---\nx\n")
    deploy, quoted = sorted(found(project).skills, key=lambda s: s.name)
    assert not deploy.model_invocable and not quoted.model_invocable
    assert invocation(deploy) == PERSON_ONLY.format(name="deploy-site") == (
        "kept from the model (disable-model-invocation: true): run it yourself as the command /deploy-site")


def test_user_invocable_false_is_background_knowledge_and_still_offered_to_the_model(project):
    project.write("repo/.claude/skills/house-style/SKILL.md",
                  "---\ndescription: The house style.\nuser-invocable: false\n---\nx\n")
    [skill] = found(project).skills
    assert skill.model_invocable and not skill.user_invocable
    assert "background knowledge" in invocation(skill)


def test_fields_with_an_effect_elsewhere_are_named_in_a_note_and_change_nothing(project):
    path = project.write("repo/.claude/skills/lint-fix/SKILL.md",
                         "---\ndescription: Fixes lint.\nallowed-tools: Bash(ruff *), Edit\nmodel: haiku\n"
                         "argument-hint: '[file]'\nmetadata:\n  owner: data-team\ncolour: green\n---\nx\n")
    skills = found(project)
    [skill] = skills.skills
    notes = "\n".join(skills.notes)
    assert f"{path}:3: `allowed-tools` is ignored here" in notes
    assert "a skill never changes what is allowed" in notes
    assert f"{path}:4: `model` is ignored here" in notes
    assert f"{path}:8: unknown skill field `colour`" in notes
    assert len(skills.notes) == 3  # argument-hint and metadata are information only: nothing to warn about
    assert read_skill(skill.path)[1] == "x"


def test_every_field_is_decided(project):
    """The README's table and this one agree: each field is honoured, ignored, or ignored with a note."""
    assert {"name", "description", "disable-model-invocation", "user-invocable", "allowed-tools", "license",
            "metadata", "model", "argument-hint"} <= set(FIELDS)
    assert {kind for kind, _ in FIELDS.values()} == {"honoured", "ignored", "ignored, with a note"}


def test_the_workspace_warns_of_skill_notes(project):
    from opencode_nb import Workspace

    project.write("repo/.claude/skills/lint-fix/SKILL.md", "---\ndescription: Fixes lint.\nhooks: {}\n---\nx\n")
    with Workspace(project.cwd, {"model": "scripted/demo"}, data_dir=project.base / "data", env=project.env()) as ws:
        assert "`hooks` is ignored here" in "\n".join(ws.warnings)
