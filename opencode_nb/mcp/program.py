"""Whether a local server's program is there to run, said before anybody is asked to approve it.

Approving a server whose program is not installed approves nothing that can happen: the start fails at once
with `No such file or directory`, after the person was asked. So the program is looked for first, as the
process would find it: a word with a `/` from the folder the command runs in (`entries.ServerEntry.folder`),
a bare name on the `PATH` the server gets (the entry's `environment` may set its own). A missing one is
said plainly: which server, which file names it, what is missing and what to install.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from .entries import ServerEntry

INSTALL_HINTS: dict[str, str] = {
    "uvx": "install uv (https://docs.astral.sh/uv/getting-started/installation/), which provides uvx",
    "uv": "install uv (https://docs.astral.sh/uv/getting-started/installation/)",
    "npx": "install Node.js (https://nodejs.org), which provides npx",
    "npm": "install Node.js (https://nodejs.org), which provides npm",
    "node": "install Node.js (https://nodejs.org)",
    "bunx": "install Bun (https://bun.sh), which provides bunx",
    "bun": "install Bun (https://bun.sh)",
    "pnpm": "install pnpm (https://pnpm.io/installation)",
    "deno": "install Deno (https://deno.com)",
    "docker": "install Docker (https://docs.docker.com/get-docker/)",
    "pipx": "install pipx (`python -m pip install --user pipx`)",
}
"""What to install for the programs servers are usually started with."""


def missing_program(entry: ServerEntry, folder: Path, env: Mapping[str, str]) -> str | None:
    """Why `entry`'s program cannot be started from `folder` with `env`'s PATH; None when it is there (or the
    entry is not a local one)."""
    command = list(entry.config.command or [])
    if entry.config.type != "local" or not command:
        return None
    program = command[0]
    where = f" ({entry.source})" if entry.source else ""
    if "/" in program:
        path = Path(program).expanduser()
        path = path if path.is_absolute() else folder / path
        if not path.is_file():
            return (f"the MCP server {entry.name}{where} cannot start: its program {program} is not there "
                    f"(looked for {path}). Create it, or correct `command` in that file.")
        if not os.access(path, os.X_OK):
            return (f"the MCP server {entry.name}{where} cannot start: its program {path} is not executable. "
                    f"Run `chmod +x {path}`, or start it through its interpreter in `command`.")
        return None
    search = env.get("PATH", os.defpath)
    if shutil.which(program, path=search) is not None:
        return None
    install = INSTALL_HINTS.get(program, f"install {program}, or give its full path in `command`")
    return (f"the MCP server {entry.name}{where} cannot start: its program {program} is not installed (not found "
            f"on PATH). To use it, {install}; then run the prompt again.")
