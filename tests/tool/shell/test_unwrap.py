"""A program that runs another command hands it over to the checks: the inner command is found from the
wrapper's own options, and what cannot be made out is said."""

import pytest

from opencode_nb.permission import evaluate, from_config
from opencode_nb.tool.shell.parse import parse_command

RULES = from_config({"bash": {"*": "allow", "rm *": "deny", "git push*": "deny"}})


@pytest.mark.parametrize("line", [
    "sudo -u root rm x", "doas -u root rm x", "env rm x", "env -i -u HOME -C . FOO=1 rm x", "env -S 'rm x'",
    "env -S'FOO=1 rm' x", "env -- rm x", "nice -n 5 rm x", "nice -5 rm x", "nohup rm x", "timeout 5 rm x",
    "timeout -s KILL -k 1 5 rm x", "echo x | xargs rm", "xargs -0 -n1 -P2 rm < list", "echo x | xargs -I% rm %",
    "flock lock rm x", "flock -w 1 lock -c 'rm x'", "taskset 1 rm x", "taskset -c 0 rm x", "chrt -o 0 rm x",
    "script -qc 'rm x' /dev/null", "strace -f -o /dev/null rm x", "su -c 'rm x'", "su - root -c 'rm x'",
    "runuser -u root -- rm x", "trap 'rm x' EXIT", "trap -- 'rm x' INT TERM", "coproc rm x", "coproc X { rm x; }",
    "exec -a name rm x", "command -p rm x", "builtin command rm x", "time -p rm x", "setsid -w rm x",
    "stdbuf -oL rm x", "ionice -c 3 rm x", "unshare rm x", "busybox rm x", "chroot / rm x", "watch -n1 'rm x'",
    "find . -exec rm {} \\;", "find . -execdir rm {} +", "rg --pre rm pattern", "rg --pre=rm pattern",
    "bash -c 'rm x'", "bash -c -- 'rm x'", "bash -e -c 'rm x'", "bash -ec 'rm x'", "bash -o errexit -c 'rm x'",
    "sh -c 'sh -c \"rm x\"'", "eval 'rm x'", "eval rm x", "builtin eval 'rm x'", "exec bash -c 'rm x'",
    "git -C . push", "git -c a.b=c --no-pager -P --git-dir=.git --work-tree . push", "/usr/bin/git push",
    "git bisect run rm x", "git rebase --exec 'rm x' main", "git submodule foreach 'rm x'",
    "git filter-branch --tree-filter 'rm x' HEAD", "env - rm x", "chrt -D 5 0 rm x",
])
def test_a_wrapped_denied_command_is_denied(line):
    patterns = parse_command(line).patterns
    assert "deny" in [evaluate("bash", p, RULES).action for p in patterns], patterns


@pytest.mark.parametrize("line", ["command -v rm", "taskset -p 1", "sudo -l", "env", "timeout 5", "trap - EXIT"])
def test_a_wrapper_that_runs_nothing_adds_nothing(line):
    parsed = parse_command(line)
    assert [evaluate("bash", p, RULES).action for p in parsed.patterns] == ["allow"] * len(parsed.patterns)
    assert not parsed.unknown and not parsed.hidden


@pytest.mark.parametrize(("line", "why"), [
    ("echo rm x | xargs env", "`<input>`"),
    ("find /bin -name rm -exec {} x \\;", "`{}`"),
    ("echo rm | xargs -I% % x", "`%`"),
    ("sudo $opt rm x", "option of `sudo`"),
    ("echo v | xargs git", "subcommand"),
])
def test_a_command_the_wrapper_takes_from_what_only_the_run_knows_is_unknown(line, why):
    assert any(why in reason for reason in parse_command(line).unknown)


@pytest.mark.parametrize("line", ["echo 'rm x' | sh", "sh < script.sh", "bash -s", "sh <<< 'rm x'", "bash <(echo x)",
                                  "su", "script -q /dev/null", "echo \"'rm x'\" | xargs sh -c", "zsh -c 'rm x'",
                                  "echo x | xargs -I{} rm {}"])
def test_a_shell_given_text_no_rule_sees_is_hidden(line):
    assert parse_command(line).hidden


@pytest.mark.parametrize("line", [
    "timeout --sig KILL 5 rm x", "timeout --sig=KILL 5 rm x", "timeout --k 1 5 rm x", "nice --adj 5 rm x",
    "env --uns HOME rm x", "env --ch . rm x", "env --split 'rm x'", "env --sp='rm x'", "env -S 'rm\\_x'",
    "env -vS 'rm x'", "env -S 'rm \"x\"\\c rest'", "xargs --arg l.txt rm", "xargs --max-a 1 rm", "xargs --max-l rm",
    "flock --time 1 lk rm x", "flock --wa 1 lk rm x", "stdbuf --out 0 rm x", "stdbuf --in 0 --err 0 rm x",
    "setsid --w rm x", "taskset --cpu 0 rm x", "chrt --ot 0 rm x", "ionice --classd 7 rm x", "unshare --fo rm x",
    "script -q --comm 'rm x' /dev/null", "strace --summary-o rm x",
    "sudo --us root rm x", "su --comm 'rm x'", "watch --ex rm x",
])
def test_a_wrapper_given_abbreviated_options_still_hands_its_command_to_the_rules(line):
    patterns = parse_command(line).patterns
    assert "deny" in [evaluate("bash", p, RULES).action for p in patterns], patterns


@pytest.mark.parametrize("line", ["timeout --frobnicate x 5 rm y", "nice -z 5 rm y", "stdbuf --x 0 rm y",
                                  "strace --out /dev/null rm y", "unshare --frob x rm y"])
def test_an_option_a_wrappers_table_does_not_know_makes_its_command_unknown(line):
    """It may take the next word as its value: the word after it is not trusted to be the command, and what
    would run if it were a value is checked too."""
    parsed = parse_command(line)
    assert any("not an option of" in reason for reason in parsed.unknown), parsed.unknown
    assert "deny" in [evaluate("bash", p, RULES).action for p in parsed.patterns]


@pytest.mark.parametrize("line", ["env -S 'rm \\q'", "env -S '\"open'", "env -S '$HOME rm x'", "env --i x rm y",
                                  "xargs --frob rm", "flock --frob x rm y"])
def test_env_text_env_would_refuse_is_unknown_not_guessed(line):
    assert parse_command(line).unknown


def test_env_text_with_a_variable_is_hidden():
    assert parse_command("env -S '${CMD} x'").hidden
