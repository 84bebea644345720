from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from .frontend import FakeExtension, FakeFrontend

ASK_BASH = {"bash": {"*": "ask", "sleep *": "allow"}, "edit": "ask"}


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[Callable[..., FakeFrontend]]:
    """Start a real kernel in a fresh project whose model replays `script`."""
    started: list[FakeFrontend] = []

    def start(script: list[dict[str, Any]], *, permission: Any = None, render_views: bool = True,
              env: dict[str, str] | None = None, files: dict[str, str] | None = None,
              hello: dict[str, Any] | None = None, extra: dict[str, Any] | None = None,
              from_config: bool = False, extension: FakeExtension | None = None) -> FakeFrontend:
        project = tmp_path / "project"
        project.mkdir(exist_ok=True)
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        config = {"model": "scripted/test", "permission": permission or ASK_BASH,
                  "provider": {"scripted": {"script": script}}, **(extra or {})}
        (project / "opencode.yaml").write_text(yaml.safe_dump(config))
        for name, content in (files or {}).items():
            (project / name).write_text(content)
        kernel_env = {k: v for k, v in os.environ.items()
                      if not k.startswith("OPENCODE_NB_") and k not in ("JPY_SESSION_NAME", "CI")}
        kernel_env.update({"OPENCODE_NB_DATA_DIR": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")})
        kernel_env.update(env or {})
        arguments = ["--InteractiveShellApp.extensions=opencode_nb"] if from_config else []
        frontend = FakeFrontend(str(project), kernel_env, render_views=render_views, hello=hello,
                                extra_arguments=arguments, extension=extension)
        started.append(frontend)
        if not from_config:
            assert frontend.run("%load_ext opencode_nb")["content"]["status"] == "ok"
        return frontend

    yield start
    for frontend in started:
        frontend.close()
