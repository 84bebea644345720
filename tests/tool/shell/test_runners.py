"""One table names the programs an option, a setting or a mode makes run a command; what such an option runs is
checked like the line itself (shell text, a program) or is hidden from the rules (anything else)."""

import re

import pytest

from opencode_nb.permission import evaluate, from_config
from opencode_nb.tool.shell.launchers import LAUNCHERS
from opencode_nb.tool.shell.parse import parse_command
from opencode_nb.tool.shell.runners import COMMAND_RUNNERS, calls
from opencode_nb.tool.shell.unwrap import UNWRAPPED
from opencode_nb.tool.shell.words import literal
from tests.safety.corpus import CASES

RULES = from_config({"bash": {"*": "allow", "rm *": "deny"}})
CATEGORY = "programs that run commands"

KNOWN = frozenset({
    "split", "sort", "compgen", "tar", "gtar", "bsdtar", "ssh", "scp", "sftp", "rsync", "zip", "rg", "man", "less",
    "groff", "troff", "nroff", "vi", "vim", "vimdiff", "view", "ex", "rvim", "rview", "nvim", "vim.basic", "vim.tiny",
    "tmux", "screen",
})
"""Programs known to run a command named by an option, a setting (`-o ProxyCommand=`), a mode (`groff -U`) or a
command of their own (`tmux new-session CMD`)."""


KNOWN_WRAPPERS = frozenset({
    "sudo", "doas", "env", "nice", "nohup", "setsid", "stdbuf", "ionice", "chrt", "taskset", "timeout", "time",
    "exec", "command", "builtin", "xargs", "flock", "script", "strace", "ltrace", "su", "runuser", "sg", "watch",
    "chroot", "unshare", "find", "fakeroot", "xvfb-run", "dbus-run-session", "valgrind", "unbuffer", "busybox",
    "setpriv", "prlimit", "choom", "nsenter", "runcon", "bwrap", "ssh-agent", "setarch", "linux32", "linux64",
    "x86_64", "i386",
})
"""Programs known to run the command that follows their own options."""


def _names(command: str, programs: frozenset[str] | set[str]) -> set[str]:
    return {name for name in programs if re.search(rf"(?<![\w./-]){re.escape(name)}(?![\w.-])", command)}


def test_every_program_known_to_run_commands_is_in_the_table():
    assert sorted(KNOWN - COMMAND_RUNNERS.keys()) == []


def test_every_program_known_to_run_the_command_after_its_options_is_read_for_it():
    assert sorted(KNOWN_WRAPPERS - UNWRAPPED) == []


@pytest.mark.parametrize("case", [c for c in CASES if c.category == CATEGORY and c.expect == "blocked"],
                         ids=lambda c: c.command[:50])
def test_every_attack_of_the_category_uses_a_program_the_checks_know_to_run_commands(case):
    """A case added for a program missing from the table fails here until the table names it."""
    assert _names(case.command, COMMAND_RUNNERS.keys() | LAUNCHERS.keys()), \
        f"no program of the table in {case.command!r}: add it to COMMAND_RUNNERS (or, for a launcher, LAUNCHERS)"


NOT_TRIED = frozenset({"gtar", "bsdtar", "evim", "eview", "gvim", "gview", "gvimdiff", "rgvim", "rgview", "vimx",
                       "vim.nox", "vim.gtk3", "nvi", "nex", "nview", "rvim", "rview"})
"""Programs of the table no attack can be tried with here: tar and vi under names of builds not installed (the
GUI and no-X vims, nvi), and the restricted `rvim`/`rview`, which refuse to run a shell at all."""


@pytest.mark.parametrize("program", sorted(COMMAND_RUNNERS.keys() - NOT_TRIED))
def test_every_program_in_the_table_has_an_attack_in_the_corpus(program):
    """Every program of the table but those of `NOT_TRIED` is tried by effect."""
    assert any(program in _names(c.command, COMMAND_RUNNERS.keys()) for c in CASES if c.expect == "blocked"), program


@pytest.mark.parametrize("line", [
    "vim -es -c '!rm x' -c 'qa!'", "vim -es '+!rm x' '+qa!'", "vim --cmd '!rm x' -es", "vim -esc '!rm x'",
    "vim -c'!rm x' f", "vim -es -c 'silent !rm x'", "vim -es -c 'sil! !rm x'", "vim -es -c '%!rm x'",
    "vim -es -c ':1,$!rm x'", "vim -es -c \"'a,'b!rm x\"", "vim -es -c 'r !rm x'", "vim -es -c 'read!rm x'",
    "vim -es -c 'w !rm x'", "vim -es -c 'qa | !rm x'", "ex -s -c '!rm x'", "view -c '!rm x' f", "vi -c '!rm x' f",
    "nvim --headless -c '!rm x'", "nvim -es --cmd 'silent !rm x'", "/usr/bin/vim.basic -es -c '!rm x'",
    "vim.tiny -es -c '!rm x'", "rvim -c '!rm x' f", "vimdiff -c '!rm x' a b", "vim -S -c '!rm x'",
    "vim -S s.vim -c '!rm x'", "nvim -l s.lua -c '!rm x'",
])
def test_the_shell_commands_of_vis_ex_commands_are_checked_like_the_line(line):
    """A deny holds against them outright: no approval of the hidden rest lets the `!` command run."""
    assert "deny" in [evaluate("bash", p, RULES).action for p in parse_command(line).patterns], line


