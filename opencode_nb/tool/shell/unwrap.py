"""Programs that run another command, and the command they run: it is checked like any other.

`sudo rm x`, `env -S 'rm x'`, `timeout 5 rm x`, `xargs rm`, `flock f -c 'rm x'`, `trap 'rm x' EXIT`, `git -C .
push` and `bash -c -- 'rm x'` all run something a rule may deny; a rule about `rm` or `git push` must see it.
For each such program `unwrap` finds, from its options, the command it runs (`Inner.commands`, as words) or
the shell text it runs (`Inner.scripts`, parsed and checked like the line itself).

When the inner command cannot be made out, the reason goes to `Inner.unknown` (the program run cannot be
known: a person is asked) or `Inner.hidden` (code runs that no rule can see: asked when rules allow it only by
a catch-all). Programs that run code of their own (interpreters, awk, sed, git aliases) are `hidden.py`'s;
the shells' `-c` and stdin are here and there. Wrappers' options are read with the programs' real option tables
(`program_options.py`: `timeout --sig KILL 5 rm x` runs `rm x`), programs starting a command with other
privileges or limits are `launchers.py`'s, and programs an option tells to run a command (`split --filter`,
`tar --to-command`, `ssh -o ProxyCommand`) are read from the one table of them in `runners.py`.
"""

from __future__ import annotations

from collections.abc import Callable

from .env_split import SplitError, split_string
from .ex import shell_commands
from .inner import Inner, Prefix, assignments_of, command_at, doubted, is_assignment, options_of
from .launchers import LAUNCHERS
from .options import OptionSpec, scan
from .runners import COMMAND_RUNNERS, CommandRunner, calls
from .words import Word, literal

__all__ = ["INPUT", "OTHER_SHELLS", "SHELLS", "SHELL_OPTIONS", "UNWRAPPED", "Inner", "assignments_of", "unwrap"]


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
    if handler is not None:
        return handler(words)
    runner = COMMAND_RUNNERS.get(name)
    return _runner(name, runner, words) if runner is not None else Inner()


def _runner(name: str, runner: CommandRunner, words: list[Word]) -> Inner:
    """A program an option tells to run something (`split --filter`, `tar --to-command`, `ssh -o ProxyCommand`):
    shell text is checked like the line, a program as a command, and anything else is hidden."""
    inner = Inner(hidden=[f"`{name}` runs commands no rule can check: {runner.always}"] if runner.always else [])
    for call in calls(runner, words):
        if call.option.runs == "ex" and call.value is not None and call.value.value is not None:
            found = shell_commands(call.value.value)
            inner.scripts += [literal(text) for text in found.shell]
            if found.repeat:
                inner.unknown.append(f"`{name} {call.shown} '!!'` repeats a shell command only the run knows")
            if found.other:
                inner.hidden.append(f"`{name} {call.shown}` runs ex commands, which may run anything")
        elif call.option.runs == "shell" and call.value is not None:
            inner.scripts.append(call.value)
        elif call.option.runs == "program" and call.value is not None:
            inner.commands.append([call.value])
        else:
            inner.hidden.append(f"`{name} {call.shown}` makes it run code or commands of its choosing, which the "
                                "rules cannot check")
    return inner


# ---------------------------------------------------------------------------------------------- wrappers

def _env(words: list[Word]) -> Inner:
    spec = options_of("env")
    i = 1
    inner = Inner()
    while True:
        found = scan(words, i, spec)
        if found is None:
            return Inner(unknown=["an option of `env` is only known when the line runs"])
        doubted("env", words, found, inner)
        split = found.value("-S", "--split-string")
        if split is None:
            break
        try:
            pieces = split_string(split.value) if split.value is not None else None
        except SplitError as error:
            return Inner(unknown=[f"{error}, so what it runs cannot be made out"])
        if pieces is None:
            return Inner(hidden=["`env -S` splits text only known when the line runs into a command"])
        # `env -S 'A=1 rm -f' x` is `env A=1 rm -f x`: the split words take the place of the option.
        words = [words[0], *(literal(p) for p in pieces), *words[found.operand:]]
        i = 1
    index = found.operand
    if index < len(words) and words[index].value == "-":  # `env -` is `env -i`
        index += 1
    while index < len(words) and is_assignment(words[index]):
        index += 1
    if index < len(words):
        inner.commands.append(words[index:])
    return inner


