import pytest

from .fakes import recording_context


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "src").mkdir()
    (root / "src" / "stats.py").write_text("def mean(values):\n    return sum(values) / len(values)\n")
    (root / "README.md").write_text("# demo\n")
    return root


@pytest.fixture
def ctx(project):
    return recording_context(project)
