"""What a notebook in `play/` of a repository asks, and the record of each answer, name things in the person's
words: a file as the card names it (`notes.md`, `../src/stats.py`), never from the repository's root
(`play/notes.md`), and a shell line once, as it was written."""

from __future__ import annotations

import os
import re
import subprocess

import pytest
import yaml

from .frontend import FakeFrontend

pytestmark = pytest.mark.timeout(120)

SCRIPT = [
    {"tool_calls": [{"name": "write", "input": {"path": "notes.md", "content": "# findings\n"}}]},
    {"tool_calls": [{"name": "bash", "input": {"command": "echo b > b.txt", "description": "Make b.txt"}}]},
    {"tool_calls": [{"name": "read", "input": {"path": "../src/stats.py"}}]},
    {"text": "All three done."},
]


@pytest.fixture
def asking_notebook_in_play(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "src" / "stats.py").write_text("def mean(values):\n    return sum(values) / len(values)\n")
    play = repo / "play"
    play.mkdir()
    (play / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "scripted/test", "permission": {"read": "ask"}, "provider": {"scripted": {"script": SCRIPT}}}))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("OPENCODE_NB_") and k not in ("JPY_SESSION_NAME", "CI")}
    env.update({"OPENCODE_NB_DATA_DIR": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    frontend = FakeFrontend(str(play), env)
    assert frontend.run("%load_ext opencode_nb")["content"]["status"] == "ok"
    yield frontend, play
    frontend.close()


def asks_shown(fe: FakeFrontend) -> dict[str, str]:
    """The text of every ask put on the page so far, by widget, tags removed."""
    return {cid: re.sub(r"<[^>]+>", " ", str(state.get("value"))) for cid, state in list(fe.models.items())
            if 'class="ocnb-ask"' in str(state.get("value", ""))}


def allow_the_next(fe: FakeFrontend, answered: dict[str, str]) -> str:
    """Wait for an ask not answered yet, click its "Allow once"; returns what the ask says."""
    def new_ask() -> tuple[str, str] | None:
        fresh = {cid: text for cid, text in asks_shown(fe).items() if cid not in answered}
        button = next((b for b in fe.buttons("Allow once") if b not in answered), None)
        return (button, *next(iter(fresh.items()))) if fresh and button else None

    button, ask, text = fe.wait_for(new_ask, what="a new ask")
    answered.update({button: "", ask: text})
    fe.click(button)
    return text


def test_asks_and_their_records_name_paths_from_the_notebook_and_a_command_once(asking_notebook_in_play):
    fe, play = asking_notebook_in_play
    msg = fe.execute("%%agent\nwrite, make and read")
    answered: dict[str, str] = {}
    write_ask, bash_ask, read_ask = (allow_the_next(fe, answered) for _ in range(3))
    assert fe.done(msg, timeout=60)["content"]["status"] == "ok"
    assert (play / "notes.md").exists() and (play / "b.txt").exists()

    assert " notes.md " in write_ask and "play/notes.md" not in write_ask
    assert bash_ask.count("echo b") == 1, f"the line is listed once, as written: {bash_ask}"
    assert "echo b &gt; b.txt" in bash_ask
    assert "../src/stats.py" in read_ask and " src/stats.py" not in read_ask

    text = fe.text(msg)
    assert "build asked for edit notes.md: allowed once" in text
    assert "build asked for bash echo b > b.txt: allowed once" in text
    assert "build asked for read ../src/stats.py: allowed once" in text
    assert "play/notes.md" not in text and "echo b > b.txt, echo b" not in text
    html = fe.html(msg)
    assert "<code>notes.md</code> — allowed once" in html and "play/notes.md" not in html
