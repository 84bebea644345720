"""Calls that run code no rule can see: interpreters given code, and programs told to run commands.

`python -c 'import os; os.remove("x")'` removes x, and no rule about `rm` can tell. Whatever an interpreter
is given inline (`-c`, `-e`, `-r`), on its input (`python < x`, `echo code | node`, a here-document) or
through a pipe posing as a file (`python <(...)`), and whatever a program is configured to run (`awk`'s
`system()`, `sed`'s `e`, `tar --checkpoint-action`, `sqlite3`'s `.shell`, a `PAGER` or `LD_PRELOAD` set on the
line), is hidden from the rules. `hidden_code` names the reason, and the caller asks a person unless a rule
that names the program allows it.

A program given a script *file* (`python train.py`, `bash build.sh`) is not hidden: it is run like any other
program, its effects bounded by the OS sandbox, as a compiled program's would be. `program_files` names such
files, so the caller can tell when one is a pipe (`python3 /dev/stdin`) or not yet a file when the line is
checked (`printf ... > x.py && python3 x.py`): then it is inline code after all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .options import OptionSpec, scan
from .unwrap import SHELL_OPTIONS, SHELLS
from .words import Word


@dataclass(frozen=True)
class Interpreter:
    spec: OptionSpec
    code: frozenset[str]
    """Options whose value (or, for a flag, the first operand) is code."""
    module: frozenset[str] = frozenset()
    """Options that run a named module or file instead of a script operand (`python -m pytest`)."""
    info: frozenset[str] = frozenset({"--version", "-V", "--help", "-h", "-v"})
    """Options after which the interpreter only prints something and runs nothing."""


_PYTHON = Interpreter(OptionSpec(values="WXcmQ", long_values=frozenset({"--check-hash-based-pycs"}), last="cm"),
                      frozenset({"-c"}), frozenset({"-m"}), frozenset({"--version", "-V", "--help", "-h",
                                                                     "--help-env", "--help-xoptions",
                                                                     "--help-all"}))
_PERL = Interpreter(OptionSpec(values="eEI", attached="CdDFiMmx", digits="0l"), frozenset({"-e", "-E"}),
                    info=frozenset({"-v", "-V", "-h", "--version", "--help", "-c"}))
_RUBY = Interpreter(OptionSpec(values="erICEK", attached="FiTWx", digits="0"), frozenset({"-e"}),
                    info=frozenset({"-v", "--version", "-h", "--help", "-c", "--yydebug"}))
_NODE = Interpreter(OptionSpec(values="eprC", long_values=frozenset(
    {"--eval", "--print", "--require", "--import", "--loader", "--experimental-loader", "--env-file",
     "--title", "--conditions", "--input-type"})), frozenset({"-e", "-p", "--eval", "--print"}),
    info=frozenset({"-v", "--version", "-h", "--help", "-c", "--check", "--v8-options"}))
_PHP = Interpreter(OptionSpec(values="rBREFfdcz"), frozenset({"-r", "-B", "-R", "-E"}), frozenset({"-f", "-F"}),
                   frozenset({"-v", "--version", "-h", "--help", "-i", "-m", "-l", "-s", "-w"}))
_LUA = Interpreter(OptionSpec(values="el"), frozenset({"-e"}), info=frozenset({"-v"}))
_R = Interpreter(OptionSpec(values="ef", long_values=frozenset({"--file"})), frozenset({"-e"}),
                 frozenset({"-f", "--file", "CMD"}), frozenset({"--version", "-h", "--help"}))
_RSCRIPT = Interpreter(OptionSpec(values="e"), frozenset({"-e"}), info=frozenset({"--version", "-h", "--help"}))
_JULIA = Interpreter(OptionSpec(values="eELJCtp", long_values=frozenset({"--eval", "--print", "--load",
                                                                         "--project", "--sysimage"})),
                     frozenset({"-e", "-E", "--eval", "--print"}))
_TCL = Interpreter(OptionSpec(), frozenset())
_EXPECT = Interpreter(OptionSpec(values="cf"), frozenset({"-c"}), frozenset({"-f"}))

INTERPRETERS: dict[str, Interpreter] = {
    "python": _PYTHON, "python2": _PYTHON, "python3": _PYTHON, "pypy": _PYTHON, "pypy3": _PYTHON,
    "ipython": _PYTHON, "perl": _PERL, "ruby": _RUBY, "node": _NODE, "nodejs": _NODE, "php": _PHP,
    "lua": _LUA, "luajit": _LUA, "R": _R, "Rscript": _RSCRIPT, "julia": _JULIA, "tclsh": _TCL, "wish": _TCL,
    "expect": _EXPECT,
}
"""Interpreters that run code given on the command line or on their input."""

CODE_MODULES = frozenset({"code", "timeit", "pdb", "asyncio", "IPython", "idlelib", "cProfile", "profile",
                          "trace", "runpy"})
"""Python modules that run code given to them on the command line or their input (`python -m timeit 'code'`)."""
_NODE_MODULE_OPTIONS = frozenset({"-r", "--require", "--import", "--loader", "--experimental-loader"})

_PYTHON_VERSION = re.compile(r"(?:python|pypy)\d+(?:\.\d+)*")

EDITORS_AND_DEBUGGERS = frozenset({"vi", "vim", "nvim", "view", "ex", "ed", "emacs", "nano", "gdb", "lldb",
                                   "parallel", "at", "batch", "crontab", "deno", "bun", "osascript", "fc"})
"""Programs that can run commands of their own choosing from options or input no rule sees."""

HIDDEN_VARIABLES = frozenset({
    "BASH_ENV", "ENV", "PS4", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "LD_PRELOAD", "LD_AUDIT",
    "LD_LIBRARY_PATH", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR", "GIT_ASKPASS", "GIT_PROXY_COMMAND", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
    "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_DIR", "GIT_TEMPLATE_DIR", "PAGER", "MANPAGER",
    "EDITOR", "VISUAL", "LESSOPEN", "LESSCLOSE", "PERL5OPT", "RUBYOPT", "NODE_OPTIONS", "PYTHONSTARTUP",
    "PYTHONINSPECT", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "SSH_ASKPASS", "SUDO_ASKPASS", "BROWSER",
    "TAR_OPTIONS", "RSYNC_RSH", "RSYNC_CONNECT_PROG", "MAKEFLAGS", "MAKEFILES", "CDPATH", "HOME",
})
"""Environment variables that make programs run code (or resolve paths) of the variable's choosing."""