def _xargs(words: list[Word]) -> Inner:
    found = scan(words, 1, options_of("xargs"))
    if found is None:
        return Inner(unknown=["an option of `xargs` is only known when the line runs"])
    command = words[found.operand:] or [literal("echo")]
    if not found.has("-I", "-i", "--replace"):
        # it appends the words it reads to the command
        return doubted("xargs", words, found, Inner(commands=[[*command, INPUT]]))
    replace = found.value("-I", "-i", "--replace")
    marker = replace.value if replace is not None and replace.value else "{}"
    return doubted("xargs", words, found, Inner(
        commands=[_placeholders(command, marker)],
        hidden=["`xargs -I` puts text read when the line runs into the command it runs"]))


def _placeholders(words: list[Word], marker: str) -> list[Word]:
    """The command with each word holding `marker` (`{}`) unknown: a file name or input goes there."""
    return [Word(w.text, None) if w.value is not None and marker in w.value else w for w in words]


def _flock(words: list[Word]) -> Inner:
    spec = options_of("flock")
    found = scan(words, 1, spec)
    if found is None:
        return Inner(unknown=["an option of `flock` is only known when the line runs"])
    script = found.value("-c", "--command")
    if script is not None:
        return doubted("flock", words, found, Inner(scripts=[script]))
    after = scan(words, found.operand + 1, spec)  # `flock FILE -c 'cmd'`
    if after is not None and (script := after.value("-c", "--command")) is not None:
        return doubted("flock", words, after, doubted("flock", words, found, Inner(scripts=[script])))
    return doubted("flock", words, found, command_at("flock", words, found.operand + 1))


def _script(words: list[Word]) -> Inner:
    found = scan(words, 1, options_of("script"))
    if found is None:
        return Inner(unknown=["an option of `script` is only known when the line runs"])
    command = found.value("-c", "--command")
    if command is None:
        return Inner(hidden=["`script` without -c runs a shell reading commands from its input"])
    return doubted("script", words, found, Inner(scripts=[command]))


def _strace(words: list[Word]) -> Inner:
    found = scan(words, 1, options_of("strace"))
    if found is None:
        return Inner(unknown=["an option of `strace` is only known when the line runs"])
    inner = doubted("strace", words, found, command_at("strace", words, found.operand), options_of("strace"))
    output = found.value("-o", "--output")
    if output is not None and (output.value is None or output.value[:1] in ("|", "!")):
        inner.hidden.append("`strace -o |cmd` pipes its output to a command")
    return inner


def _su(words: list[Word]) -> Inner:
    name = words[0].shown.rsplit("/", 1)[-1]
    spec = options_of("runuser" if name == "runuser" else "su")
    inner = Inner()
    i = 1
    commands = []
    shell: Word | None = None
    while i < len(words):  # su takes options after the user name too: `su - root -c 'cmd'`
        found = scan(words, i, spec)
        if found is None:
            return Inner(unknown=["an option of `su` is only known when the line runs"])
        doubted(name, words, found, inner)
        commands += [o.value for o in found.options if o.name in ("-c", "--command", "--session-command")]
        shell = found.value("-s", "--shell") or shell
        if name == "runuser" and found.value("-u", "--user") is not None:
            return doubted(name, words, found, command_at("runuser", words, found.operand))
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
    return command_at("coproc", words, i)


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
    return command_at("builtin", words, 1)


def _busybox(words: list[Word]) -> Inner:
    if len(words) > 1 and (words[1].value or "").startswith("-"):
        return Inner()
    return command_at("busybox", words, 1)


