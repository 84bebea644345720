"""A project with a few files, a workspace on it whose model is scripted, and helpers to read files back."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from opencode_nb import Workspace
from opencode_nb.provider import Scripted


def bash(command: str) -> dict:
    return {"tool_calls": [{"name": "bash", "input": {"command": command, "description": "run"}}]}


def write(path: str, content: str) -> dict:
    return {"tool_calls": [{"name": "write", "input": {"path": path, "content": content}}]}


def open_workspace(root: Path, data: Path, turns: list[dict], config: dict | None = None) -> tuple[Workspace, Scripted]:
    ws = Workspace(root, {"model": "scripted/demo", "permission": {"*": "allow"}, **(config or {})}, data_dir=data,
                   env={"XDG_CONFIG_HOME": str(data / "xdg"), "HOME": str(data), "PATH": _path()})
    provider = Scripted(turns)
    ws.providers.register("scripted", provider)
    return ws, provider


def _path() -> str:
    import os

    return os.environ.get("PATH", "/usr/bin:/bin")


def digest(root: Path) -> dict[str, str]:
    """Every file under `root` (but `.git`) by its sha256: a tree compared byte for byte."""
    out = {}
    for path in sorted(root.rglob("*")):
        if ".git" in path.relative_to(root).parts or not path.is_file():
            continue
        out[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "stats.py").write_text("def mean(xs):\n    return sum(xs) / len(xs)\n")
    (root / "notes.txt").write_text("keep me\n")
    (root / "data.bin").write_bytes(bytes(range(256)) * 4)
    (root / "README.md").write_text("# proj\n")
    return root