UNKNOWN_VARIABLES = frozenset({"PATH"})
"""Environment variables that change which program a command word names."""

NAME_BUILTINS = frozenset({"read", "printf", "test", "[", "declare", "typeset", "local", "export", "readonly",
                           "unset", "let", "mapfile", "readarray", "getopts", "wait"})
"""Builtins taking variable names, where `a[$(cmd)]` is an array subscript bash evaluates, running cmd."""


def variable_reason(name: str) -> tuple[str, str] | None:
    """("unknown" | "hidden", reason) when setting `name` changes what programs run."""
    if name in UNKNOWN_VARIABLES or name.startswith("BASH_FUNC_"):
        return "unknown", f"setting `{name}` changes which program each command word names"
    if name in HIDDEN_VARIABLES or name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")):
        return "hidden", f"setting `{name}` makes programs run code of its choosing"
    return None


def hidden_code(name: str, words: list[Word]) -> list[str]:
    """Why the command `words` (program `name`) runs code no rule can see; empty when it does not."""
    interpreter = INTERPRETERS.get(name) or (_PYTHON if _PYTHON_VERSION.fullmatch(name) else None)
    if interpreter is not None:
        return _interpreter(name, words, interpreter)
    if name in ("awk", "gawk", "mawk", "nawk"):
        return _awk(name, words)
    if name in ("sed", "gsed"):
        return _sed(words)
    if name in ("tar", "gtar", "bsdtar"):
        return _tar(words)
    if name in ("sqlite3", "sqlite"):
        return _sqlite(words)
    if name in EDITORS_AND_DEBUGGERS:
        return [f"`{name}` can run commands of its own choosing, which the rules cannot check"]
    if name in ("zip", "rsync", "ssh", "scp", "sftp", "make", "gmake", "man", "less", "git-shell"):
        return _runs_commands(name, words)
    if name in NAME_BUILTINS:
        return _builtin(name, words)
    return []


def renames_programs(name: str, words: list[Word]) -> str | None:
    """Why, after this command, a command word may run a program other than the one it names."""
    values = [w.value for w in words[1:]]
    if name == "alias" and any(v is None or "=" in v for v in values):
        return "`alias` changes what command words run"
    if name == "hash" and "-p" in values:
        return "`hash -p` changes which program a command word runs"
    if name == "enable" and "-f" in values:
        return "`enable -f` loads a builtin from a library"
    if name == "shopt" and "expand_aliases" in values:
        return "aliases change what command words run"
    return None


