"""Fixtures for browser tests: a real JupyterLab server plus headless Chromium (see ``lab.py``).

* ``lab`` (module scope) — a started :class:`~tests.e2e.lab.Lab`; one server and browser per test module, with
  the application reachable as ``window.jupyterapp`` (to run JupyterLab's own commands, switch themes).
* ``lab_env`` (module scope) — extra environment for the server and its kernels (default: a private session
  store); override it in a test module::

      @pytest.fixture(scope="module")
      def lab_env(tmp_path_factory):
          return {"OPENCODE_NB_DATA_DIR": str(tmp_path_factory.mktemp("data"))}

* ``lab_pythonpath`` (module scope) — entries prepended to the kernels' ``PYTHONPATH`` (default: none).

The tests skip when Chromium or the ``playwright`` package is missing, but *fail* when ``CI`` is set (CI installs
both). On failure a screenshot is written to ``$OPENCODE_NB_E2E_ARTIFACTS`` (default: the test's tmp dir).
Set ``OPENCODE_NB_E2E_KEEP=1`` to keep the server's state dir (log, settings) after the run.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .lab import CHROMIUM, Lab


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: end-to-end test in a real JupyterLab + headless Chromium (slow)")


def _missing() -> str | None:
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"Chromium not found at {CHROMIUM} (apt-get install chromium, or set OPENCODE_NB_CHROMIUM)"
    if importlib.util.find_spec("playwright") is None:
        return "the Python package 'playwright' is not installed (pip install playwright; no browser download needed)"
    return None


def require_browser() -> None:
    """Skip (or fail under ``CI``) when the browser tooling is missing."""
    reason = _missing()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"e2e prerequisites missing on CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def lab_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return {"OPENCODE_NB_DATA_DIR": str(tmp_path_factory.mktemp("ocnb-data"))}


@pytest.fixture(scope="module")
def lab_pythonpath() -> list[str]:
    return []


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, lab_env: dict[str, str], lab_pythonpath: list[str]) -> Iterator[Lab]:
    require_browser()
    root = tmp_path_factory.mktemp("lab-root")
    with Lab(root, env=lab_env, pythonpath=lab_pythonpath, expose_app=True) as started:
        yield started


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    report = yield
    setattr(item, f"_e2e_rep_{report.when}", report)
    return report


@pytest.fixture(autouse=True)
def _screenshot_on_failure(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[None]:
    yield
    rep = getattr(request.node, "_e2e_rep_call", None)
    if rep is None or not rep.failed or "lab" not in request.fixturenames:
        return
    lab: Lab = request.getfixturevalue("lab")
    if lab.page is None:
        return
    out = Path(os.environ.get("OPENCODE_NB_E2E_ARTIFACTS", tmp_path)) / f"{request.node.name}.png"
    try:
        lab.screenshot(out)
        print(f"\nscreenshot: {out}\nbrowser console (last 20):\n" + "\n".join(lab.console[-20:]))
        print(f"server log tail:\n{lab.log_tail(30)}")
    except Exception as e:  # the page may be gone; never mask the real failure
        print(f"\nscreenshot failed: {e}")
