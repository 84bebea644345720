# Commands run in the session tests' workspace harness.
from tests.session.conftest import make  # noqa: F401
