from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from opencode_nb.config import LoadedConfig, load_config


class Project:
    """A git repository at `repo/` with a working directory `repo/analysis/q3`, a fake home and a fake
    XDG config dir: tests never read the person's real configuration."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.repo = base / "repo"
        self.cwd = self.repo / "analysis" / "q3"
        self.global_dir = base / "xdg" / "opencode_nb"
        (self.repo / ".git").mkdir(parents=True)
        self.cwd.mkdir(parents=True)
        self.global_dir.mkdir(parents=True)

    def env(self, **extra: str) -> dict[str, str]:
        return {"XDG_CONFIG_HOME": str(self.base / "xdg"), "HOME": str(self.base / "home"), **extra}

    def write(self, relative: str, text: str) -> Path:
        path = self.base / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def load(self, overrides: Mapping[str, Any] | None = None, **env: str) -> LoadedConfig:
        return load_config(self.cwd, overrides, env=self.env(**env))


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)