@pytest.mark.parametrize("line", ["vim -es -c 'w! out.txt' -c 'qa!'", "vim +10 f", "vim '+/pattern' f",
                                  "vim -c 'set nu' f", "nvim --headless -c 'qa!'"])
def test_vis_ex_commands_without_a_shell_command_add_no_pattern(line):
    parsed = parse_command(line)
    assert all(p.startswith(line.split()[0]) for p in parsed.patterns) and parsed.hidden, parsed.patterns


@pytest.mark.parametrize("line", [
    "split --filter='rm x' f", "split --fil='rm x' f", "split -n 1 --filter 'rm x' f", "sort --compress-program=rm f",
    "sort --compress-p rm f", "compgen -C 'rm x' w", "tar -I 'rm x' -cf a.tar f", "tar -cf a.tar f -I'rm x'",
    "tar -vcI 'rm x' -f a.tar f", "tar --use-compress-prog='rm x' -cf a.tar f", "tar --to-c='rm x' -xf a.tar",
    "tar --to-command 'rm x' -xf a.tar", "tar -cf a.tar f --checkpoint-a=exec='rm x'",
    "tar --checkpoint-action exec='rm x' -cf a.tar f", "tar --info-script='rm x' -cf a.tar f",
    "ssh -o proxycommand='rm x' h", "ssh -oProxyCommand='rm x' h", "ssh -o 'PROXYCOMMAND rm x' h",
    "ssh -vo ProxyCommand='rm x' h", "ssh h -o LocalCommand='rm x'", "ssh -o KnownHostsCommand='rm x' h",
    "scp -o ProxyCommand='rm x' f h:y", "scp -S rm f h:y", "sftp -o ProxyCommand='rm x' h", "sftp -D rm h",
    "rsync -e 'sh -c \"rm x\"' f h:y", "rsync --rsh='rm x' f h:y", "zip -T -TT 'rm x' a.zip f",
    "zip --unzip-command='rm x' a.zip f", "rg --pre rm pattern", "rg --pre=rm pattern",
    "man -P 'rm x' ls", "man --pager='rm x' ls", "man -H'rm x' ls",
])
def test_what_a_runners_option_runs_is_checked_like_the_line(line):
    assert "deny" in [evaluate("bash", p, RULES).action for p in parse_command(line).patterns], line


@pytest.mark.parametrize("line", [
    "groff -U d.tr", "troff -U d.tr", "nroff -U d.tr", "ssh -F conf h", "ssh -o Include=conf h",
    "ssh -o PKCS11Provider=./lib.so h", "ssh -I ./lib.so h", "less '+!rm x' f", "less '+|rm x' f", "less -k keys f",
    "vim -c '!rm x' f", "vim f", "ex -s", "vimdiff a b", "view f", "vi f", "nvim -S s.vim", "nvim -l s.lua",
    "tmux new-session -d 'rm x'", "tmux ls",
    "screen -dm rm x", "tar cIf 'rm x' a.tar f", "tar --to-command=\"$cmd\" -xf a.tar", "ssh -o \"$opt\" h",
])
def test_code_a_runner_is_told_to_run_that_no_rule_sees_is_hidden(line):
    assert parse_command(line).hidden, line


@pytest.mark.parametrize("line", [
    "tar -czf out.tgz src", "tar -xf a.tar -C dst", "tar -cf a.tar f --checkpoint=10 --checkpoint-action=dot",
    "tar -czf \"$out\" src", "sort -o out.txt in.txt", "split -l 100 data.csv part-", "ssh -F /dev/null h ls",
    "ssh -o StrictHostKeyChecking=no -o 'ConnectTimeout 5' h uptime", "scp f h:y", "rsync -a src/ dst/",
    "zip -r a.zip src", "rg -n pattern src", "man ls", "less +G f", "less '+/pattern' f", "groff -Tutf8 -man f",
])
def test_ordinary_calls_of_runners_add_nothing_to_check(line):
    parsed = parse_command(line)
    assert not parsed.hidden and not parsed.unknown, (parsed.hidden, parsed.unknown)
    assert all(evaluate("bash", p, RULES).action == "allow" for p in parsed.patterns)


def test_a_call_says_which_option_runs_what():
    words = [literal(w) for w in ["tar", "-cf", "a.tar", "--to-c=gzip -9", "--checkpoint-action=exec=date"]]
    found = [(c.shown, c.option.runs, c.value.value) for c in calls(COMMAND_RUNNERS["tar"], words)]
    assert found == [("--to-c", "shell", "gzip -9"), ("--checkpoint-action", "shell", "date")]
