"""Which files a listing or search skips: the usual build and cache folders, and what .gitignore says."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pathspec

ALWAYS_IGNORED = (".git/", "node_modules/", "__pycache__/", ".venv/", "venv/", ".ipynb_checkpoints/",
                  ".mypy_cache/", ".pytest_cache/", ".ruff_cache/", "dist/", "build/", "*.egg-info/", ".DS_Store")


def ignore_spec(root: Path, extra: list[str] | None = None) -> pathspec.GitIgnoreSpec:
    lines = [*ALWAYS_IGNORED, *(extra or [])]
    gitignore = root / ".gitignore"
    if gitignore.is_file():
        lines += gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
    return pathspec.GitIgnoreSpec.from_lines(lines)


def walk_files(root: Path, spec: pathspec.GitIgnoreSpec) -> Iterator[Path]:
    """Every file under `root` that `spec` does not ignore, pruning ignored folders early."""
    for current, dirs, names in os.walk(root):
        rel = Path(current).relative_to(root)
        dirs[:] = sorted(d for d in dirs if not spec.match_file(f"{(rel / d).as_posix()}/"))
        for name in sorted(names):
            if not spec.match_file((rel / name).as_posix()):
                yield Path(current) / name
