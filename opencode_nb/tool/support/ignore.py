"""Which files listings and searches skip: build and cache folders, and what .gitignore files say.

Every .gitignore from the workspace root down to each folder applies, each relative to its own folder,
as git reads them. One simplification: a `!pattern` re-includes only what its own file excluded, not
what a .gitignore higher up excluded.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pathspec

ALWAYS_IGNORED = (".git/", "node_modules/", "__pycache__/", ".venv/", "venv/", ".ipynb_checkpoints/",
                  ".mypy_cache/", ".pytest_cache/", ".ruff_cache/", ".tox/", ".nox/", "dist/", "build/",
                  "*.egg-info/", ".DS_Store")
"""Skipped everywhere, whatever .gitignore says: nobody searches these on purpose."""


def ignore_spec(root: Path, extra: list[str] | None = None) -> pathspec.GitIgnoreSpec:
    """The defaults, `extra` and `root/.gitignore` as one spec, for paths relative to `root`."""
    lines = [*ALWAYS_IGNORED, *(extra or [])]
    gitignore = root / ".gitignore"
    if gitignore.is_file():
        lines += gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
    return pathspec.GitIgnoreSpec.from_lines(lines)


class IgnoreRules:
    """The ignore rules for a walk of `top`, which may be a folder deep inside the workspace `root`."""

    def __init__(self, top: Path, root: Path | None = None, extra: list[str] | None = None) -> None:
        self.top = top
        self._specs: list[tuple[Path, pathspec.GitIgnoreSpec]] = [
            (top, pathspec.GitIgnoreSpec.from_lines([*ALWAYS_IGNORED, *(extra or [])]))
        ]
        if root is not None and root in top.parents:  # the .gitignore files above `top`, root first
            for folder in reversed(top.parents[: len(top.parents) - len(root.parents)]):
                self._load(folder)
        self._load(top)

    def _load(self, folder: Path) -> None:
        gitignore = folder / ".gitignore"
        if gitignore.is_file():
            try:
                lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                return
            self._specs.append((folder, pathspec.GitIgnoreSpec.from_lines(lines)))

    def ignored(self, path: Path, is_dir: bool = False) -> bool:
        for base, spec in self._specs:
            if path == base or base not in path.parents:
                continue
            rel = path.relative_to(base).as_posix() + ("/" if is_dir else "")
            if spec.match_file(rel):
                return True
        return False

    def walk(self) -> Iterator[Path]:
        """Every file under `top` that is not ignored, in sorted order, pruning ignored folders early."""
        for current, dirs, names in os.walk(self.top):
            here = Path(current)
            if here != self.top:
                self._load(here)
            dirs[:] = sorted(d for d in dirs if not self.ignored(here / d, is_dir=True))
            for name in sorted(names):
                path = here / name
                if not self.ignored(path):
                    yield path
