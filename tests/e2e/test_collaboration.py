"""Two people on one notebook under real-time collaboration (jupyter-collaboration): Alice and Bob, each in a
browser of their own, both on the shared document and the one kernel.

An agent Alice runs changes the notebook once, in the shared document, and both pages see that change once;
the card's Undo takes it back for both. Bob typing in another cell meanwhile loses nothing, on the page or in
the file, and nothing writes the file behind the server's back (the server would then reload the document
over what people typed). On a hub server only its owner answers the agent's questions: both see the prompt,
Bob's click is refused and says whose it is, Alice's is taken and recorded as hers.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml

from .conftest import require_browser
from .lab import Lab

pytestmark = pytest.mark.e2e

T = TypeVar("T")

OWNER = "alice"
AGENT_SOURCE = "print('written by the agent')"
BOB_TYPES = "  # Bob was here"
BOB_CELL = "# Bob's notes"

# The record of the answer names who gave it: her name, and her username on the server.
ALICE_ALLOWED = re.compile(r"allowed once by Alice \(alice\)", re.IGNORECASE)

# What the server logs when the file changed behind its back and it overwrote the shared document with the file.
RELOADED = "Out-of-band changes"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """Alice's page, on a server with collaboration on, that JupyterHub would have started for Alice."""
    require_browser()
    env = {"OPENCODE_NB_DATA_DIR": str(tmp_path_factory.mktemp("ocnb-data")), "JUPYTERHUB_USER": OWNER}
    with Lab(tmp_path_factory.mktemp("lab-root"), env=env, expose_app=True, collaborative=True,
             user=OWNER) as started:
        yield started


@pytest.fixture(scope="module")
def bob(lab: Lab) -> Iterator[Lab]:
    """Bob's page on the same server: another browser, another person."""
    page = lab.open_page(user="bob")
    yield page
    page.close()


@pytest.fixture(autouse=True)
def _bobs_screenshot_on_failure(request: pytest.FixtureRequest, bob: Lab, tmp_path: Path) -> Iterator[None]:
    """conftest photographs Alice's page when a test fails; Bob's page is as telling."""
    yield
    rep = getattr(request.node, "_e2e_rep_call", None)
    if rep is not None and rep.failed and bob.page is not None:
        shot = Path(os.environ.get("OPENCODE_NB_E2E_ARTIFACTS", tmp_path)) / f"{request.node.name}-bob.png"
        try:
            bob.screenshot(shot)
            print(f"\nBob's page: {shot}\nBob's console (last 20):\n" + "\n".join(bob.console[-20:]))
        except Exception as error:  # the page may be gone; never mask the real failure
            print(f"\nBob's screenshot failed: {error}")


def configure(lab: Lab, script: list[dict[str, Any]], permission: dict[str, str]) -> None:
    (lab.root / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "scripted/e2e", "permission": permission, "provider": {"scripted": {"script": script}}}))


def cell_ids(lab: Lab, name: str) -> list[str]:
    return [cell["id"] for cell in json.loads((lab.root / name).read_text())["cells"]]


def eventually(probe: Callable[[], T], ok: Callable[[T], bool], what: str, timeout: float = 20.0) -> T:
    """Wait until `ok(probe())`; the last value read is in the failure, which says what never happened."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if ok(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}; last seen: {value!r}")
        time.sleep(0.1)


def sources(page: Lab) -> list[str]:
    """The cells' sources in the page's notebook model: under collaboration, the shared document as this page
    has it (every cell, drawn on the screen or not)."""
    return page.page.evaluate(
        """(id) => {
            const panel = [...window.jupyterapp.shell.widgets('main')].find(w => w.id === id);
            return [...panel.content.model.cells].map(cell => cell.sharedModel.getSource());
        }""",
        page._panel_id,
    )


def drawn(page: Lab, text: str) -> int:
    """How many cells on the page's screen show `text` in their input."""
    return page.cells().filter(has=page.page.locator(".jp-InputArea", has_text=text)).count()


def dialogs(page: Lab) -> list[str]:
    """The dialogs open in the page (a "File Changed" one would mean the file was written behind its back)."""
    return page.page.locator(".jp-Dialog").all_inner_texts()


def run(page: Lab, index: int) -> None:
    page.run_cell(index, key="Control+Enter")


def type_into(page: Lab, cell_text: str, text: str) -> None:
    """Click at the end of the cell's first line and type, key by key, as a person does."""
    editor = page.cell(cell_text).locator(".cm-content")
    editor.click()
    page.page.keyboard.press("End")
    page.page.keyboard.type(text, delay=40)
    page.page.keyboard.press("Escape")  # command mode: the typing is done


