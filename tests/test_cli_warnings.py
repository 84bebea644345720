"""The command line prints each configuration warning once, as one plain line, with no line of our source."""

import os
import subprocess
import sys
from pathlib import Path


def test_a_config_warning_is_one_plain_line(tmp_path: Path):
    (tmp_path / "opencode.yaml").write_text("modle: openai/gpt-5\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_NB_")}
    env.update(OPENCODE_NB_DATA_DIR=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    done = subprocess.run([sys.executable, "-m", "opencode_nb.cli", "agents"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"warning: {tmp_path / 'opencode.yaml'}:1: unknown key modle (did you mean model?); it is ignored"]
