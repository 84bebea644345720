"""Programs that run another command, and the command they run: it is checked like any other.

`sudo rm x`, `env -S 'rm x'`, `timeout 5 rm x`, `xargs rm`, `flock f -c 'rm x'`, `trap 'rm x' EXIT`, `git -C .
push` and `bash -c -- 'rm x'` all run something a rule may deny; a rule about `rm` or `git push` must see it.
For each such program `unwrap` finds, from its options, the command it runs (`Inner.commands`, as words) or
the shell text it runs (`Inner.scripts`, parsed and checked like the line itself).

When the inner command cannot be made out, the reason goes to `Inner.unknown` (the program run cannot be
known: a person is asked) or `Inner.hidden` (code runs that no rule can see: asked when rules allow it only by
a catch-all). Programs that run code of their own (interpreters, awk, sed, tar, git aliases) are
`hidden.py`'s; the shells' `-c` and stdin are here and there.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from .options import OptionSpec, scan
from .words import Word, literal


@dataclass
class Inner:
    commands: list[list[Word]] = field(default_factory=list)
    """Commands run directly, as words (`sudo rm x` → `rm x`)."""
    scripts: list[Word] = field(default_factory=list)
    """Shell text run by a shell (`bash -c 'rm x'` → `rm x`); a value of None is text known only at run time."""
    hidden: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


INPUT = Word("<input>", None)
"""The words `xargs` reads from its input and adds to the command: unknown until the line runs."""

SHELLS = frozenset({"bash", "sh", "dash", "ash", "rbash"})
"""Shells whose `-c` text is bash-compatible enough to parse and check like the line itself."""
OTHER_SHELLS = frozenset({"zsh", "ksh", "ksh93", "mksh", "pdksh", "yash", "fish", "csh", "tcsh", "pwsh",
                          "powershell", "nu", "xonsh", "elvish", "oil", "osh"})
"""Shells with their own grammar: whatever they run is hidden from the rules."""

SHELL_OPTIONS = OptionSpec(values="oO", plus=True, long_values=frozenset({"--rcfile", "--init-file"}))


def unwrap(name: str, words: list[Word]) -> Inner:
    """What the command `words` (whose program is `name`) runs besides itself."""
    handler = _HANDLERS.get(name)
    return handler(words) if handler is not None else Inner()


# ---------------------------------------------------------------------------------------------- wrappers

@dataclass(frozen=True)
class _Prefix:
    """A program that runs the command following its options (and `operands` words of its own)."""

    spec: OptionSpec = field(default_factory=OptionSpec)
    operands: int = 0
    assignments: bool = False
    """`NAME=value` words may come before the command (sudo, env)."""
    no_command: frozenset[str] = frozenset()
    """Options after which nothing is run (`command -v`, `taskset -p`)."""

    def __call__(self, words: list[Word]) -> Inner:
        name = words[0].shown.rsplit("/", 1)[-1]
        found = scan(words, 1, self.spec)
        if found is None:
            return Inner(unknown=[f"an option of `{name}` is only known when the line runs, so the command it "
                                  "runs cannot be made out"])
        if self.no_command and found.has(*self.no_command):
            return Inner()
        return _command_at(name, words, found.operand + self.operands, self.assignments)


def _command_at(name: str, words: list[Word], index: int, assignments: bool = False) -> Inner:
    while assignments and index < len(words) and _is_assignment(words[index]):
        index += 1
    if index >= len(words):
        return Inner()
    if words[index].value is None and index > 0 and words[index].text.startswith("-"):
        return Inner(unknown=[f"cannot tell what `{name}` runs"])
    return Inner(commands=[words[index:]])


def _is_assignment(word: Word) -> bool:
    """`NAME=value` before the command of `env` or `sudo`: any word with `=` that is not an option (env
    takes `BASH_FUNC_ls%%=() {...}` too, which bash imports as a function)."""
    text = word.value if word.value is not None else word.text
    head, eq, _ = text.partition("=")
    return bool(eq) and bool(head) and not head.startswith("-")


def assignments_of(words: list[Word], start: int = 1) -> list[tuple[str, Word]]:
    """The `NAME=value` words a wrapper (env, sudo) passes to the command's environment."""
    out = []
    for word in words[start:]:
        if _is_assignment(word):
            text = word.value if word.value is not None else word.text
            out.append((text.split("=", 1)[0], word))
    return out


