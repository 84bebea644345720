"""What tests across the package share: the machine's bubblewrap, for the attacks that must meet the real sandbox.

An attack is claimed only where it was tried by effect under the sandbox, so under CI (which installs
bubblewrap) a missing or broken one fails those tests instead of skipping them silently.
"""

from __future__ import annotations

import os

import pytest

from opencode_nb.sandbox.policy import Backend, find_backend

pytest_plugins = ["tests.postgres"]  # the PostgreSQL server of the store's tests (`pg_server`, `pg_url`)


@pytest.fixture(scope="module")
def bwrap() -> Backend:
    found = find_backend()
    if isinstance(found, Backend) and found.kind == "bwrap":
        return found
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the sandbox tests, but {found}; .ci/run installs bubblewrap")
    pytest.skip(f"no working bubblewrap here: {found}")
