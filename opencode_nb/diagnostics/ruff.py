"""`ruff check` on a changed file or cell, for the errors that make Python fail, never its style.

The rules are chosen so that every finding is a bug the code would hit when it runs or is imported:

- syntax errors (ruff reports them whatever is selected) and `E9` (a file that cannot be read);
- `F63`: comparisons that are always true or false by mistake (`x is "a"`, `assert (x, "msg")`);
- `F7`: `break`, `continue`, `return`, `yield` where Python refuses them;
- `F82`: undefined names, names in `__all__` that do not exist, a local used before it is assigned;
- `F50`, `F52`: `%` and `.format` strings that do not fit their arguments;
- `PLE`: the errors pylint finds (`await` outside an async function, `__init__` returning a value, ...).

Unused imports, redefinitions, line lengths and the like are left to the project's own linting: the model is
asked to fix what breaks, not to restyle the file.

The content is given on stdin with the file's real path (`--stdin-filename`), so ruff reads no file the
agent could have changed meanwhile, and the project's own ruff settings (`builtins`, `target-version`,
per-file ignores) apply; a project whose ruff settings do not load is checked without them (`--isolated`).
ruff is the binary of the `ruff` package, run as a plain subprocess: it only reads the content it is given
and its settings, and with `--no-cache` writes nothing.

A cell is checked as the only cell of a notebook after the code cells above it, so IPython's `%magics`
and `!commands` are no syntax errors, top-level `await` is allowed, and names the cells above define are
defined (a cell above with a syntax error is left out: ruff looks at no names at all where any cell does
not parse); a name the kernel holds (a variable the person made in a cell run earlier, wherever it is) is
not "undefined" either.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from collections.abc import Container, Sequence
from functools import cache
from pathlib import Path

from .. import secrets
from .findings import Finding

RULES = ("E9", "F63", "F7", "F82", "F50", "F52", "PLE")
"""The error-level rules (see the module's docstring)."""

UNDEFINED = re.compile(r"^Undefined name `(.+)`")
"""F821's message, whose name a cell's check looks up in the kernel."""


class RuffFailed(Exception):
    """ruff could not check the content (missing, timed out, crashed); `str()` says why, for the person."""


@cache
def ruff_binary() -> str | None:
    """The `ruff` package's binary, else one on PATH; None where there is none."""
    try:
        from ruff.__main__ import find_ruff_bin  # type: ignore[import-untyped]

        return str(find_ruff_bin())
    except (ImportError, FileNotFoundError):
        import shutil

        return shutil.which("ruff")


async def check_source(source: str, path: Path, *, cwd: Path, timeout_s: float) -> list[Finding]:
    """ruff's error-level findings in `source`, as if it were the file at `path`.

    Raises:
        RuffFailed: ruff is missing, or did not answer within `timeout_s`, or crashed.
    """
    return [_finding(d) for d in await _run(source, path, cwd=cwd, timeout_s=timeout_s)]


async def check_cell(source: str, above: Sequence[str], notebook: Path, *, cwd: Path, timeout_s: float,
                     known: Container[str] = ()) -> list[Finding]:
    """ruff's error-level findings in a code cell whose code cells above it are `above`; an undefined name
    that `known` holds (the kernel's namespace) is not a finding. Lines are the cell's own.

    Raises:
        RuffFailed: as `check_source`.
    """
    path = notebook if notebook.suffix == ".ipynb" else notebook.with_suffix(".ipynb")
    cells = [*above, source]
    found = await _run(_notebook(cells), path, cwd=cwd, timeout_s=timeout_s)
    broken = {d.get("cell") for d in found if d.get("code") in (None, "invalid-syntax")} - {None, len(cells)}
    if broken:  # a syntax error above stops ruff's look at names everywhere: check without those cells
        cells = [text for i, text in enumerate(cells, 1) if i not in broken]
        found = await _run(_notebook(cells), path, cwd=cwd, timeout_s=timeout_s)
    findings = []
    for data in found:
        if data.get("cell") not in (None, len(cells)):
            continue  # a problem of a cell above: not this edit's
        finding = _finding(data)
        name = UNDEFINED.match(finding.message)
        if finding.code == "F821" and name and name.group(1) in known:
            continue
        findings.append(finding)
    return findings


def _notebook(cells: Sequence[str]) -> str:
    """A notebook of code cells, as ruff reads one from stdin."""
    return json.dumps({"cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "outputs": [],
                                  "execution_count": None, "source": text} for i, text in enumerate(cells)],
                       "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5})


async def _run(stdin: str, path: Path, *, cwd: Path, timeout_s: float) -> list[dict[str, object]]:
    binary = ruff_binary()
    if binary is None:
        raise RuffFailed("ruff is not installed")
    argv = [binary, "check", "--output-format", "json", "--no-cache", "--no-fix", "--exit-zero",
            "--select", ",".join(RULES), "--stdin-filename", str(path), "-"]
    code, out, err = await _exec(argv, stdin, cwd, timeout_s)
    if code == 2:  # the project's ruff settings did not load: check with ruff's own
        code, out, err = await _exec([*argv[:2], "--isolated", *argv[2:]], stdin, cwd, timeout_s)
    if code != 0:
        raise RuffFailed(f"ruff failed (exit code {code}): {err.strip()[:300]}")
    try:
        found = json.loads(out or "[]")
    except json.JSONDecodeError as exc:
        raise RuffFailed(f"ruff's answer was not JSON ({exc})") from None
    return [d for d in found if isinstance(d, dict)]


async def _exec(argv: list[str], stdin: str, cwd: Path, timeout_s: float) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=secrets.child_env(os.environ), start_new_session=True)
    try:
        out, err = await asyncio.wait_for(process.communicate(stdin.encode()), timeout_s)
    except (TimeoutError, asyncio.CancelledError) as exc:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        if isinstance(exc, asyncio.CancelledError):
            raise
        raise RuffFailed(f"ruff did not answer within {timeout_s:g} s") from None
    return process.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace")


def _finding(data: dict[str, object]) -> Finding:
    location = data.get("location")
    row, column = (location.get("row"), location.get("column")) if isinstance(location, dict) else (1, 1)
    code = data.get("code") or data.get("name") or "invalid-syntax"
    return Finding(line=int(row or 1), column=int(column or 1), code=str(code), message=str(data.get("message", "")),
                   source="ruff")
