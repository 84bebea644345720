"""Whether a local server's program is there to run, said before anybody is asked to approve it.

Approving a server whose program is not installed approves nothing that can happen: the start fails at once
with `No such file or directory`, after the person was asked. So the program is looked for first, as the
process would find it: a word with a `/` from the folder the command runs in (`entries.ServerEntry.folder`),
a bare name on the `PATH` the server gets (the entry's `environment` may set its own). A missing one is
said plainly: which server, which file names it, what is missing and what to install.

A server started inside the OS sandbox finds its program there, not on the host: bubblewrap gives /tmp its own
contents, masks /run, and where reads outside the project are not allowed shows only the system's folders,
the Python installation and the folders the rules name. A program in a folder the entry's own `PATH` adds
under /tmp is on the host and nowhere for the server; the reverse can happen too. So where the server would be
confined, the program is looked for inside the same sandbox, with the same environment, PATH and working
folder (`launch.confined_start`), by a one-line `sh` that starts nothing else; only if that look cannot run
at all does the host's answer stand, and the start says what went wrong.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from ..sandbox.policy import Confinement
from .entries import ServerEntry

LOOK = 'echo looking; case $1 in */*) [ -f "$1" ] && [ -x "$1" ];; *) command -v -- "$1" >/dev/null 2>&1;; esac'
"""Finds `$1` as the process would: a path from the working folder, a bare name on `PATH`; exit 0 if found."""
LOOK_TIMEOUT_S = 10.0

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


async def missing_program_confined(entry: ServerEntry, folder: Path, env: Mapping[str, str],
                                   confined: Confinement | None) -> str | None:
    """`missing_program`, judged as the started process will see it: inside `confined` when it runs there."""
    on_host = missing_program(entry, folder, env)
    command = list(entry.config.command or [])
    if confined is None or entry.config.type != "local" or not command:
        return on_host
    inside = await seen_inside(confined, command[0], folder, env)
    if inside is None or (inside is False and on_host is not None):
        return on_host  # the look could not run (the start will say why), or the host's words say what to install
    if inside:
        return None
    program = command[0]
    where = f" ({entry.source})" if entry.source else ""
    if "/" in program:
        found = str(Path(program) if Path(program).is_absolute() else folder / program)
    else:
        found = shutil.which(program, path=env.get("PATH", os.defpath)) or program
    return (f"the MCP server {entry.name}{where} cannot start: its program {program} is on this machine ({found}) "
            "but not inside the OS sandbox the server runs in, which gives /tmp its own contents and shows only "
            "the system's folders, the Python installation, the project and the folders the `external_directory` "
            "rules allow. Install it where the sandbox shows it (a system folder such as /usr/local/bin, or a "
            "folder on the kernel's own PATH), or name a copy there in `command`; then run the prompt again.")


async def seen_inside(confined: Confinement, program: str, folder: Path, env: Mapping[str, str]) -> bool | None:
    """Whether `program` is there to run inside `confined`, from `folder` with `env`; None when the look itself
    could not run (no sandbox could be built, the folder is not there)."""
    argv = confined.wrap(["/bin/sh", "-c", LOOK, "look", program], cwd=folder)
    try:
        process = await asyncio.create_subprocess_exec(*argv, env=dict(env), stdin=asyncio.subprocess.DEVNULL,
                                                       stdout=asyncio.subprocess.PIPE,
                                                       stderr=asyncio.subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return None
    try:
        out, _ = await asyncio.wait_for(process.communicate(), LOOK_TIMEOUT_S)
    except BaseException as exc:  # a timeout, or the prompt stopped: leave no process behind
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        if isinstance(exc, TimeoutError):
            return None
        raise
    if b"looking" not in out:
        return None
    return process.returncode == 0
