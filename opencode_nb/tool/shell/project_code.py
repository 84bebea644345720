"""Programs and settings that run code the project holds: one table for what a rule on a program cannot see.

A deny rule on `rm` cannot hold inside a Makefile, a `package.json` script, a `conftest.py`, a module that
shadows one python imports, or a git config that names a command: the line says `make`, `npm test`, `pytest`,
`git status`, and what runs was written earlier, in the project. So a call is hidden code when it runs a
program that reads code from the working tree (`PROJECT_RUNNERS`: build tools, task and package runners, test
runners, tools loading plugins named by project config), or sets a variable that points a program at code
(`CODE_VARIABLES`: `PYTHONPATH`, `GIT_*`, `XDG_CONFIG_HOME`, `LD_*`, `PERL5LIB`, `NODE_OPTIONS`, ...).
Interpreters given a script and shells given a file are `hidden.py`'s: the same rule, read from their options.

Only a call that asks for nothing but the program's version or help runs none of it (`make --version`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .words import Word

INFO = frozenset({"--version", "-v", "-V", "--help", "-h", "version", "help"})
"""A runner given only one of these prints something and reads no project code."""


@dataclass(frozen=True)
class Runner:
    reads: str
    """What of the project it runs, for the reason the person reads."""
    inert: frozenset[str] = frozenset()
    """Subcommands (the first word after the program) that run none of it, besides `INFO` alone."""


_NPM_INERT = frozenset({"ls", "list", "view", "info", "search", "outdated", "why", "help"})
_PIP_INERT = frozenset({"list", "show", "freeze", "check", "help", "download", "hash"})
_CONTAINER_INERT = frozenset({"ps", "images", "version", "info", "logs", "inspect"})

PROJECT_RUNNERS: dict[str, Runner] = {
    **dict.fromkeys(("make", "gmake", "bmake"), Runner("the Makefile's recipes")),
    **dict.fromkeys(("cmake", "ctest", "cpack"), Runner("CMake scripts")),
    **dict.fromkeys(("ninja", "samu"), Runner("build.ninja's commands")),
    "meson": Runner("meson.build"),
    "scons": Runner("the SConstruct file"),
    **dict.fromkeys(("bazel", "bazelisk", "buck", "buck2", "pants"), Runner("build files and their rules")),
    "just": Runner("the justfile's recipes"),
    "task": Runner("the Taskfile's commands"),
    **dict.fromkeys(("invoke", "inv", "fab"), Runner("tasks.py")),
    "rake": Runner("the Rakefile"),
    "ant": Runner("build.xml"),
    **dict.fromkeys(("mvn", "mvnw", "gradle", "gradlew", "sbt", "lein", "mix"), Runner("the build file and its "
                                                                                      "plugins")),
    "cargo": Runner("build scripts (build.rs) and the crate's code"),
    "go": Runner("the module's code and `go:generate` commands", frozenset({"env", "list", "doc", "fmt", "vet",
                                                                            "mod", "build"})),
    **dict.fromkeys(("npm", "pnpm", "yarn"), Runner("package.json's scripts", _NPM_INERT)),
    **dict.fromkeys(("npx", "pnpx", "bunx", "corepack"), Runner("a package's programs")),
    **dict.fromkeys(("pip", "pip3", "uv", "pipx", "pipenv", "poetry", "pdm", "hatch", "conda", "mamba"),
                    Runner("a package's build code (setup.py) or the project's scripts", _PIP_INERT)),
    **dict.fromkeys(("pytest", "py.test", "tox", "nox", "coverage", "pre-commit", "mypy", "pylint", "flake8",
                     "sphinx-build", "mkdocs", "jupyter", "papermill", "snakemake", "dvc", "streamlit", "flask",
                     "django-admin", "uvicorn", "gunicorn", "celery"),
                    Runner("the project's tests, config, plugins or app")),
    **dict.fromkeys(("bundle", "gem", "rails", "rspec", "composer", "dotnet", "swift", "stack", "cabal"),
                    Runner("the project's build or task code")),
    **dict.fromkeys(("docker", "podman", "docker-compose"), Runner("a Dockerfile or compose file",
                                                                   _CONTAINER_INERT)),
    **dict.fromkeys(("terraform", "tofu", "ansible-playbook", "vagrant", "direnv"),
                    Runner("the project's configuration, which can run commands")),
}
"""Programs that run code they find in the working tree."""

CODE_VARIABLES: dict[str, frozenset[str]] = {
    "PYTHON": frozenset({"PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONHASHSEED", "PYTHONIOENCODING",
                         "PYTHONUTF8", "PYTHONFAULTHANDLER", "PYTHONNOUSERSITE", "PYTHONOPTIMIZE",
                         "PYTHONDEVMODE", "PYTHONTRACEMALLOC", "PYTHONWARNDEFAULTENCODING", "PYTHONSAFEPATH",
                         "PYTHONVERBOSE", "PYTHONDEBUG", "PYTHONMALLOC", "PYTHONPROFILEIMPORTTIME"}),
    "GIT_": frozenset({"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME",
                       "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE", "GIT_TERMINAL_PROMPT", "GIT_MERGE_AUTOEDIT",
                       "GIT_OPTIONAL_LOCKS", "GIT_FLUSH", "GIT_TRACE", "GIT_PROGRESS_DELAY"}),
    "XDG_": frozenset({"XDG_RUNTIME_DIR"}),
    "LD_": frozenset(), "DYLD_": frozenset(), "PERL": frozenset(), "RUBY": frozenset(), "NODE_": frozenset(),
    "NPM_CONFIG_": frozenset(), "YARN_": frozenset(), "BUN_": frozenset(), "DENO_": frozenset(),
    "LUA_": frozenset(), "R_": frozenset(), "JULIA_": frozenset(), "GEM_": frozenset(), "BUNDLE": frozenset(),
    "PIP_": frozenset(), "UV_": frozenset(), "CARGO": frozenset(), "RUSTC": frozenset(), "GOFLAGS": frozenset(),
    "GOROOT": frozenset(), "GOPATH": frozenset(), "GOTOOLCHAIN": frozenset(), "GOENV": frozenset(),
    "PYTEST_": frozenset(), "IPYTHON": frozenset(), "JUPYTER_": frozenset(), "TCL": frozenset(),
    "PHP": frozenset(), "GNUPG": frozenset(), "CLASSPATH": frozenset(), "ZDOTDIR": frozenset(),
    "SHELL": frozenset(), "CC": frozenset(), "CXX": frozenset(), "CPP": frozenset(), "CFLAGS": frozenset(),
    "CXXFLAGS": frozenset(), "CPPFLAGS": frozenset(), "LDFLAGS": frozenset(), "KUBECONFIG": frozenset(),
    "AWS_CONFIG_FILE": frozenset(), "DOCKER_CONFIG": frozenset(), "MAKE": frozenset(),
}
"""Variable names (by prefix, compared without case) that point a program at code: the code it loads, the
config it reads, the compiler or shell it runs. The set beside each prefix holds the ones that do not."""


def runner_reason(name: str, words: list[Word]) -> str | None:
    """Why the command `words` (program `name`) runs code the project holds; None when it does not."""
    runner = PROJECT_RUNNERS.get(name)
    if runner is None:
        return None
    first = words[1].value if len(words) > 1 else None
    if (len(words) == 2 and first in INFO) or first in runner.inert:
        return None
    return f"`{name}` runs {runner.reads}, code the rules cannot check"


def variable_reason(name: str) -> str | None:
    """Why setting the variable `name` makes programs run code of its choosing; None when it does not."""
    upper = name.upper()
    for prefix, inert in CODE_VARIABLES.items():
        if upper.startswith(prefix) and upper not in inert:
            return f"setting `{name}` points programs at code or configuration of its choosing"
    return None
