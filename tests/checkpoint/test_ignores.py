"""The frozen ignore rules mean what git's own files meant, and only the person's edits are adopted."""

from __future__ import annotations

import subprocess

import pytest

from opencode_nb.checkpoint.ignores import FrozenRules, flatten, translate

from .conftest import bash, open_workspace


def test_a_nested_gitignore_is_anchored_at_its_folder():
    assert translate("a/b", "*.log\n/build\ndocs/tmp/\n!keep.log\n# note\n\n") == [
        "/a/b/**/*.log", "/a/b/build", "/a/b/docs/tmp/", "!/a/b/**/keep.log"]
    assert translate("", "*.log\n!x.log\n") == ["*.log", "!x.log"]


def test_flattened_rules_ignore_what_git_ignores(tmp_path):
    """The same tree, asked of git with the real files and with the flattened rules: the same answer."""
    root = tmp_path / "w"
    for rel in ["a.log", "keep.log", "sub/b.log", "sub/keep.log", "sub/deep/c.log", "sub/build/x", "build/y",
                "other/build/z", "src/main.py"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    sources = {".gitignore": "*.log\n!keep.log\n/build/\n", "sub/.gitignore": "!b.log\nbuild\n"}
    for rel, text in sources.items():
        (root / rel).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    live = subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], cwd=root, capture_output=True,
                          text=True, check=True).stdout.split()
    rules = tmp_path / "rules"
    rules.write_text("\n".join(flatten(sources)) + "\n")
    frozen = subprocess.run(["git", "ls-files", "--others", f"--exclude-from={rules}"], cwd=root,
                            capture_output=True, text=True, check=True).stdout.split()
    assert sorted(frozen) == sorted(live) and "sub/b.log" in frozen and "other/build/z" in frozen


def test_only_a_change_made_between_turns_is_adopted(tmp_path):
    rules = FrozenRules(tmp_path / "state.json")
    assert rules.rules({".gitignore": "*.log\n"}, fresh=False) == ["*.log"]  # the first look adopts
    rules.saw({".gitignore": "*\n"})  # a turn wrote `*`: seen at its snapshot
    assert rules.rules({".gitignore": "*\n"}, fresh=False) == ["*.log"]
    assert rules.rules({".gitignore": "*\n"}, fresh=True) == ["*.log"]  # the next turn: still the person's
    rules.saw({".gitignore": "*\n"})
    assert rules.rules({".gitignore": "*.tmp\n"}, fresh=False) == ["*.log"]  # within a turn: never
    assert rules.rules({".gitignore": "*.tmp\n"}, fresh=True) == ["*.tmp"]  # edited between turns: adopted


def _recorded(ws) -> list[str]:
    return ws.checkpoints.snapshots._run("ls-files", "-z").split("\0")


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "weakened"])
async def test_the_persons_nested_gitignore_files_are_honoured_from_the_first_snapshot_and_when_added(
        project, tmp_path, monkeypatch, weakened):
    """A `.gitignore` in a subfolder is one no snapshot has listed yet (the store's index knows only files it
    recorded): one there before the store was made, and one the person adds between turns, must both be
    adopted, or the build folders they name are recorded at every step, and never again left out."""
    from opencode_nb.checkpoint import store as store_module

    if weakened:
        monkeypatch.setattr(store_module.FrozenRules, "adopt", lambda self, found: None)
    (project / "web" / "dist").mkdir(parents=True)
    (project / "web" / ".gitignore").write_text("dist/\n")
    (project / "web" / "dist" / "bundle.js").write_text("built\n")
    ws, _ = open_workspace(project, tmp_path / "data", [bash("echo a > a.txt"), {"text": "ok"},
                                                        bash("echo b > b.txt"), {"text": "ok"}])
    session = ws.sessions.create()
    await ws.prompt(session.id, "one")
    first = _recorded(ws)
    (project / "lib" / "build").mkdir(parents=True)  # the person, between turns
    (project / "lib" / ".gitignore").write_text("build/\n")
    (project / "lib" / "build" / "lib.o").write_text("object\n")
    await ws.prompt(session.id, "two")
    second = _recorded(ws)
    ws.close()
    assert "a.txt" in first and "b.txt" in second
    if weakened:
        assert "web/dist/bundle.js" in first and "lib/build/lib.o" in second
        return
    assert "web/dist/bundle.js" not in first and "web/.gitignore" in first
    assert "lib/build/lib.o" not in second and "lib/.gitignore" in second


async def test_a_nested_gitignore_a_turn_writes_is_not_adopted(project, tmp_path):
    ws, _ = open_workspace(project, tmp_path / "data", [
        bash("mkdir -p pkg && printf '*\\n' > pkg/.gitignore && echo evil > pkg/mod.py"), {"text": "ok"},
        bash("echo more > pkg/more.py"), {"text": "ok"}])
    session = ws.sessions.create()
    await ws.prompt(session.id, "one")
    await ws.prompt(session.id, "two")
    recorded = _recorded(ws)
    ws.close()
    assert "pkg/mod.py" in recorded and "pkg/more.py" in recorded
