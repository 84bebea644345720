import subprocess
import sys

import pytest

from opencode_nb import __version__
from opencode_nb.cli import main
from opencode_nb.sandbox.policy import Backend, find_backend


def run(*args, cwd, env):
    return subprocess.run([sys.executable, "-m", "opencode_nb.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


def cli_env(tmp_path):
    import os

    return {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "OPENCODE_NB_DATA_DIR": str(tmp_path / "d")}


def test_version(tmp_path, capsys):
    try:
        main(["--version"])
    except SystemExit as exit_:
        assert exit_.code == 0
    assert capsys.readouterr().out.strip() == f"opencode-nb {__version__}"


def test_agents_lists_the_resolved_agents_of_the_directory(tmp_path):
    (tmp_path / ".opencode" / "agent").mkdir(parents=True)
    (tmp_path / ".opencode" / "agent" / "reviewer.md").write_text("---\nmode: subagent\ndescription: Reviews\n---\nR\n")
    result = run("agents", cwd=tmp_path, env=cli_env(tmp_path))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("* build ")
    assert any(line.split()[0] == "reviewer" and "Reviews" in line for line in lines)
    assert not any(line.split()[:1] == ["title"] for line in lines if line)


def test_a_config_error_is_one_clear_line_not_a_traceback(tmp_path):
    (tmp_path / "opencode.yaml").write_text("agent:\n  build:\n    mode: boss\n")
    result = run("agents", cwd=tmp_path, env=cli_env(tmp_path))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "opencode.yaml:3 agent.build.mode: 'boss' is not one of primary, subagent, all" in result.stderr


async def test_show_prints_a_sessions_transcript_and_can_write_it_as_html(tmp_path):
    import os

    from opencode_nb import Workspace

    (tmp_path / "opencode.yaml").write_text(
        "model: scripted/x\nprovider:\n  scripted:\n    script:\n      - text: 'The answer is **42**.'\n")
    env = cli_env(tmp_path)
    ws = Workspace(tmp_path, data_dir=tmp_path / "d", env={k: v for k, v in env.items() if k != "OPENCODE_NB_CONFIG"})
    session = ws.sessions.create(str(ws.directory))
    await ws.prompt(session.id, "what is it?")
    await ws.aclose()
    page = tmp_path / "t.html"
    result = run("show", session.id, "--html", str(page), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "you: what is it?" in result.stdout and "The answer is **42**." in result.stdout
    assert "<strong>42</strong>" in page.read_text()
    missing = run("show", "ses_missing", cwd=tmp_path, env=env)
    assert missing.returncode == 2 and "ses_missing" in missing.stderr
    assert os.path.exists(tmp_path / "d")


@pytest.mark.skipif(not isinstance(find_backend(), Backend), reason="no working bubblewrap on PATH here")
def test_config_status_names_the_sandbox_shell_commands_run_in(tmp_path):
    env = {k: v for k, v in cli_env(tmp_path).items() if k != "OPENCODE_NB_BWRAP"}
    working = run("config", cwd=tmp_path, env=env)
    assert working.returncode == 0, working.stderr
    assert working.stdout.startswith("OS sandbox of shell commands: bubblewrap: shell commands run confined")


def test_config_status_says_when_shell_commands_run_unconfined_and_how_to_confine_them(tmp_path):
    env = {k: v for k, v in cli_env(tmp_path).items() if k != "OPENCODE_NB_BWRAP"}
    missing = run("config", cwd=tmp_path, env={**env, "OPENCODE_NB_BWRAP": str(tmp_path / "no-bwrap")})
    assert missing.stdout.startswith("OS sandbox of shell commands: none: commands run unconfined — install "
                                     "bubblewrap")
