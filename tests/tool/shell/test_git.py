"""git as rules see it: its own options dropped, the subcommand named, and its ways of running other code."""

import pytest

from opencode_nb.tool.shell.git import git
from opencode_nb.tool.shell.parse import command_patterns, parse_command
from opencode_nb.tool.shell.words import literal


@pytest.mark.parametrize("line", [
    "git -C . push origin main", "git -c push.default=current push origin main", "git --no-pager push origin main",
    "git -P push origin main", "git -p push origin main", "git --git-dir=.git push origin main",
    "git --git-dir .git --work-tree . push origin main", "git --namespace x --bare push origin main",
    "git --literal-pathspecs --no-optional-locks push origin main", '"git" "push" origin main',
    "/usr/bin/git pu''sh origin main", "git {push,origin,main}",
])
def test_git_s_own_options_are_dropped_so_rules_see_the_subcommand(line):
    patterns, always = command_patterns(line)
    assert "git push origin main" in patterns and always == ["git push *"]


@pytest.mark.parametrize(("line", "kind"), [
    ("git $sub origin", "unknown"), ("git $(echo push) origin", "unknown"), ("git --exec-path=. status", "unknown"),
    ("git pu?h", "unknown"), ("git p origin", "hidden"), ("git -c alias.p=push p", "hidden"),
    ("git -c alias.x='!rm v' x", "hidden"), ("git -c core.pager=less log", "hidden"),
    ("git -c core.sshCommand=x fetch", "hidden"), ("git -c include.path=x.cfg status", "hidden"),
    ("git config alias.p push", "hidden"), ("git config --global core.fsmonitor x", "hidden"),
    ("git config --edit", "hidden"), ("git clone --template=t url", "hidden"), ("git -c $kv status", "hidden"),
])
def test_what_git_runs_that_no_rule_sees_is_said(line, kind):
    parsed = parse_command(line)
    assert (parsed.unknown if kind == "unknown" else parsed.hidden), line


@pytest.mark.parametrize("line", ["git config --get alias.p", "git config user.email a@b", "git -c color.ui=never log",
                                  "git status", "git -C src diff --stat"])
def test_ordinary_git_hides_nothing(line):
    parsed = parse_command(line)
    assert not parsed.unknown and not parsed.hidden


def test_commands_git_is_told_to_run_are_checked_themselves():
    assert git([literal(w) for w in ["git", "bisect", "run", "make", "test"]]).commands[0][0].value == "make"
    for line, inner in [("git rebase -x 'rm x' main", "rm x"), ("git rebase --exec='rm x' main", "rm x"),
                        ("git submodule foreach --recursive 'rm x'", "rm x"), ("git difftool -x 'rm x'", "rm x"),
                        ("git grep -O'rm x' foo", "rm x"), ("git push --receive-pack='rm x' origin", "rm x"),
                        ("git filter-branch --msg-filter 'rm x'", "rm x")]:
        assert inner in command_patterns(line)[0], line
