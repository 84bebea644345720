"""Files that conventionally hold secrets: which names they have, and the `read` rules every tool goes by.

One definition serves the default rules, the read and grep tools, the bash tool's path check and the
scan that learns these files' values (`file_values.py`). A name is judged by its last matching entry of
`SECRET_FILES`, as rules are: `.env` holds secrets, `.env.example` is the template beside it.

What each tool does with such a file:

- read, and grep given the file as its path, ask `read` with the path; the default rules ask for these
  names and allow everything else, so a catch-all `read: allow` in a project's config still grants them,
  while a person's "always" for one grants that file only.
- grep over a folder does not search them unless reading them is already allowed (a rule or an earlier
  "always"), and names the ones it left out: a search that asked before every run because a `.env`
  sits in the tree would teach the person to click "allow" without reading. Whether such a file holds
  a match is never said, so a refused file cannot be read out one guessed pattern at a time.
- glob and list show the names: a name is not content, and hiding `.env` from a listing would only make
  the model guess.
- bash asks `read` for a secret file it names as an argument, a redirection source, or through a wildcard
  the shell will expand to it (`cat .env`, `grep x .env`, `source .env`, `< .env`, `cp .env x`, `cat *`).
  A program that walks a folder itself (`grep -R`, `tar c .`, a script) cannot be judged by name; what
  holds then is that the values of these files are known secrets, so its output reaches the model and the
  store redacted (`file_values.py`).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import PurePosixPath

SECRET_FILES: tuple[tuple[str, bool], ...] = (
    ("id_*", True),
    ("id_*.*", False),
    ("credentials*", True),
    (".env*", True),
    ("*.env", True),
    ("*.pem", True),
    ("*.key", True),
    (".netrc", True),
    ("_netrc", True),
    (".pgpass", True),
    ("*.example", False),
    ("*.sample", False),
    ("*.template", False),
    ("*.pub", False),
)
"""File names (`*` wildcards, matched against the name) and whether they hold secrets; the last match
decides. SSH keys are `id_<kind>` without a suffix (`id_rsa`, `id_ed25519`): `id_map.py` is code, and a
`.pem` or `.key` one is caught by its suffix again. Templates (`.env.example`, `.env.sample`) and public
keys are made to be shared."""


def _path_patterns() -> tuple[tuple[str, bool], ...]:
    """`SECRET_FILES` as patterns of whole paths (relative or absolute), in the same order: a name pattern
    `p` also matches `*/p`. Rule wildcards match `/` too, so `*/.env*` also takes in what sits in a folder
    named like a secret file (`.envs/.production/.django`), which in practice holds the same."""
    out: list[tuple[str, bool]] = []
    for name, secret in SECRET_FILES:
        out.append((name, secret))
        if not name.startswith("*"):
            out.append(("*/" + name, secret))
    return tuple(out)


PATH_PATTERNS = _path_patterns()


@cache
def _matcher(pattern: str) -> re.Pattern[str]:
    """A pattern as the permission rules read it (`*` any run of characters, `/` included; `?` one): this
    package sits below the rules and cannot import them, and a test holds the two readings equal."""
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern), re.S)


def secret_file_rules() -> dict[str, str]:
    """The default `read` rules: everything allowed, files that hold secrets asked about."""
    rules = {"*": "allow"}
    for pattern, secret in PATH_PATTERNS:
        rules.pop(pattern, None)  # a pattern given twice takes its later place, as the rules would read it
        rules[pattern] = "ask" if secret else "allow"
    return rules


def is_secret_file(path: str | PurePosixPath) -> bool:
    """Whether `path` (as the rules see it: relative inside the project, else absolute) names a file that
    conventionally holds secrets; exactly what `secret_file_rules` asks about."""
    text = str(path).replace("\\", "/")
    secret = False
    for pattern, verdict in PATH_PATTERNS:
        if _matcher(pattern).fullmatch(text):
            secret = verdict
    return secret
