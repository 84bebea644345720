import pytest

from .fakes import RecordingContext


@pytest.fixture
def project(tmp_path):
    """A small workspace: `tmp_path/proj`, with room for files "outside" it in `tmp_path`."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "src").mkdir()
    (root / "src" / "stats.py").write_text("def mean(values):\n    return sum(values) / len(values)\n")
    (root / "README.md").write_text("# demo\n")
    return root


@pytest.fixture
def ctx(project):
    return RecordingContext(project)


@pytest.fixture
def tree(project):
    """The project with things that listings and searches must skip, and some they must find."""
    (project / ".gitignore").write_text("data/\n*.log\n")
    (project / "data").mkdir()
    (project / "data" / "big.csv").write_text("def mean hidden\n")
    (project / "run.log").write_text("def mean in log\n")
    for folder in ("node_modules/x", ".git", "__pycache__", ".venv/lib", ".ipynb_checkpoints", "build"):
        (project / folder).mkdir(parents=True)
        (project / folder / "f.py").write_text("def mean skipped\n")
    (project / "src" / "median.py").write_text("def median(values):\n    pass\n")
    (project / "src" / "deep").mkdir()
    (project / "src" / "deep" / ".gitignore").write_text("scratch.py\n")
    (project / "src" / "deep" / "scratch.py").write_text("def mean scratch\n")
    (project / "src" / "deep" / "kept.py").write_text("x = 1\n")
    (project / "notebooks").mkdir()
    (project / "notebooks" / "a.ipynb").write_text('{"cells": [{"source": "def mean_of(x)"}]}')
    return project