def _env(words: list[Word]) -> Inner:
    spec = OptionSpec(values="uCSa", long_values=frozenset({"--unset", "--chdir", "--split-string", "--argv0"}))
    i = 1
    inner = Inner()
    while True:
        found = scan(words, i, spec)
        if found is None:
            return Inner(unknown=["an option of `env` is only known when the line runs"])
        split = found.value("-S", "--split-string")
        if split is None:
            break
        if split.value is None or "$" in split.value:
            return Inner(hidden=["`env -S` splits text only known when the line runs into a command"])
        try:
            pieces = shlex.split(split.value)
        except ValueError:
            return Inner(unknown=["`env -S` text could not be split"])
        # `env -S 'A=1 rm -f' x` is `env A=1 rm -f x`: the split words take the place of the option.
        words = [words[0], *(literal(p) for p in pieces), *words[found.operand:]]
        i = 1
    index = found.operand
    while index < len(words) and _is_assignment(words[index]):
        index += 1
    if index < len(words):
        inner.commands.append(words[index:])
    return inner


def _xargs(words: list[Word]) -> Inner:
    spec = OptionSpec(values="InLPsdEa", attached="ie", digits="l",
                      long_values=frozenset({"--arg-file", "--delimiter", "--max-args", "--max-procs",
                                             "--max-chars", "--process-slot-var"}))
    found = scan(words, 1, spec)
    if found is None:
        return Inner(unknown=["an option of `xargs` is only known when the line runs"])
    command = words[found.operand:] or [literal("echo")]
    if not found.has("-I", "-i", "--replace"):
        return Inner(commands=[[*command, INPUT]])  # it appends the words it reads to the command
    replace = found.value("-I", "-i", "--replace")
    marker = replace.value if replace is not None and replace.value else "{}"
    return Inner(commands=[_placeholders(command, marker)],
                 hidden=["`xargs -I` puts text read when the line runs into the command it runs"])


def _placeholders(words: list[Word], marker: str) -> list[Word]:
    """The command with each word holding `marker` (`{}`) unknown: a file name or input goes there."""
    return [Word(w.text, None) if w.value is not None and marker in w.value else w for w in words]


def _flock(words: list[Word]) -> Inner:
    spec = OptionSpec(values="wEc", long_values=frozenset({"--timeout", "--wait", "--conflict-exit-code",
                                                           "--command"}))
    found = scan(words, 1, spec)
    if found is None:
        return Inner(unknown=["an option of `flock` is only known when the line runs"])
    script = found.value("-c", "--command")
    if script is not None:
        return Inner(scripts=[script])
    after = scan(words, found.operand + 1, spec)  # `flock FILE -c 'cmd'`
    if after is not None and (script := after.value("-c", "--command")) is not None:
        return Inner(scripts=[script])
    return _command_at("flock", words, found.operand + 1)


def _script(words: list[Word]) -> Inner:
    spec = OptionSpec(values="cEmoTIOB", attached="t",
                      long_values=frozenset({"--command", "--echo", "--logging-format", "--output-limit",
                                             "--log-timing", "--log-in", "--log-out", "--log-io"}))
    found = scan(words, 1, spec)
    if found is None:
        return Inner(unknown=["an option of `script` is only known when the line runs"])
    command = found.value("-c", "--command")
    if command is None:
        return Inner(hidden=["`script` without -c runs a shell reading commands from its input"])
    return Inner(scripts=[command])


def _strace(words: list[Word]) -> Inner:
    spec = OptionSpec(values="eopsuEabIOPSXU", long_values=frozenset({"--output", "--attach", "--user"}))
    found = scan(words, 1, spec)
    if found is None:
        return Inner(unknown=["an option of `strace` is only known when the line runs"])
    inner = _command_at("strace", words, found.operand)
    output = found.value("-o", "--output")
    if output is not None and (output.value is None or output.value[:1] in ("|", "!")):
        inner.hidden.append("`strace -o |cmd` pipes its output to a command")
    return inner


def _su(words: list[Word]) -> Inner:
    spec = OptionSpec(values="csgGwu", long_values=frozenset({"--command", "--session-command", "--shell",
                                                             "--group", "--supp-group",
                                                             "--whitelist-environment", "--user"}))
    inner = Inner()
    i = 1
    commands = []
    shell: Word | None = None
    while i < len(words):  # su takes options after the user name too: `su - root -c 'cmd'`
        found = scan(words, i, spec)
        if found is None:
            return Inner(unknown=["an option of `su` is only known when the line runs"])
        commands += [o.value for o in found.options if o.name in ("-c", "--command", "--session-command")]
        shell = found.value("-s", "--shell") or shell
        if words[0].shown.endswith("runuser") and found.value("-u", "--user") is not None:
            return _command_at("runuser", words, found.operand)
        i = found.operand + 1
    if shell is not None and (shell.value is None or shell.value.rsplit("/", 1)[-1] not in SHELLS):
        inner.unknown.append("`su -s` runs a program of its choosing as the shell")
    for command in commands:
        if command is not None:
            inner.scripts.append(command)
    if not commands:
        inner.hidden.append("`su` without -c runs a shell reading commands from its input")
    return inner


