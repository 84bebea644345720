"""Each wrapper's table of options is the program's own: what its `--help` lists, the table lists, with the same
need for a value; and a GNU long option is read as the program reads it, whole or by any unambiguous prefix."""

import os
import re
import shutil
import subprocess

import pytest

from opencode_nb.tool.shell.options import OptionSpec, scan
from opencode_nb.tool.shell.program_options import BWRAP_ARGUMENTS, PROGRAM_OPTIONS, gnu
from opencode_nb.tool.shell.words import literal

_VALUE = r" (?=<|[A-Z]|\S+\|)"
"""A value after one space: `<secs>`, `FILE`, `slave|shared` (a description starts lowercase, or after more spaces)."""
_LONG = re.compile(rf"^\s{{1,8}}(?:-(\w), )?--(\w[\w.-]*)(\[=|={_VALUE}|=|{_VALUE}|)")
"""`  -k, --kill-after=DURATION`, ` -w, --timeout <secs>`, `      --foreground`, ` -m, --mount[=<file>]`."""
_SHORT = re.compile(rf"^\s{{1,8}}-(\w)(\[|{_VALUE}|\s|$)")
"""`  -E END`, `  -l[MAX-LINES]`, `  -0  ...`."""

HELP_MISLEADS = {
    ("xargs", "--max-lines"),  # printed `=MAX-LINES`, read only after `=`: see the test below
    # strace prints some options once per value (`-x, --strings-in-hex=non-ascii`, `-q, --quiet=attach,...`)
    # and gives the short letter the long option's value, though `-x`, `-q`, `-D`, `-r`, `-t`, `-T`, `-y`, `-Y`
    # take none (`strace -q -o /dev/null echo hi` prints hi).
    *(("strace", o) for o in ("--quiet", "--strings-in-hex", "-D", "-q", "-r", "-t", "-T", "-x", "-y", "-Y")),
    # prlimit prints its resources (`-n, --nofile`) bare, but each takes an optional limit: see below
    *(("prlimit", f"-{letter}") for letter in "cdefilmnqrstuvxy"),
}
"""Options whose `--help` line says otherwise than the program does."""


def _help(program: str) -> tuple[dict[str, str], dict[str, str]]:
    """The long and short options a program's `--help` lists: "value", "optional" or "flag" for each."""
    out = subprocess.run([program, "--help"], capture_output=True, text=True, timeout=10,
                         env={**os.environ, "LC_ALL": "C"})
    longs: dict[str, str] = {}
    shorts: dict[str, str] = {}
    for line in (out.stdout + out.stderr).splitlines():
        if m := _LONG.match(line):
            short, name, tail = m.groups()
            kind = "optional" if tail == "[=" else "value" if tail else "flag"
            longs[f"--{name}"] = kind
            if short:
                shorts[f"-{short}"] = kind
        elif m := _SHORT.match(line):
            tail = m.group(2)
            shorts[f"-{m.group(1)}"] = "optional" if tail == "[" else "value" if tail == " " else "flag"
    return longs, shorts


def _in_table(spec: OptionSpec, option: str) -> str | None:
    if option.startswith("--"):
        return "value" if option in spec.long_values else "optional" if option in spec.long_flags else None
    letter = option[1]
    return ("value" if letter in spec.values else "optional" if letter in spec.attached + spec.digits else
            "flag" if letter in spec.flags else None)


@pytest.mark.parametrize("program", sorted(PROGRAM_OPTIONS))
def test_the_table_lists_every_option_the_programs_help_does_and_whether_it_takes_a_value(program):
    if shutil.which(program) is None:
        pytest.skip(f"{program} is not installed here")
    spec = PROGRAM_OPTIONS[program]
    longs, shorts = _help(program)
    assert longs, f"`{program} --help` listed no long options: the reading of it is out of date"
    wrong = []
    for option, kind in [*longs.items(), *shorts.items()]:
        table = _in_table(spec, option)
        if table is None:
            wrong.append(f"{option} is missing")
        elif (program, option) not in HELP_MISLEADS:
            # a long flag and a long option taking a value only after `=` read the next word alike
            expected = "optional" if option.startswith("--") and kind == "flag" else kind
            if table != expected:
                wrong.append(f"{option}: help says {kind}, the table {table}")
    assert not wrong, f"{program}: {wrong}"


