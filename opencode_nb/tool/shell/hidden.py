"""Calls that run code no rule can see: interpreters given code, and programs told to run commands.

`python -c 'import os; os.remove("x")'` removes x, and no rule about `rm` can tell. Whatever an interpreter
is given inline (`-c`, `-e`, `-r`), on its input (`python < x`, `echo code | node`, a here-document) or
through a pipe posing as a file (`python <(...)`), and whatever a program is configured to run (`awk`'s
`system()`, `sed`'s `e`, `sqlite3`'s `.shell`, a `PAGER` or `LD_PRELOAD` set on the line), is hidden from
the rules. `hidden_code` names the reason, and the caller asks a person unless a rule that names the program
allows it.

Code the project holds is hidden the same way: a program given a script or a file of code (`python3 x.py`,
`bash s.sh`, `awk -f p.awk`, `sed -f s.sed`), `python -m` (python looks for the module in the working folder
first: `./this.py` is `python3 -m this`), and the programs and variables of `project_code.py`'s tables (build,
task, package and test runners reading a Makefile, `package.json` or `conftest.py`; `PYTHONPATH`, `GIT_*`,
`XDG_CONFIG_HOME`, `LD_PRELOAD`, ...). A command word naming a file that is no installed program (`./s.sh`) is
`identity.py`'s. `program_files` names the script files, so the caller can also say when one is a pipe
(`python3 /dev/stdin`) or not yet a file when the line is checked (`printf ... > x.py && python3 x.py`).

The trade-off: with `{"*": allow, "rm *": deny}` ordinary work that runs project code (`python3 train.py`,
`pytest`, `make`, `npm test`, `./run.sh`) asks a person, because the deny rule cannot hold inside it. Rules that
deny nothing after their catch-all ask nothing more, a rule naming the program (`python3 *: allow`, `make *:
allow`) still allows it, and asking only for the version or help (`make --version`) runs no project code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .options import OptionSpec, scan
from .project_code import runner_reason
from .project_code import variable_reason as code_variable
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
                    info=frozenset({"-v", "-V", "-h", "--version", "--help"}))  # `-c` runs BEGIN blocks
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
FILE_CODE_MODULES = frozenset({"pickle", "doctest", "unittest", "pydoc", "test", "pytest", "pip", "build",
                               "setuptools", "venv", "coverage", "tox", "nox", "ipykernel", "jupyter", "nbconvert",
                               "sphinx", "mypy"})
"""Modules that run (or import) code from files they are given or find (`python -m pickle x.pkl` unpickles,
`doctest` runs examples, `unittest` imports tests): hidden even when python is told not to look in the working
folder (`-I`, `-P`)."""
_NODE_MODULE_OPTIONS = frozenset({"-r", "--require", "--import", "--loader", "--experimental-loader"})

_PYTHON_VERSION = re.compile(r"(?:python|pypy)\d+(?:\.\d+)*")

EDITORS_AND_DEBUGGERS = frozenset({"nvim", "ed", "emacs", "nano", "gdb", "lldb", "parallel", "at", "batch",
                                   "crontab", "deno", "bun", "osascript", "fc"})
"""Programs that can run commands of their own choosing from options or input no rule sees (vim and the
programs told by an option to run a command are `runners.py`'s)."""

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
    reason = code_variable(name)
    return ("hidden", reason) if reason is not None else None


def hidden_code(name: str, words: list[Word]) -> list[str]:
    """Why the command `words` (program `name`) runs code no rule can see; empty when it does not."""
    project = runner_reason(name, words)
    if project is not None:
        return [project]
    if name in SHELLS:
        return [f"`{name}` runs the script `{f.shown}`, whose commands the rules cannot check"
                for f in program_files(name, words) if not piped(f)]
    interpreter = INTERPRETERS.get(name) or (_PYTHON if _PYTHON_VERSION.fullmatch(name) else None)
    if interpreter is not None:
        return _interpreter(name, words, interpreter)
    if name in ("awk", "gawk", "mawk", "nawk"):
        return _awk(name, words)
    if name in ("sed", "gsed"):
        return _sed(words)
    if name in ("sqlite3", "sqlite"):
        return _sqlite(words)
    if name in EDITORS_AND_DEBUGGERS:
        return [f"`{name}` can run commands of its own choosing, which the rules cannot check"]
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
    if interpreter is _PYTHON and (module := found.value("-m")) is not None:
        top = module.value.split(".")[0] if module.value is not None else None
        if top is None or top in CODE_MODULES:
            return [f"`{name} -m {module.shown}` runs code given to it, which the rules cannot check"]
        if top in FILE_CODE_MODULES or not any(o.name in ("-I", "-P") for o in found.options):
            return [f"`{name} -m {module.shown}` runs code from files (python looks for modules in the working "
                    "folder first), which the rules cannot check"]
    if any(o.name in _NODE_MODULE_OPTIONS and o.value is not None and (o.value.value or "data:").startswith("data:")
           for o in found.options):
        return [f"`{name}` loads a module written on the command line, which the rules cannot check"]
    if found.has(*interpreter.info):
        return []
    if interpreter is not _PYTHON and found.has(*interpreter.module):
        return [f"`{name}` runs a file of code, which the rules cannot check"]
    if found.has(*interpreter.module):
        return []  # `python -I -m json.tool`: a module of python's own, not looked for in the working folder
    if found.operand < len(words):
        script = words[found.operand]
        if piped(script):
            return []  # `program_files`'s to say
        return [f"`{name}` runs the script `{script.shown}`, whose code the rules cannot check"]
    # No script: it reads its program from its input (a pipe, `<`, a here-document or here-string).
    return [f"`{name}` runs the code it reads from its input, which the rules cannot check"]


def _awk(name: str, words: list[Word]) -> list[str]:
    found = scan(words, 1, OptionSpec(values="fFveiEl", long_values=frozenset(
        {"--file", "--field-separator", "--assign", "--source", "--include", "--load", "--exec"})))
    if found is None:
        return [f"an option of `{name}` is only known when the line runs"]
    if found.has("-l", "--load"):
        return [f"`{name} -l` loads an extension"]
    if found.has("-f", "--file", "-E", "--exec", "-i", "--include"):
        return [f"`{name}` runs a program read from a file, which the rules cannot check"]
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
    if found.has("-f", "--file"):
        return ["`sed` runs a script read from a file, which the rules cannot check"]
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



def _sqlite(words: list[Word]) -> list[str]:
    rest = [w for w in words[1:] if not (w.value or "").startswith("-")]
    if any(w.value is None or re.search(r"(^|\n)\s*\.", w.value) for w in rest[1:]) or \
            any(w.value in ("-cmd",) for w in words):
        return ["`sqlite3` dot-commands can run shell commands, which the rules cannot check"]
    if len(rest) < 2:
        return ["`sqlite3` runs the commands it reads from its input, which the rules cannot check"]
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