def _trap(words: list[Word]) -> Inner:
    i = 1
    if i < len(words) and words[i].value in ("-p", "-l", "-P"):
        return Inner()
    if i < len(words) and words[i].value == "--":
        i += 1
    if len(words) - i < 2:  # `trap INT` resets; `trap` alone lists
        return Inner()
    action = words[i]
    if action.value == "-":
        return Inner()
    if action.value is None:
        return Inner(hidden=["`trap` runs text only known when the line runs"])
    return Inner(scripts=[action])


def _coproc(words: list[Word]) -> Inner:
    # `coproc NAME { cmd; }`: the grammar sees the words `NAME`, `{`, `cmd` (the rest follows on its own).
    i = 1
    if len(words) > 2 and words[2].value in ("{", "("):
        i = 3
    elif len(words) > 1 and words[1].value in ("{", "("):
        i = 2
    return _command_at("coproc", words, i)


def _mapfile(words: list[Word]) -> Inner:
    """`mapfile -C callback` evaluates the callback for each chunk of lines it reads."""
    found = scan(words, 1, OptionSpec(values="CcdnOsu"))
    if found is None:
        return Inner(unknown=["an option of `mapfile` is only known when the line runs"])
    callback = found.value("-C")
    if callback is None:
        return Inner()
    if callback.value is None:
        return Inner(hidden=["`mapfile -C` runs a callback only known when the line runs"])
    return Inner(scripts=[callback])


def _alias(words: list[Word]) -> Inner:
    """`alias r='rm x'`: what an alias stands for is checked as the command it will be."""
    return Inner(scripts=[literal(w.value.split("=", 1)[1]) for w in words[1:]
                          if w.value is not None and "=" in w.value and w.value.split("=", 1)[1]])


def _builtin(words: list[Word]) -> Inner:
    return _command_at("builtin", words, 1)


def _busybox(words: list[Word]) -> Inner:
    if len(words) > 1 and (words[1].value or "").startswith("-"):
        return Inner()
    return _command_at("busybox", words, 1)


def _watch(words: list[Word]) -> Inner:
    spec = OptionSpec(values="nq", attached="d", long_values=frozenset({"--interval"}))
    found = scan(words, 1, spec)
    if found is None:
        return Inner(unknown=["an option of `watch` is only known when the line runs"])
    rest = words[found.operand:]
    if not rest:
        return Inner()
    if found.has("-x", "--exec"):
        return Inner(commands=[rest])
    if any(w.value is None for w in rest):
        return Inner(hidden=["`watch` runs text only known when the line runs"])
    return Inner(scripts=[literal(" ".join(w.value or "" for w in rest))])


def _sg(words: list[Word]) -> Inner:
    rest = [w for w in words[1:] if w.value not in ("-", "-c")]
    if len(rest) < 2:
        return Inner(hidden=["`sg` without a command runs a shell reading commands from its input"])
    return Inner(scripts=[rest[1]])


def _chroot(words: list[Word]) -> Inner:
    found = scan(words, 1, OptionSpec())
    if found is None:
        return Inner(unknown=["an option of `chroot` is only known when the line runs"])
    if found.operand + 1 >= len(words):
        return Inner(hidden=["`chroot` without a command runs a shell reading commands from its input"])
    return _command_at("chroot", words, found.operand + 1)


def _unshare(words: list[Word]) -> Inner:
    found = scan(words, 1, OptionSpec(values="SGRw"))
    if found is None:
        return Inner(unknown=["an option of `unshare` is only known when the line runs"])
    if found.operand >= len(words):
        return Inner(hidden=["`unshare` without a command runs a shell reading commands from its input"])
    return _command_at("unshare", words, found.operand)


def _find(words: list[Word]) -> Inner:
    """`find ... -exec cmd {} ;`: one command per -exec, -execdir, -ok and -okdir."""
    inner = Inner()
    i = 1
    while i < len(words):
        if words[i].value in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(words) and words[j].value not in (";", "+"):
                j += 1
            if j > i + 1:
                inner.commands.append(_placeholders(words[i + 1:j], "{}"))
            i = j
        i += 1
    return inner


def _rg(words: list[Word]) -> Inner:
    """`rg --pre CMD` runs CMD on every file it searches."""
    for i, word in enumerate(words):
        value = word.value
        if value is None:
            continue
        if value == "--pre" and i + 1 < len(words):
            return _pre(words[i + 1])
        if value.startswith("--pre="):
            return _pre(literal(value[len("--pre="):]))
    return Inner()


def _pre(command: Word) -> Inner:
    if command.value is None:
        return Inner(unknown=["`rg --pre` runs a program only known when the line runs"])
    return Inner(commands=[[command]])