def test_an_agents_edits_and_their_undo_reach_both_pages_once_and_bobs_typing_survives(lab: Lab, bob: Lab) -> None:
    name = "together.ipynb"
    lab.write_notebook(name, ["%load_ext opencode_nb", BOB_CELL, "%%agent\nAdd a cell and raise the target.",
                              "target = 1"])
    target = cell_ids(lab, name)[3]
    configure(lab, [
        {"text": "Adding a cell.", "tool_calls": [
            {"name": "notebook_edit", "input": {"action": "insert", "source": AGENT_SOURCE, "cell_type": "code"}}]},
        # A pause between the two edits, for Bob to type while the run is under way.
        {"text": "Thinking.", "tool_calls": [{"name": "bash", "input": {"command": "sleep 3",
                                                                         "description": "Wait a moment"}}]},
        {"text": "Raising the target.", "tool_calls": [
            {"name": "notebook_edit", "input": {"action": "replace", "cell_id": target, "source": "target = 2"}}]},
        {"text": "Added a cell and raised the target."},
    ], {"*": "allow"})
    lab.open_notebook(name)
    bob.open_notebook(name)
    assert lab.page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.collaborative")
    run(lab, 0)
    lab.wait_cell_done(0)

    run(lab, 2)
    type_into(bob, BOB_CELL, BOB_TYPES)
    assert lab.prompt(2) == "[*]", "Bob typed while the agent was at work"
    lab.wait_cell_done(2, timeout=60)
    lab.wait_output(2, "Added a cell and raised the target.")

    for page in (lab, bob):
        seen = eventually(lambda page=page: sources(page), lambda s: "target = 2" in s and BOB_CELL + BOB_TYPES in s,
                          f"{page.user}'s page has the agent's edit and Bob's typing")
        assert seen.count(AGENT_SOURCE) == 1, f"{page.user}'s page has the agent's cell once: {seen}"
        assert seen == ["%load_ext opencode_nb", BOB_CELL + BOB_TYPES, "%%agent\nAdd a cell and raise the target.",
                        AGENT_SOURCE, "target = 2"], f"{page.user}'s page"
        assert drawn(page, AGENT_SOURCE) == 1, f"{page.user}'s page draws the agent's cell once"

    bar = lab.cell(2).locator(".ocnb-undo")
    bar.locator(".ocnb-undo-button").wait_for(timeout=15_000)
    bar.locator(".ocnb-undo-button").click()
    bar.locator(".ocnb-undone").wait_for(timeout=15_000)
    expected = ["%load_ext opencode_nb", BOB_CELL + BOB_TYPES, "%%agent\nAdd a cell and raise the target.",
                "target = 1"]
    for page in (lab, bob):
        eventually(lambda page=page: sources(page), lambda s: s == expected,
                   f"{page.user}'s page is back to the notebook before the run, with Bob's typing")
        assert drawn(page, AGENT_SOURCE) == 0, f"{page.user}'s page no longer draws the agent's cell"

    def saved() -> list[str]:
        return ["".join(cell["source"]) for cell in lab.saved_cells(name)]

    eventually(saved, lambda s: s == expected, "the server saved the undone notebook with Bob's typing")
    time.sleep(2)  # past the server's save delay and file poll: a late writer would show now
    assert saved() == expected
    for page in (lab, bob):
        assert dialogs(page) == [], f"{page.user}'s page asked nothing about the file"
        assert sources(page) == expected, f"{page.user}'s page kept everything"
    assert RELOADED not in lab.log_tail(10_000), "nothing wrote the file behind the server's back"


def test_only_the_owner_answers_the_agents_question_and_the_record_says_who(lab: Lab, bob: Lab) -> None:
    name = "asks.ipynb"
    lab.write_notebook(name, ["%load_ext opencode_nb", "%%agent\nAdd a cell."])
    configure(lab, [
        {"text": "Adding a cell.", "tool_calls": [
            {"name": "notebook_edit", "input": {"action": "insert", "source": AGENT_SOURCE, "cell_type": "code"}}]},
        {"text": "Added the cell."},
    ], {"*": "allow", "notebook_edit": "ask"})
    lab.open_notebook(name)
    bob.open_notebook(name)
    bob.trust_notebook()  # else Alice's run's outputs, the prompt among them, are only text in Bob's page
    run(lab, 0)
    lab.wait_cell_done(0)
    run(lab, 1)

    allow = {page.user: page.cell(1).locator("button.jupyter-button:visible", has_text="Allow once")
             for page in (lab, bob)}
    for page in (lab, bob):
        button = allow[page.user]
        button.wait_for(timeout=30_000)
        assert button.count() == 1, f"{page.user}'s page shows the prompt once"
        assert "Only alice (this server's owner) can answer." in page.output_text(1), "the prompt says who answers"

    allow["bob"].click()
    refused = bob.cell(1).locator(".ocnb-approval-refused")
    refused.wait_for(timeout=15_000)
    said = " ".join(refused.inner_text().split())
    assert "Only alice, who owns this server, can answer" in said and "Bob (bob)" in said, said
    time.sleep(1)  # the refused click goes no further
    assert lab.prompt(1) == "[*]", "the agent still waits for an answer"
    for page in (lab, bob):
        assert AGENT_SOURCE not in sources(page), f"nothing was inserted in {page.user}'s page"
    assert allow["alice"].count() == 1, "Alice can still answer"

    allow["alice"].click()
    lab.wait_cell_done(1, timeout=60)
    lab.wait_output(1, "Added the cell.")
    lab.wait_output(1, ALICE_ALLOWED)
    for page in (lab, bob):
        seen = eventually(lambda page=page: sources(page), lambda s: AGENT_SOURCE in s,
                          f"the agent's cell reached {page.user}'s page")
        assert seen.count(AGENT_SOURCE) == 1, f"{page.user}'s page has the agent's cell once"
    bob.wait_output(1, ALICE_ALLOWED)  # Bob's page reads the same record