def program_files(name: str, words: list[Word]) -> list[Word]:
    """The files whose contents a call runs as code: a shell's or interpreter's script (`bash build.sh`,
    `python3 train.py`), `awk -f`, `sed -f`, `make -f`."""
    if name in ("awk", "gawk", "mawk", "nawk", "sed", "gsed", "make", "gmake"):
        return [words[i + 1] for i in range(1, len(words) - 1)
                if words[i].value in ("-f", "--file", "--makefile")] + \
            [literal_rest for w in words[1:] if (literal_rest := _attached_file(w)) is not None]
    if name in SHELLS:
        found = scan(words, 1, SHELL_OPTIONS)
        if found is None or any(o.name in ("-c", "-s") for o in found.options):
            return []
    else:
        interpreter = INTERPRETERS.get(name) or (_PYTHON if _PYTHON_VERSION.fullmatch(name) else None)
        if interpreter is None:
            return []
        found = scan(words, 1, interpreter.spec)
        if found is None or found.has(*interpreter.code, *interpreter.module, *interpreter.info):
            return []
    if found.operand >= len(words) or (name == "R" and words[found.operand].value == "CMD"):
        return []
    return [words[found.operand]]


def _attached_file(word: Word) -> Word | None:
    value = word.value or ""
    for option in ("--file=", "--makefile="):
        if value.startswith(option):
            return Word(value[len(option):], value[len(option):])
    return None


def piped(word: Word) -> bool:
    """A "file" that is a pipe from a command or from the line's input: its contents are inline code."""
    return word.kind == "process_substitution" or word.value == "-" or (word.value or "").startswith(
        ("/dev/stdin", "/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"))


def _interpreter(name: str, words: list[Word], interpreter: Interpreter) -> list[str]:
    found = scan(words, 1, interpreter.spec)
    if found is None:
        return [f"an option of `{name}` is only known when the line runs, so the code it runs cannot be known"]
    if found.has(*interpreter.code):
        return [f"`{name}` runs code given on the command line, which the rules cannot check"]
    if name in ("perl",) and any(o.name in ("-M", "-m") and o.value is not None and
                                 re.search(r"[^\w:=,-]", o.value.value or "?") for o in found.options):
        return ["`perl -M` is given code, which the rules cannot check"]
    if interpreter is _PYTHON and (module := found.value("-m")) is not None and \
            (module.value is None or module.value.split(".")[0] in CODE_MODULES):
        return [f"`{name} -m {module.shown}` runs code given to it, which the rules cannot check"]
    if any(o.name in _NODE_MODULE_OPTIONS and o.value is not None and (o.value.value or "data:").startswith("data:")
           for o in found.options):
        return [f"`{name}` loads a module written on the command line, which the rules cannot check"]
    if found.has(*interpreter.module) or found.has(*interpreter.info):
        return []
    if found.operand < len(words):
        return []  # a script file (or `R CMD ...`); one piped in is `program_files`'s to say
    # No script: it reads its program from its input (a pipe, `<`, a here-document or here-string).
    return [f"`{name}` runs the code it reads from its input, which the rules cannot check"]


def _awk(name: str, words: list[Word]) -> list[str]:
    found = scan(words, 1, OptionSpec(values="fFveiEl", long_values=frozenset(
        {"--file", "--field-separator", "--assign", "--source", "--include", "--load", "--exec"})))
    if found is None:
        return [f"an option of `{name}` is only known when the line runs"]
    if found.has("-l", "--load"):
        return [f"`{name} -l` loads an extension"]
    programs = [o.value for o in found.options if o.name in ("-e", "--source")]
    if not found.has("-f", "--file", "-E", "--exec") and not programs:
        programs = [words[found.operand]] if found.operand < len(words) else []
    for program in programs:
        text = program.value if program is not None else None
        if text is None:
            return [f"`{name}` runs a program only known when the line runs"]
        if re.search(r"\bsystem\s*\(|\|\s*&?|\|&|@load", text):
            return [f"`{name}` runs commands from its program (system() or a pipe), which the rules cannot check"]
    return []


def _sed(words: list[Word]) -> list[str]:
    found = scan(words, 1, OptionSpec(values="efl", attached="i", long_values=frozenset(
        {"--expression", "--file", "--line-length"})))
    if found is None:
        return ["an option of `sed` is only known when the line runs"]
    if found.has("--sandbox"):
        return []
    scripts = [o.value for o in found.options if o.name in ("-e", "--expression")]
    if not scripts and not found.has("-f", "--file"):
        scripts = [words[found.operand]] if found.operand < len(words) else []
    for script in scripts:
        text = script.value if script is not None else None
        if text is None:
            return ["`sed` runs a script only known when the line runs"]
        if sed_runs_commands(text):
            return ["`sed` runs a shell command (the `e` command or flag), which the rules cannot check"]
    return []