@pytest.mark.parametrize("line", [["xargs", "--max-lines", "1", "true"], ["prlimit", "-n", "100", "true"]])
def test_an_option_whose_help_shows_no_optional_value_reads_it_only_in_the_same_word(line, tmp_path):
    """The table says so (`xargs --max-lines[=N]`, `prlimit -n[LIMIT]`): the word after it is the command."""
    if shutil.which(line[0]) is None:
        pytest.skip(f"{line[0]} is not installed here")
    ran = subprocess.run(line, input="a\n", capture_output=True, text=True, cwd=tmp_path)
    assert ran.returncode == 127 and line[2] in ran.stderr  # it ran the program `1` / `100`
    found = scan([literal(w) for w in line], 1, PROGRAM_OPTIONS[line[0]])
    assert found.operand == 2


def test_bwraps_table_gives_each_option_of_its_help_the_words_it_takes():
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap is not installed here")
    out = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=10).stdout
    listed = {m.group(1): len(m.group(2).split()) for line in out.splitlines()
              if (m := re.match(r"\s+(--[\w-]+)((?: [A-Z][A-Z_0-9]*)*)\s{2,}", line))}
    assert len(listed) > 40
    assert {o: n for o, n in listed.items() if BWRAP_ARGUMENTS.get(o) != n} == {}


@pytest.mark.parametrize(("words", "name", "value"), [
    (["timeout", "--sig", "KILL"], "--signal", "KILL"),
    (["timeout", "--sig=KILL"], "--signal", "KILL"),
    (["nice", "--adj", "5"], "--adjustment", "5"),
    (["env", "--uns", "HOME"], "--unset", "HOME"),
    (["env", "--split", "rm x"], "--split-string", "rm x"),
    (["xargs", "--arg", "l.txt"], "--arg-file", "l.txt"),
    (["flock", "--time", "1"], "--timeout", "1"),
    (["stdbuf", "--out", "0"], "--output", "0"),
])
def test_a_long_option_is_read_by_its_full_name_from_any_unambiguous_prefix(words, name, value):
    found = scan([literal(w) for w in words], 1, PROGRAM_OPTIONS[words[0]])
    assert found is not None and found.value(name).value == value
    assert found.operand == len(words) and not found.doubtful


def test_an_exact_long_name_wins_over_the_longer_names_it_begins():
    spec = gnu("pid pidfile=")
    found = scan([literal(w) for w in ["p", "--pid", "cmd"]], 1, spec)
    assert found.has("--pid") and found.operand == 2 and not found.doubtful


@pytest.mark.parametrize("words", [["timeout", "--frobnicate", "x", "5"], ["env", "--i", "x"],
                                   ["timeout", "-z", "5"]])
def test_an_option_the_table_does_not_know_or_cannot_tell_apart_is_doubtful(words):
    """`--frobnicate` may be a newer version's, `env --i` is `--ignore-environment` or `--ignore-signal`: either
    may take the next word as its value."""
    found = scan([literal(w) for w in words], 1, PROGRAM_OPTIONS[words[0]])
    assert found is not None and found.doubtful == [1]


def test_a_spec_that_is_not_a_programs_complete_table_reads_unknown_long_options_as_flags():
    spec = OptionSpec(values="c", long_values=frozenset({"--eval"}))
    found = scan([literal(w) for w in ["node", "--ev", "x"]], 1, spec)
    assert found.has("--ev") and found.operand == 2 and not found.doubtful


def test_long_options_are_written_with_their_need_for_a_value():
    spec = gnu("signal= block-signal[=] foreground")
    assert spec.long_values == {"--signal"} and spec.long_flags == {"--block-signal", "--foreground"}
    assert spec.getopt_long
