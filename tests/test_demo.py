"""`opencode-nb demo`: the whole offline session as a new user first sees it in a terminal."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from opencode_nb.demo import demo
from opencode_nb.sandbox.policy import Backend, find_backend


def run_demo(tmp_path: Path, *args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess, in an empty directory, with a private temporary directory of its own."""
    cwd, tmp = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_NB_")}
    env = {**clean, "TMPDIR": str(tmp), "XDG_CONFIG_HOME": str(tmp_path / "xdg"), **env}
    result = subprocess.run([sys.executable, "-m", "opencode_nb.cli", "demo", *args], cwd=cwd, env=env, input=stdin,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result


def leftovers(tmp_path: Path) -> list[str]:
    """What the demo left in its temporary directory, besides the tools' shared scratch folder."""
    return sorted(p.name for p in (tmp_path / "tmp").iterdir() if p.name != "opencode_nb")


def test_the_demo_runs_a_whole_multi_agent_session_offline_with_a_readable_transcript(tmp_path):
    text = run_demo(tmp_path).stdout
    assert "model: scripted/demo (the offline demo model)" in text
    assert "you: The average temperature in summarise() looks too high." in text
    # delegation: the child's work is printed nested under the task call
    assert "  ▸ task @explore — Survey the project" in text
    assert re.search(r"\n {6}task prompt: Survey this small Python project", text)
    assert re.search(r"\n {8}✓ grep def \(mean\|median\|summarise\)", text)
    assert "  ✓ task Survey the project" in text
    # plan mode, entered and left with consent, each switch one short line
    assert re.search(r"\n  \? build asked: Switch to the plan agent .*\? — Yes \(answered by policy", text)
    assert "\n  → @plan takes over\n" in text and "\n  → @build takes over\n" in text
    assert "plan: The plan is written." in text
    # the change itself, behind a permission ask, then verified
    assert re.search(r"\n  \? build asked for edit stats.py: allowed once .*\n  ✓ edit stats.py", text)
    assert "✓ bash Run the project's self-check" in text and "all checks passed" in text
    assert "[x] Run the self-check" in text
    assert "build: Fixed:" in text and "tokens" in text


def test_the_person_reads_no_instruction_meant_for_the_model_and_each_ask_once(tmp_path):
    text = run_demo(tmp_path).stdout
    assert "(mode switch)" not in text
    assert "Research the task with read-only tools" not in text and "Execute it step by step" not in text
    assert "? permission" not in text
    asks = re.findall(r"\n  \? (?:build|plan) asked", text)
    assert len(asks) == 4, "plan_enter, the plan file, plan_exit, the edit: one line each"


def test_the_demo_removes_its_copy_says_so_and_leaves_nothing_behind(tmp_path):
    text = run_demo(tmp_path).stdout
    copy = re.search(r"a copy of the sample project in (\S+)", text).group(1)
    assert str(tmp_path / "tmp") in copy and not Path(copy).exists()
    assert "removed the project copy and its session store" in text and "--keep" in text
    assert leftovers(tmp_path) == []
    assert list((tmp_path / "cwd").iterdir()) == []


def test_with_keep_the_copy_stays_and_the_demo_says_where(tmp_path):
    text = run_demo(tmp_path, "--keep").stdout
    kept = re.search(r"kept the project copy in (\S+)", text).group(1)
    assert "return sum(values) / len(values)" in (Path(kept) / "stats.py").read_text()


def test_refused_by_policy_the_demo_says_the_fix_was_not_made(tmp_path):
    text = run_demo(tmp_path, OPENCODE_NB_PERMISSION="deny").stdout
    assert "OPENCODE_NB_PERMISSION=deny decides each one" in text
    assert "? build asked for edit stats.py: rejected" in text
    assert "build: I did not change `stats.py`: the edit was refused" in text
    assert "Fixed" not in text


def test_with_ask_the_person_answers_and_their_reasons_reach_the_model(tmp_path):
    # plan mode: yes; the plan file: once; carry it out: yes; the edit: refused, with a reason
    text = run_demo(tmp_path, "--ask", stdin="1\no\n1\nkeep the n - 1 please\n").stdout
    assert "[o]nce · [a]lways" in text
    assert "build: I did not change `stats.py`: you rejected the edit and said “keep the n - 1 please”" in text
    assert "Fixed" not in text and "? build asked for edit" not in text, "the prompt itself is the ask's one line"
    assert leftovers(tmp_path) == []


async def test_with_a_real_model_the_same_demo_talks_to_its_api(tmp_path, monkeypatch):
    from tests.provider.wire import WireServer, anthropic_stream

    server = WireServer()
    try:
        config = tmp_path / "opencode.yaml"
        config.write_text(f"provider:\n  anthropic:\n    base_url: {server.url}\n    api_key: sk-demo-test\n")
        monkeypatch.setenv("OPENCODE_NB_CONFIG", str(config))
        server.queue(anthropic_stream({"text": "The mean divides by n - 1; I would fix that."}),
                     anthropic_stream({"text": "Mean bug"}))
        out = io.StringIO()
        assert await demo("anthropic/claude-sonnet-4-6", out=out) == 0
        assert "model: anthropic/claude-sonnet-4-6" in out.getvalue()
        assert "build: The mean divides by n - 1" in out.getvalue()
        assert server.received[0].body["messages"][0]["content"][0]["text"].startswith("The average temperature")
    finally:
        server.close()


def test_demo_notebook_executes_the_quickstart_in_the_current_directory_and_cleans_up(tmp_path, monkeypatch):
    import nbformat

    from opencode_nb.demo import quickstart_path, run_notebook

    bundled = quickstart_path().with_name("quickstart.executed.ipynb")
    existed = bundled.exists()
    (tmp_path / "tmp").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # the kernel's temporary directory
    monkeypatch.setenv("OPENCODE_NB_DATA_DIR", str(tmp_path / "data"))
    out = io.StringIO()
    assert run_notebook(out=out) == 0
    target = tmp_path / "quickstart.executed.ipynb"
    assert f"wrote {target}" in out.getvalue()
    assert bundled.exists() == existed, "nothing is written into the package's notebooks"
    executed = nbformat.read(target, as_version=4)
    html = "".join(o.get("data", {}).get("text/html", "") for c in executed.cells for o in c.get("outputs", []))
    assert 'class="ocnb-transcript"' in html and "<code>scripted/demo</code>" in html
    assert '<details class="ocnb-child"' in html and "@explore — Survey the project" in html
    assert "allowed once" in html and "allowed by policy: nobody is present to ask" in html
    assert "Switch to the plan agent" in html and "plan_exit" in html
    assert "ocnb-todos" in html and "Run the self-check" in html
    assert "all checks passed" in html
    assert leftovers(tmp_path) == [], "the quickstart's project copy went with its kernel"


@pytest.mark.skipif(not isinstance(find_backend(), Backend), reason="no working bubblewrap on PATH here")
def test_the_demo_names_the_sandbox_its_commands_run_in(tmp_path):
    text = run_demo(tmp_path).stdout
    assert "\nsandbox: bubblewrap: shell commands run confined (sandbox: auto; " in text
    assert "without an OS sandbox" not in text


def test_without_bubblewrap_the_demo_says_none_and_its_first_command_says_so_once(tmp_path):
    text = run_demo(tmp_path, OPENCODE_NB_BWRAP=str(tmp_path / "no-bwrap")).stdout
    assert "\nsandbox: none: commands run unconfined — install bubblewrap (`apt-get install bubblewrap`" in text
    assert text.count("without an OS sandbox") == 1
    assert re.search(r"\n  ✓ bash [^\n]*\n {6}! Shell commands run without an OS sandbox here: OPENCODE_NB_BWRAP "
                     r"names \S+no-bwrap, which does not exist", text)
