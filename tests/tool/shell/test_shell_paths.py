"""Where a line's paths lead: every argument, option value, redirection and `cd` target is resolved from where
the shell will be; what only the run can know is reported as unknown, to be asked about."""

from pathlib import Path

import pytest

from opencode_nb.tool.files.access import in_git_dir
from opencode_nb.tool.shell.parse import parse_command
from opencode_nb.tool.shell.shell_paths import PathCheck, check_paths


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / ".git" / "hooks").mkdir(parents=True)
    return root


def check(line: str, root: Path) -> PathCheck:
    return check_paths(parse_command(line, cwd=root), root, root, git_dir=in_git_dir)


@pytest.mark.parametrize("line", [
    "python train.py --out ../x", "cp notes.md ../x", "tar -C .. -cf a.tar src", "git -C ../x status",
    "dd if=/dev/zero of=../x count=1", "pip install --target=../x pkg", "ln -s ../x link",
    "some-tool --flag ../x", "echo hi > ../x", "cat < ../x", "cd .. && touch x", "pushd .. && touch x",
    "d=..; touch $d/x", "for d in ..; do touch $d/x; done", "touch ..{/x,/y}", "curl -o ../x file:///etc/hosts",
    "bash -c 'cd ..; touch x'", "sudo cp a ../x",
])
def test_any_argument_leading_outside_is_found(line, root):
    assert check(line, root).outside, line


@pytest.mark.parametrize("line", [
    "touch ~/x", "ls ~", "cd && touch x", "cd ~ && ls", "touch $HOME/x", "cat $(pwd)/../x", "cd $(mktemp -d)",
    "touch \"$PWD/../x\"", "read d; touch $d/x", "cp x ${TMP:-/tmp}/y", "echo hi > $(echo ../x)", "cd -",
    "wc -l $(git ls-files)",
])
def test_a_path_built_from_what_only_the_run_knows_is_unknown(line, root):
    assert check(line, root).unknown, line


@pytest.mark.parametrize("line", [
    "ls src && cat src/a.py && rm -rf build/* && touch new.txt 2>/dev/null", "grep -rn '/api/v1' src",
    "sed 's/\\/usr/\\/opt/' src/a.py", "awk -F/ '{print $1}' f", "tr / _ < f", "echo /etc/passwd",
    "printf '%s\\n' /usr/lib", "git commit -m '/tmp cleanup'", "curl https://example.com/a/b", "git log HEAD~1..main",
    "kill $(cat pid)", "python train.py --epochs $EPOCHS", "for f in src/*.py; do black $f; done",
    "f() { git \"$@\"; }; f status", "cd src && cat ../README.md", "make 2>/dev/null >&2", "echo x > /dev/null",
])
def test_what_stays_inside_or_is_not_a_path_is_left_alone(line, root):
    found = check(line, root)
    assert (found.outside, found.unknown) == ([], []), line


def test_a_cd_moves_where_later_paths_resolve(root, tmp_path):
    assert check("cd .. && rm -rf other", root).outside == [tmp_path, tmp_path / "other"]
    assert check("cd src && rm ../README.md", root).outside == []
    assert check("cd $(mktemp -d) && touch x", root).unknown == ["$(mktemp -d)"]


def test_writes_into_git_s_own_files_are_found(root):
    assert check("echo x > .git/hooks/pre-commit", root).git_internals == [".git/hooks/pre-commit"]
    assert check("cp evil .git/config", root).git_internals == [".git/config"]
    assert check("cat .git/config && git status", root).git_internals == []