def _shell(words: list[Word]) -> Inner:
    """`bash -c TEXT` runs TEXT; `bash` reading its input runs commands no rule can see."""
    name = words[0].shown.rsplit("/", 1)[-1]
    if name in OTHER_SHELLS:
        return Inner(hidden=[f"`{name}` runs commands in its own language, which the rules cannot check"])
    found = scan(words, 1, SHELL_OPTIONS)
    if found is None:
        return Inner(unknown=[f"an option of `{name}` is only known when the line runs"])
    if any(o.name.startswith("-") and o.name[1:] == "c" for o in found.options):
        if found.operand >= len(words):
            return Inner()
        return Inner(scripts=[words[found.operand]])
    if found.has("-s") or found.operand >= len(words) or words[found.operand].value == "-":
        return Inner(hidden=[f"`{name}` reads the commands it runs from its input, which no rule can check"])
    script = words[found.operand]
    if script.kind == "process_substitution" or (script.value or "").startswith(("/dev/stdin", "/dev/fd/",
                                                                                    "/proc/self/fd/")):
        return Inner(hidden=[f"`{name}` runs commands piped to it, which no rule can check"])
    return Inner()


def _eval(words: list[Word]) -> Inner:
    parts = words[1:]
    if not parts:
        return Inner()
    if any(w.value is None for w in parts):
        return Inner(hidden=["`eval` runs text only known when the line runs"])
    return Inner(scripts=[literal(" ".join(w.value or "" for w in parts))])


def _source(words: list[Word]) -> Inner:
    return Inner(hidden=[f"`{words[0].shown}` runs a file's commands in this shell, which no rule can check"])


_HANDLERS: dict[str, Callable[[list[Word]], Inner]] = {
    "sudo": _Prefix(OptionSpec(values="ugCDpUrtRTh", long_values=frozenset(
        {"--user", "--group", "--close-from", "--chdir", "--prompt", "--other-user", "--role", "--type",
         "--chroot", "--command-timeout", "--host"})), assignments=True, no_command=frozenset({"-l", "-v", "-k",
                                                                                              "-K", "-V"})),
    "doas": _Prefix(OptionSpec(values="uC")),
    "env": _env,
    "nice": _Prefix(OptionSpec(values="n", long_values=frozenset({"--adjustment"}), dash_number=True)),
    "nohup": _Prefix(),
    "setsid": _Prefix(),
    "stdbuf": _Prefix(OptionSpec(values="ioe", long_values=frozenset({"--input", "--output", "--error"}))),
    "ionice": _Prefix(OptionSpec(values="cnpPu", long_values=frozenset({"--class", "--classdata", "--pid",
                                                                       "--pgid", "--uid"})),
                      no_command=frozenset({"-p", "-P", "-u", "--pid", "--pgid", "--uid"})),
    "chrt": _Prefix(OptionSpec(values="T", long_values=frozenset({"--sched-runtime", "--sched-deadline",
                                                                  "--sched-period"})),
                    operands=1, no_command=frozenset({"-p", "--pid"})),
    "taskset": _Prefix(operands=1, no_command=frozenset({"-p", "--pid"})),
    "timeout": _Prefix(OptionSpec(values="sk", long_values=frozenset({"--signal", "--kill-after"})),
                       operands=1),
    "time": _Prefix(OptionSpec(values="fo", long_values=frozenset({"--format", "--output"}))),
    "exec": _Prefix(OptionSpec(values="a")),
    "command": _Prefix(no_command=frozenset({"-v", "-V"})),
    "builtin": _builtin,
    "mapfile": _mapfile,
    "alias": _alias,
    "readarray": _mapfile,
    "coproc": _coproc,
    "unbuffer": _Prefix(),
    "catchsegv": _Prefix(),
    "fakeroot": _Prefix(OptionSpec(values="lsi", long_values=frozenset({"--lib", "--faked"}))),
    "xvfb-run": _Prefix(OptionSpec(values="nsfep", long_values=frozenset({"--server-num", "--server-args",
                                                                          "--auth-file", "--error-file"}))),
    "dbus-run-session": _Prefix(),
    "valgrind": _Prefix(),
    "ltrace": _Prefix(OptionSpec(values="eopsuAaDn", long_values=frozenset({"--output"}))),
    "busybox": _busybox,
    "toybox": _busybox,
    "xargs": _xargs,
    "flock": _flock,
    "script": _script,
    "strace": _strace,
    "su": _su,
    "runuser": _su,
    "sg": _sg,
    "trap": _trap,
    "watch": _watch,
    "chroot": _chroot,
    "unshare": _unshare,
    "find": _find,
    "rg": _rg,
    "eval": _eval,
    "source": _source,
    ".": _source,
    **{shell: _shell for shell in SHELLS | OTHER_SHELLS},
}
