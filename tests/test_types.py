"""The package type-checks: mypy, with the settings in pyproject.toml's [tool.mypy], finds no error.

A test rather than a step of its own in CI, so the README's one test command stays the whole check that CI
runs, and a person who runs the tests runs this too. It checks every module, which takes a minute or more.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.timeout(900)
def test_mypy_finds_no_errors() -> None:
    # No arguments: the files to check and every setting come from pyproject.toml, as for a person running mypy.
    result = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=890)
    assert result.returncode == 0, f"mypy found errors:\n{result.stdout}{result.stderr}"