def _watch(words: list[Word]) -> Inner:
    found = scan(words, 1, options_of("watch"))
    if found is None:
        return Inner(unknown=["an option of `watch` is only known when the line runs"])
    rest = words[found.operand:]
    if not rest:
        return Inner()
    if found.has("-x", "--exec"):
        return doubted("watch", words, found, Inner(commands=[rest]))
    if any(w.value is None for w in rest):
        return Inner(hidden=["`watch` runs text only known when the line runs"])
    return doubted("watch", words, found, Inner(scripts=[literal(" ".join(w.value or "" for w in rest))]))


def _sg(words: list[Word]) -> Inner:
    rest = [w for w in words[1:] if w.value not in ("-", "-c")]
    if len(rest) < 2:
        return Inner(hidden=["`sg` without a command runs a shell reading commands from its input"])
    return Inner(scripts=[rest[1]])


def _chroot(words: list[Word]) -> Inner:
    found = scan(words, 1, options_of("chroot"))
    if found is None:
        return Inner(unknown=["an option of `chroot` is only known when the line runs"])
    if found.operand + 1 >= len(words):
        return Inner(hidden=["`chroot` without a command runs a shell reading commands from its input"])
    return doubted("chroot", words, found, command_at("chroot", words, found.operand + 1), options_of("chroot"), 1)


def _unshare(words: list[Word]) -> Inner:
    found = scan(words, 1, options_of("unshare"))
    if found is None:
        return Inner(unknown=["an option of `unshare` is only known when the line runs"])
    if found.operand >= len(words):
        return Inner(hidden=["`unshare` without a command runs a shell reading commands from its input"])
    return doubted("unshare", words, found, command_at("unshare", words, found.operand), options_of("unshare"))


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
    "sudo": Prefix(options_of("sudo"), assignments=True, no_command=frozenset(
        {"-l", "-v", "-k", "-K", "-V", "--list", "--validate", "--reset-timestamp", "--remove-timestamp",
         "--version", "--help"})),
    "doas": Prefix(OptionSpec(values="uC")),
    "env": _env,
    "nice": Prefix(options_of("nice")),
    "nohup": Prefix(options_of("nohup")),
    "setsid": Prefix(options_of("setsid")),
    "stdbuf": Prefix(options_of("stdbuf")),
    "ionice": Prefix(options_of("ionice"), no_command=frozenset({"-p", "-P", "-u", "--pid", "--pgid", "--uid"})),
    "chrt": Prefix(options_of("chrt"), operands=1, no_command=frozenset({"-p", "--pid", "-m", "--max"})),
    "taskset": Prefix(options_of("taskset"), operands=1, no_command=frozenset({"-p", "--pid"})),
    "timeout": Prefix(options_of("timeout"), operands=1),
    "time": Prefix(OptionSpec(values="fo", long_values=frozenset({"--format", "--output"}))),
    "exec": Prefix(OptionSpec(values="a")),
    "command": Prefix(no_command=frozenset({"-v", "-V"})),
    "builtin": _builtin,
    "mapfile": _mapfile,
    "alias": _alias,
    "readarray": _mapfile,
    "coproc": _coproc,
    "unbuffer": Prefix(),
    "catchsegv": Prefix(),
    "fakeroot": Prefix(OptionSpec(values="lsi", long_values=frozenset({"--lib", "--faked"}))),
    "xvfb-run": Prefix(OptionSpec(values="nsfep", long_values=frozenset({"--server-num", "--server-args",
                                                                          "--auth-file", "--error-file"}))),
    "dbus-run-session": Prefix(),
    "valgrind": Prefix(),
    "ltrace": Prefix(OptionSpec(values="eopsuAaDn", long_values=frozenset({"--output"}))),
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
    "eval": _eval,
    "source": _source,
    ".": _source,
    **{shell: _shell for shell in SHELLS | OTHER_SHELLS},
    **LAUNCHERS,
}

UNWRAPPED = frozenset(_HANDLERS)
"""Programs whose inner command `unwrap` reads from their own options and words."""
