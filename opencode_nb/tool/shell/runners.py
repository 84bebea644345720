"""Programs that run a command named in one of their options: the table, and where in a call it is named.

`split --filter='rm x'`, `tar --to-command='rm x'`, `ssh -o ProxyCommand='rm x' h` and `sort
--compress-program=sh` all run something a rule may deny, though the command word is `split`, `tar`, `ssh` or
`sort`. Each such program is listed here once, with the options that run something and what their value is:

    shell     shell text the program hands to a shell: read and checked like the line itself
    program   a program it runs by name: checked as a command
    ex        an ex command line (vi's family: `-c`, `+cmd`, `--cmd`): the shell text of its `!cmd`, `{range}!cmd`,
              `r !cmd` and `w !cmd` commands is checked like the line itself, and the rest is hidden (`ex.py`)
    code      text in the program's own language, or a file of it, or a mode letting its input run commands:
              hidden from the rules (asked when only a catch-all allows it)

A program that runs commands whatever its options (an editor reading keystrokes, a terminal multiplexer) has
an `always` reason instead. Long options match any prefix (GNU programs accept unambiguous abbreviations, so
`--to-c` is `--to-command`; a prefix too short to be unambiguous only makes the program refuse the call).
`unwrap.py` turns what `calls` finds into the commands, shell text and hidden code the checks see;
`tests/tool/shell/test_runners.py` holds the table to the corpus and to a list of programs known to run
commands.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from .words import Word, literal

Runs = Literal["shell", "program", "code", "ex"]


@dataclass(frozen=True)
class RunOption:
    name: str
    """`-I`, `--to-command`, or `+` (an initial command: `less +cmd`)."""
    runs: Runs
    value: bool = True
    """False for a flag: a mode in which the program's input runs commands (`groff -U`)."""
    attached: bool = False
    """The value, if any, is only the rest of the same word (`man -Hbrowser`)."""
    when: str = ""
    """A pattern the value must match for anything to run; its group `text`, if any, is what runs."""


@dataclass(frozen=True)
class CommandRunner:
    options: tuple[RunOption, ...] = ()
    keys: Mapping[str, Runs] = field(default_factory=dict)
    """Settings given as `-o Key=value` or `-o 'Key value'` (keys in any case) whose value runs."""
    old_style: bool = False
    """The first word may be short options without a dash, their values following in order (`tar cIf CMD a`)."""
    always: str = ""
    """Why the program runs commands no rule sees whatever its options; empty when only its options do."""


def _options(*specs: tuple[str, Runs] | RunOption) -> tuple[RunOption, ...]:
    return tuple(s if isinstance(s, RunOption) else RunOption(*s) for s in specs)


_SSH_KEYS: dict[str, Runs] = {
    "proxycommand": "shell", "localcommand": "shell", "knownhostscommand": "shell", "remotecommand": "code",
    "pkcs11provider": "code", "securitykeyprovider": "code", "include": "code", "match": "code",
}
"""ssh settings that run a local command, load a library, or read more settings from a file."""
_SSH_CONFIG = RunOption("-F", "code", when=r"^(?!/dev/null$|none$)")
"""A config file other than none holds settings no rule sees (`ProxyCommand`, `Match exec`)."""
_VI_ALWAYS = ("it runs the commands it is given (`-c '!cmd'`, `+cmd`, `--cmd`, a script: `-S`, `-s`) and, when "
              "its input is not a terminal, the keystrokes it reads")
_VI_OPTIONS = (RunOption("-c", "ex"), RunOption("+", "ex", attached=True), RunOption("--cmd", "ex"),
               RunOption("-S", "code", value=False))
_VIM = CommandRunner(_VI_OPTIONS, always=_VI_ALWAYS)
"""vi's family: every option that runs an ex command is read for the shell commands in it, so `rm *: deny`
holds against `vim -es -c '!rm x'` whatever a person approves; the rest of what it runs stays hidden (`-s`,
a script of keystrokes, is left to `always`: `-es` is ex mode made silent, and a table read of it would take
the next option for its file). `-S` is read as taking no value for the same reason: with an option after it
(`-S -c '!cmd'`) vim sources `Session.vim` and still runs the `-c`."""
_NVIM = CommandRunner((*_VI_OPTIONS, RunOption("-l", "code", value=False)),
                      always=_VI_ALWAYS + "; `-l` runs a Lua script")
_TAR = CommandRunner(_options(
    ("-I", "shell"), ("--use-compress-program", "shell"), ("--to-command", "shell"),
    RunOption("--checkpoint-action", "shell", when=r"^exec=(?P<text>.*)\Z"), ("-F", "shell"),
    ("--info-script", "shell"), ("--new-volume-script", "shell"), ("--rsh-command", "program"),
    ("--rmt-command", "program")), old_style=True)
_ROFF = CommandRunner(_options(RunOption("-U", "code", value=False)))

