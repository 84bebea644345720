# The session tests' workspace harness and wire server, for the faults the safety tests drive through the loop.
from tests.session.conftest import make, wire  # noqa: F401
