"""The person knows whether shell commands are sandboxed: `%agent config` says which sandbox is in force, and
on a machine without one the first command of a session says so once, on its card, in a real kernel."""

from __future__ import annotations

import os
import re

import pytest

from opencode_nb.sandbox.policy import BWRAP_ENV, Backend, find_backend

from ..test_cards_in_kernel import live_cards

pytestmark = pytest.mark.timeout(120)
MISSING = {"OPENCODE_NB_BWRAP": "/nonexistent/bwrap"}
needs_bwrap = pytest.mark.skipif(not isinstance(find_backend(os.environ.get(BWRAP_ENV)), Backend),
                                 reason="no working bubblewrap here: what a sandboxed machine shows cannot be seen")
NOTE = "ocnb-sandbox-note"


def bash(command: str) -> dict:
    return {"tool_calls": [{"name": "bash", "input": {"command": command}}]}


@needs_bwrap
def test_agent_config_names_bubblewrap_when_it_works(kernel):
    fe = kernel([], permission={"*": "allow"})
    line = next(x for x in fe.text(fe.run_id("%agent config")).splitlines() if "OS sandbox" in x)
    assert line.startswith("# OS sandbox of shell commands: bubblewrap: shell commands run confined")
    assert "sandbox: auto" in line and "bwrap" in line


def test_agent_config_says_none_unconfined_and_how_to_get_one_without_bubblewrap(kernel):
    fe = kernel([], permission={"*": "allow"}, env=MISSING)
    text = fe.text(fe.run_id("%agent config"))
    assert re.search(r"# OS sandbox of shell commands: none: commands run unconfined — install bubblewrap .*"
                     r"\(sandbox: auto; OPENCODE_NB_BWRAP names /nonexistent/bwrap, which does not exist\)", text)


def test_agent_config_states_the_setting_that_turned_the_sandbox_off(kernel):
    fe = kernel([], permission={"*": "allow"}, extra={"sandbox": "off"})
    assert "# OS sandbox of shell commands: none: commands run unconfined (sandbox: off" in fe.text(
        fe.run_id("%agent config"))


def test_without_bubblewrap_only_the_first_command_of_a_session_carries_the_note(kernel):
    fe = kernel([bash("echo one"), bash("echo two"), {"text": "Both ran."}, bash("echo three"), {"text": "Ran."},
                 bash("echo four"), {"text": "Ran."}], permission={"*": "allow"}, env=MISSING)
    first = fe.execute("%%agent\nrun two commands")
    assert fe.done(first, 60)["content"]["status"] == "ok"
    cards = live_cards(fe)
    assert len(cards) == 2
    [noted] = [card for card in cards if NOTE in card]
    assert "one" in noted and "without an OS sandbox" in noted and "install bubblewrap" in noted
    assert fe.html(first).count(NOTE) == 1, "the saved transcript shows it once too"
    assert "without an OS sandbox" not in re.sub(r'<div class="ocnb-sandbox-note".*?</div>', "", fe.html(first)), \
        "the note is not repeated in the command's output"
    again = fe.execute("%%agent\none more")
    assert fe.done(again, 60)["content"]["status"] == "ok"
    assert "three" in fe.html(again) and NOTE not in fe.html(again), "the same session was told already"
    fresh = fe.execute("%%agent --new\nand in a new session")
    assert fe.done(fresh, 60)["content"]["status"] == "ok"
    assert "four" in fe.html(fresh) and fe.html(fresh).count(NOTE) == 1, "a new session is told again"


@needs_bwrap
def test_with_bubblewrap_no_card_carries_the_note(kernel):
    fe = kernel([bash("echo one"), {"text": "Ran."}], permission={"*": "allow"})
    msg = fe.execute("%%agent\nrun it")
    assert fe.done(msg, 60)["content"]["status"] == "ok"
    [card] = live_cards(fe)
    assert "one" in card and NOTE not in card and NOTE not in fe.html(msg)