def sed_runs_commands(script: str) -> bool:
    """Whether a GNU sed script uses `e` (run a command) as a command or as a flag of `s`."""
    i = 0
    n = len(script)
    while i < n:
        while i < n and script[i] in " \t\n;{}!":
            i += 1
        i = _skip_address(script, i)
        while i < n and script[i] in " \t!":
            i += 1
        if i >= n:
            return False
        command = script[i]
        i += 1
        if command == "e":
            return True
        if command in "sy":
            if i >= n:
                return False
            delimiter = script[i]
            i += 1
            for _ in range(2):
                i = _skip_delimited(script, i, delimiter)
            if command == "s":
                flags = re.match(r"[^;\n}]*", script[i:])
                assert flags is not None
                if "e" in re.sub(r"[wW]\s.*", "", flags.group()):
                    return True
                i += len(flags.group())
        elif command in "aicrRwWbtTq:#lLQvF=zdDgGhHnNpPx":
            if command in "aicrRwWbtT:#v":
                end = script.find("\n", i)
                i = n if end < 0 else end
        else:
            return True  # not a command this reader knows: assume the worst
    return False


def _skip_address(script: str, i: int) -> int:
    for _ in range(2):
        if i < len(script) and script[i] in "/\\":
            delimiter = "/"
            if script[i] == "\\" and i + 1 < len(script):
                delimiter = script[i + 1]
                i += 1
            i = _skip_delimited(script, i + 1, delimiter)
            while i < len(script) and script[i] in "IM":
                i += 1
        else:
            m = re.match(r"[0-9$]+(?:~[0-9]+)?", script[i:])
            if m:
                i += len(m.group())
        if i < len(script) and script[i] == ",":
            i += 1
            continue
        break
    return i


def _skip_delimited(script: str, i: int, delimiter: str) -> int:
    while i < len(script) and script[i] != delimiter:
        i += 2 if script[i] == "\\" else 1
    return i + 1


def _tar(words: list[Word]) -> list[str]:
    for i, word in enumerate(words[1:], 1):
        value = word.value
        if value is None:
            continue
        if value.startswith(("--checkpoint-action", "--to-command", "--use-compress-program", "--info-script",
                             "--new-volume-script", "--rsh-command", "--rmt-command")):
            return [f"`tar {value.split('=', 1)[0]}` runs a command, which the rules cannot check"]
        if value in ("-I", "-F") or (i == 1 and not value.startswith("-") and "I" in value):
            return [f"`tar {value}` runs a program of its choosing"]
    return []


def _sqlite(words: list[Word]) -> list[str]:
    rest = [w for w in words[1:] if not (w.value or "").startswith("-")]
    if any(w.value is None or re.search(r"(^|\n)\s*\.", w.value) for w in rest[1:]) or \
            any(w.value in ("-cmd",) for w in words):
        return ["`sqlite3` dot-commands can run shell commands, which the rules cannot check"]
    if len(rest) < 2:
        return ["`sqlite3` runs the commands it reads from its input, which the rules cannot check"]
    return []


def _runs_commands(name: str, words: list[Word]) -> list[str]:
    options = {
        "zip": ("-TT", "--unzip-command"),
        "rsync": ("-e", "--rsh", "--rsync-path"),
        "ssh": ("ProxyCommand", "LocalCommand", "-F"),
        "scp": ("-S", "ProxyCommand", "-F"),
        "sftp": ("-S", "ProxyCommand", "-F", "-D"),
        "make": ("--eval", "-E"),
        "gmake": ("--eval", "-E"),
        "man": ("-P", "--pager", "-H", "--html"),
        "less": ("+!",),
        "git-shell": ("-c",),
    }[name]
    for word in words[1:]:
        value = word.value or word.text
        if any(value.startswith(o) or f"{o}=" in value for o in options):
            return [f"`{name} {value.split('=', 1)[0]}` runs a command of its choosing, which the rules cannot "
                    "check"]
    return []


def _builtin(name: str, words: list[Word]) -> list[str]:
    values = [w.value for w in words[1:]]
    for word in _name_arguments(name, words):
        value = word.value if word.value is not None else word.text
        if "[" in value and re.search(r"\$|`", value):
            return [f"`{name}` is given an array subscript with an expansion, which bash evaluates as code"]
    flags = "".join(v[1:] for v in values if v is not None and v.startswith("-") and not v.startswith("--"))
    if name in ("declare", "typeset", "local"):
        if "n" in flags:
            return [f"`{name} -n` makes one variable stand for another"]
        if "i" in flags:
            return [f"`{name} -i` evaluates what is assigned as arithmetic, which can run commands"]
    if name == "let":
        return ["`let` evaluates arithmetic, which can run commands hidden in variable values"]
    return []


def _name_arguments(name: str, words: list[Word]) -> list[Word]:
    """The arguments of a builtin that are variable names (`printf -v NAME`, `test -v NAME`, `read NAME...`)."""
    if name in ("printf", "test", "["):
        return [words[i + 1] for i in range(1, len(words) - 1) if words[i].value == "-v"]
    return words[1:]
