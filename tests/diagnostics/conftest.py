"""A project, a tool context on it, and the write/edit/notebook_edit tools as a workspace makes them: with the
diagnostics of a configuration."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from opencode_nb.config.schema import Config
from opencode_nb.diagnostics import Diagnostics
from tests.session.conftest import make, wire  # noqa: F401
from tests.tool.fakes import RecordingContext


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    return root


@pytest.fixture
def ctx(project: Path) -> RecordingContext:
    return RecordingContext(project)


@pytest.fixture
def diagnostics() -> Callable[..., Diagnostics]:
    """`diagnostics(**config)`: the workspace's `Diagnostics` for a config holding `config`."""
    made: list[Diagnostics] = []

    def build(**config: Any) -> Diagnostics:
        read = Config.model_validate(config)
        made.append(Diagnostics(read.diagnostics, read.formatter))
        return made[-1]

    yield build
    for d in made:
        d.close()
