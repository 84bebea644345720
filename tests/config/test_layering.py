"""Configuration sits below the permission engine: reading a config file never loads the engine."""

import subprocess
import sys

from opencode_nb.config import schema
from opencode_nb.permission import rules


def test_importing_the_config_package_loads_nothing_of_the_permission_package():
    probe = "import sys, opencode_nb.config; print(sorted(m for m in sys.modules if m.startswith('opencode_nb.perm')))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_the_permission_engine_takes_its_actions_from_the_config_schema():
    assert rules.Action is schema.Action
    assert rules.ACTIONS == schema.ACTIONS == ("allow", "ask", "deny")