COMMAND_RUNNERS: dict[str, CommandRunner] = {
    "split": CommandRunner(_options(("--filter", "shell"))),
    "sort": CommandRunner(_options(("--compress-program", "program"))),
    "compgen": CommandRunner(_options(("-C", "shell"))),
    "tar": _TAR, "gtar": _TAR, "bsdtar": _TAR,
    "ssh": CommandRunner(_options(_SSH_CONFIG, ("-I", "code")), keys=_SSH_KEYS),
    "scp": CommandRunner(_options(_SSH_CONFIG, ("-S", "program")), keys=_SSH_KEYS),
    "sftp": CommandRunner(_options(_SSH_CONFIG, ("-S", "program"), ("-D", "program")), keys=_SSH_KEYS),
    "rsync": CommandRunner(_options(("-e", "shell"), ("--rsh", "shell"), ("--rsync-path", "shell"))),
    "zip": CommandRunner(_options(("-TT", "shell"), ("--unzip-command", "shell"))),
    "rg": CommandRunner(_options(("--pre", "program"))),
    "man": CommandRunner(_options(("-P", "shell"), ("--pager", "shell"), RunOption("-H", "shell", attached=True),
                                  RunOption("--html", "shell", attached=True))),
    "less": CommandRunner(_options(RunOption("+", "code", attached=True, when=r"[!|]"), ("-k", "code"),
                                   ("--lesskey-file", "code"), ("--lesskey-src", "code"),
                                   ("--lesskey-content", "code"))),
    "groff": _ROFF, "troff": _ROFF, "nroff": _ROFF,
    **dict.fromkeys(("vi", "vim", "vimdiff", "view", "ex", "rvim", "rview", "evim", "eview", "gvim", "gview",
                     "gvimdiff", "rgvim", "rgview", "vimx", "vim.basic", "vim.tiny", "vim.nox", "vim.gtk3",
                     "nvi", "nex", "nview"), _VIM),
    "nvim": _NVIM,
    "tmux": CommandRunner(always="it runs the shell commands its own commands are given (`new-session CMD`, "
                                 "`run-shell`, `-c`) and those of its config"),
    "screen": CommandRunner(always="it runs the command it is given, and those its config and `-X` commands name"),
}
"""Program → the options that make it run something."""


@dataclass(frozen=True)
class Call:
    """One option of a call that runs something."""

    option: RunOption
    shown: str
    """The option as written (`--to-c`, `-o ProxyCommand`)."""
    value: Word | None
    """What runs (shell text, a program, code); a Word with no value when only the run knows it."""


def calls(runner: CommandRunner, words: list[Word]) -> list[Call]:
    """The options of the call `words` that run something, in order."""
    found: list[Call] = []
    i = 1
    while i < len(words):
        word = words[i]
        text = word.value if word.value is not None else word.text.lstrip("\"'")
        taken = 0
        if i == 1 and runner.old_style and text[:1].isalpha():
            found += [Call(RunOption(o.name, "code"), f"{text} (-{o.name[1]})", None) for o in runner.options
                      if len(o.name) == 2 and o.name[1] in text]
        elif text.startswith("--") and len(text) > 2:
            taken = _long(runner, words, i, text, found)
        elif text.startswith(("-", "+")) and len(text) > 1:
            taken = _short(runner, words, i, text, found)
        i += 1 + taken
    return [c for c in (_what_runs(c) for c in found) if c is not None]


def _long(runner: CommandRunner, words: list[Word], i: int, text: str, found: list[Call]) -> int:
    name, eq, attached = text.partition("=")
    for option in runner.options:
        if not option.name.startswith("--") or not option.name.startswith(name):
            continue
        if not option.value:
            found.append(Call(option, name, None))
        elif eq or option.attached:
            found.append(Call(option, name, _part(words[i], attached)))
        else:
            found.append(Call(option, name, words[i + 1] if i + 1 < len(words) else None))
            return 1
    return 0


def _short(runner: CommandRunner, words: list[Word], i: int, text: str, found: list[Call]) -> int:
    """Short options, alone or in a cluster (`-vo Key=v`, `-oKey=v`), and `+cmd`."""
    for option in runner.options:
        if option.name.startswith("--"):
            continue
        at = _letter(text, option.name)
        if at < 0:
            continue
        rest = text[at + len(option.name) - 1:]
        if not option.value:
            found.append(Call(option, option.name, None))
        elif rest or option.attached:
            found.append(Call(option, option.name, _part(words[i], rest)))
        else:
            found.append(Call(option, option.name, words[i + 1] if i + 1 < len(words) else None))
            return 1
    if runner.keys and (at := _letter(text, "-o")) >= 0:
        rest = text[at + 1:]
        setting = _part(words[i], rest) if rest else words[i + 1] if i + 1 < len(words) else None
        _key(runner, setting, found)
        return 0 if rest else 1
    return 0


def _letter(text: str, name: str) -> int:
    """Where the option `name` (`-I`, `-TT`, `+`) starts in the word `text`: the index its value follows
    (less one for each letter after the first), or -1."""
    if name == "+":
        return 1 if text.startswith("+") else -1
    if text.startswith("--") or not text.startswith(name[0]):
        return -1
    if len(name) > 2:  # a multi-letter short option (`zip -TT`) is a word of its own
        return 1 if text.startswith(name) and not text[len(name):len(name) + 1].isalpha() else -1
    return text.find(name[1], 1)


def _key(runner: CommandRunner, setting: Word | None, found: list[Call]) -> None:
    """`-o Key=value`: a key that runs something, or a setting only the run knows (it could be any)."""
    if setting is None or setting.value is None:
        found.append(Call(RunOption("-o", "code"), "-o", setting))
        return
    match = re.match(r"\s*([^\s=]+)\s*(?:=|\s)\s*(.*)\Z", setting.value, re.S)
    key, value = (match.group(1), match.group(2)) if match else (setting.value.strip(), "")
    runs = runner.keys.get(key.lower())
    if runs is not None:
        found.append(Call(RunOption("-o", runs), f"-o {key}", literal(value)))


def _part(word: Word, rest: str) -> Word:
    """The part of a word that is an option's value: known only if the whole word is."""
    return literal(rest) if word.value is not None else Word(rest, None)


def _what_runs(call: Call) -> Call | None:
    """The call with its value cut to what runs (`exec=CMD` → `CMD`); None when the value runs nothing."""
    pattern = call.option.when
    if not pattern or call.value is None or call.value.value is None:
        return call
    match = re.search(pattern, call.value.value, re.S)
    if match is None:
        return None
    return replace(call, value=literal(match.group("text"))) if "text" in match.groupdict() else call
