"""Programs that start a command in a changed process: other privileges, limits, namespaces, architecture or
security context (`setpriv`, `prlimit`, `choom`, `nsenter`, `setarch`, `runcon`, `bwrap`, `ssh-agent`).

They run the command after their options like `nice` does, so `setpriv --reuid=1000 rm x` is checked as
`rm x`; given no command, `nsenter`, `setarch` and their kin start a shell that reads its input, which no rule
can see. `setarch` takes the architecture before its options (and is installed under the architectures' names:
`linux64 rm x`), `runcon` takes a context first unless options name it, and `bwrap` reads its options itself,
each taking a fixed number of words (`program_options.BWRAP_ARGUMENTS`).
"""

from __future__ import annotations

from collections.abc import Callable

from .inner import Inner, Prefix, command_at, doubted, options_of
from .options import OptionSpec, scan
from .program_options import BWRAP_ARGUMENTS
from .words import Word

SHELL_FROM_INPUT = "a shell reading commands from its input"

SETARCH_NAMES = frozenset({"setarch", "linux32", "linux64", "i386", "i486", "i586", "i686", "x86_64", "uname26",
                           "arm", "armv7l", "armv8l", "aarch64", "ppc", "ppc32", "ppc64", "ppc64le", "s390",
                           "s390x", "sparc", "sparc32", "sparc64", "mips", "mips64", "parisc", "ia64"})
"""Names setarch is installed under: each sets that architecture and reads options like setarch."""


def _setarch(words: list[Word]) -> Inner:
    name = words[0].shown.rsplit("/", 1)[-1]
    start = 2 if name == "setarch" and len(words) > 1 and not (words[1].value or "-").startswith("-") else 1
    found = scan(words, start, options_of("setarch"))
    if found is None:
        return Inner(unknown=[f"an option of `{name}` is only known when the line runs"])
    if found.has("--list", "--help", "--version", "-h", "-V"):
        return Inner()
    inner = command_at(name, words, found.operand)
    if not inner.commands and not inner.unknown:
        inner.hidden.append(f"`{name}` without a command runs {SHELL_FROM_INPUT}")
    return doubted(name, words, found, inner, options_of("setarch"))


def _runcon(words: list[Word]) -> Inner:
    found = scan(words, 1, options_of("runcon"))
    if found is None:
        return Inner(unknown=["an option of `runcon` is only known when the line runs"])
    context = 0 if found.options else 1  # `runcon CONTEXT cmd`, or `runcon -t TYPE cmd`
    return doubted("runcon", words, found, command_at("runcon", words, found.operand + context),
                   options_of("runcon"), context)


def _bwrap(words: list[Word]) -> Inner:
    i = 1
    while i < len(words):
        value = words[i].value
        if value is None:
            return Inner(unknown=["an option of `bwrap` is only known when the line runs"])
        if value == "--":
            return command_at("bwrap", words, i + 1)
        if value in ("--help", "--version"):
            return Inner()
        if value == "--args":
            return Inner(unknown=["`bwrap --args` reads more options, and the command, from a file descriptor"])
        if not value.startswith("--"):
            return command_at("bwrap", words, i)
        if value not in BWRAP_ARGUMENTS:
            return Inner(unknown=[f"`{value}` is not an option of `bwrap` known here, so what it runs cannot be "
                                  "made out"])
        i += 1 + BWRAP_ARGUMENTS[value]
    return Inner()


LAUNCHERS: dict[str, Callable[[list[Word]], Inner]] = {
    "setpriv": Prefix(options_of("setpriv"), no_command=frozenset({"-d", "--dump"})),
    "prlimit": Prefix(options_of("prlimit"), no_command=frozenset({"-p", "--pid"})),
    "choom": Prefix(options_of("choom"), no_command=frozenset({"-p", "--pid"})),
    "nsenter": Prefix(options_of("nsenter"), bare=SHELL_FROM_INPUT),
    "runcon": _runcon,
    "bwrap": _bwrap,
    "ssh-agent": Prefix(OptionSpec(values="aEOPt"), no_command=frozenset({"-k"})),
    **dict.fromkeys(SETARCH_NAMES, _setarch),
}
"""Program → the reader of the command it starts."""
