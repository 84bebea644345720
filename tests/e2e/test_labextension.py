"""The JupyterLab extension in a real JupyterLab: the `opencode_nb` comm as labextension/PROTOCOL.md describes it,
and `%%agent` cells shown as markdown.

The kernel side here is plain Python in the notebook (no opencode_nb kernel code): cell 0 opens a comm to the
extension's target and collects whatever comes back; cell 1 runs `step.py`, which each test writes, and prints
one JSON value between `@@` marks. Requests are sent from one run of cell 1 and their replies read by a later
run, so every reply is handled while the kernel is idle.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

import opencode_nb

from .conftest import require_browser
from .lab import Lab

pytestmark = pytest.mark.e2e

SETUP = """\
import comm, json
print("a" * 3000)
inbox = []
link = comm.create_comm(target_name="opencode_nb", data={"hello": "kernel", "version": "e2e"})
link.on_msg(lambda msg: inbox.append(msg["content"]["data"]))

def send(request_id, action, **params):
    link.send({"request_id": request_id, "action": action, **params})

def reply(request_id):
    return next((m for m in inbox if m.get("reply_to") == request_id), None)

def show(value):
    print("@@" + json.dumps(value) + "@@")
"""
DRIVER = 'exec(open("step.py").read())'
AGENT = "%%agent\nSummarise the data frame in two sentences."
PLAIN = "x = 1"
BOOM = "raise ValueError('boom')"
NOTEBOOK = [SETUP, DRIVER, AGENT, PLAIN, BOOM]
SETUP_I, DRIVER_I, AGENT_I, PLAIN_I, BOOM_I = range(5)

MARKDOWN_MIME = "text/x-ipythongfm"
_SHOWN = re.compile(r"@@(.*)@@", re.S)

# Each cell's model type, mime type, and the language CodeMirror reports on its editor.
CELLS_JS = """() => {
  return window.jupyterapp.shell.currentWidget.content.widgets.map(w => ({
    type: w.model.type,
    mime: w.model.mimeType,
    language: w.editor?.host.querySelector('.cm-content')?.dataset.language ?? null,
  }));
}"""
NOTEBOOK_JS = "window.jupyterapp.shell.currentWidget.content"
SET_LANGUAGE_JS = f"(info) => {NOTEBOOK_JS}.model.setMetadata('language_info', info)"
SET_SOURCE_JS = f"([i, text]) => {NOTEBOOK_JS}.widgets[i].model.sharedModel.setSource(text)"
R_LANGUAGE = {"name": "R", "codemirror_mode": "r", "mimetype": "text/x-r-source"}
PYTHON_LANGUAGE = {"name": "python", "codemirror_mode": {"name": "ipython", "version": 3}}


# An IPython startup file: once `register-at-start` exists, every kernel that starts registers the target
# and writes what reaches it to hellos.jsonl, as a kernel whose IPython config loads opencode_nb would.
STARTUP = """\
import json, os
if os.path.exists("register-at-start"):
    from comm import get_comm_manager

    def _record(data):
        with open("hellos.jsonl", "a") as f:
            f.write(json.dumps(data) + "\\n")

    def _opened(c, msg):
        _record(msg["content"]["data"])
        c.on_msg(lambda m: _record(m["content"]["data"]))

    get_comm_manager().register_target("opencode_nb", _opened)
"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """As conftest's, with `window.jupyterapp` exposed for the mime type checks and the startup file above."""
    require_browser()
    ipython = tmp_path_factory.mktemp("ipython")
    startup = ipython / "profile_default" / "startup" / "00-target.py"
    startup.parent.mkdir(parents=True)
    startup.write_text(STARTUP)
    with Lab(tmp_path_factory.mktemp("lab-root"), env={"IPYTHONDIR": str(ipython)}, expose_app=True) as started:
        yield started


@pytest.fixture(scope="module")
def nb(lab: Lab) -> Lab:
    lab.write_notebook("ext.ipynb", NOTEBOOK)
    lab.open_notebook("ext.ipynb")
    lab.run_cell(SETUP_I, key="Control+Enter")
    lab.wait_cell_done(SETUP_I)
    return lab


def kernel(lab: Lab, code: str) -> Any:
    """Run `code` in the kernel through the driver cell; returns what it `show()`ed."""
    (lab.root / "step.py").write_text(code)
    lab.run_cell(DRIVER_I, key="Control+Enter")
    lab.wait_cell_done(DRIVER_I)
    lab.wait_output(DRIVER_I, _SHOWN)
    found = _SHOWN.search(lab.output_text(DRIVER_I))
    assert found, lab.output_text(DRIVER_I)
    return json.loads(found.group(1))


def request(lab: Lab, request_id: str, action: str, timeout: float = 20.0, **params: Any) -> dict[str, Any]:
    """Send one request from the kernel, then read its reply from later runs (the kernel idles in between)."""
    kernel(lab, f"send({request_id!r}, {action!r}, **{params!r}); show(None)")
    return until(lab, f"show(reply({request_id!r}))", timeout)


def until(lab: Lab, code: str, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = kernel(lab, code)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"nothing came within {timeout}s for: {code}")
        time.sleep(0.3)


def cell_ids(lab: Lab) -> list[str]:
    return [c["id"] for c in request(lab, f"ids-{time.monotonic_ns()}", "read_cells")["cells"]]


def test_the_kernel_gets_the_hello(nb: Lab) -> None:
    hello = until(nb, "show([m for m in inbox if 'hello' in m])")[0]
    assert hello["hello"] == "jupyterlab"
    assert hello["version"] == opencode_nb.__version__
    assert set(hello["capabilities"]) == {
        "read_cells", "insert_cells", "replace_cell", "delete_cells", "run_cells", "active_cell", "notify",
        "show_pending"}  # fmt: skip
    assert hello["path"] == "ext.ipynb"
    assert hello["frontend"].startswith("JupyterLab 4.")


def test_notify_shows_a_notification_whose_action_makes_its_cell_the_active_one(nb: Lab) -> None:
    plain = cell_ids(nb)[PLAIN_I]
    shown = request(nb, "notify-1", "notify", message="A run waits for your answer here.", cell_id=plain,
                    kind="warning")
    assert shown["ok"] is True, shown
    toast = nb.page.locator(".Toastify__toast", has_text="A run waits for your answer here.")
    toast.get_by_role("button", name="Show the cell").click()
    # Read in the page: asking the kernel runs the driver cell, which makes that one active.
    assert nb.page.evaluate(f"() => {NOTEBOOK_JS}.activeCellIndex") == PLAIN_I


def test_notify_refuses_an_unknown_cell_or_kind_and_shows_nothing(nb: Lab) -> None:
    missing = request(nb, "notify-3", "notify", message="Not shown.", cell_id="no-such-cell")
    wrong = request(nb, "notify-4", "notify", message="Not shown either.", kind="loud")
    assert missing["ok"] is False and "no-such-cell" in missing["error"]
    assert wrong["ok"] is False and "kind must be one of info, warning, error, success" in wrong["error"]
    assert nb.page.locator(".Toastify__toast", has_text="Not shown").count() == 0


def test_read_cells_describes_the_live_notebook(nb: Lab) -> None:
    everything = request(nb, "read-1", "read_cells", max_output_chars=100)
    assert everything["ok"] is True and everything["reply_to"] == "read-1"
    assert everything["path"] == "ext.ipynb"
    assert everything["total"] == 5
    cells = everything["cells"]
    assert [c["source"] for c in cells] == NOTEBOOK
    assert all(set(c) == {"id", "cell_type", "source", "metadata", "execution_count", "outputs", "running"}
               for c in cells)  # fmt: skip
    assert [c["cell_type"] for c in cells] == ["code"] * 5
    # The driver cell sent the request, so it was the one running when the answer was made.
    assert everything["running_cell"] == cells[DRIVER_I]["id"]
    assert cells[DRIVER_I]["running"] is True
    assert everything["active_cell"] == cells[DRIVER_I]["id"]
    (printed,) = cells[SETUP_I]["outputs"]
    assert printed["output_type"] == "stream"
    assert printed["text"] == "a" * 100 + "…[2901 more characters]"

    some = request(nb, "read-2", "read_cells", cell_ids=[cells[PLAIN_I]["id"]])
    assert [c["source"] for c in some["cells"]] == [PLAIN]
    assert some["total"] == 5

    missing = request(nb, "read-3", "read_cells", cell_ids=["no-such-cell"])
    assert missing["ok"] is False
    assert "no-such-cell" in missing["error"]


def test_insert_replace_and_delete_cells(nb: Lab) -> None:
    inserted = request(nb, "insert-1", "insert_cells", after=None, cells=[
        {"cell_type": "code", "source": "print('inserted')", "metadata": {}},
        {"cell_type": "markdown", "source": "## Plan step one", "metadata": {"tags": ["plan"]}},
    ])  # fmt: skip
    assert inserted["ok"] is True, inserted
    assert inserted["index"] == 5
    code_id, md_id = inserted["ids"]
    nb.cell("print('inserted')").wait_for()
    assert nb.cells().count() == 7
    assert cell_ids(nb)[5:] == [code_id, md_id]

    replaced = request(nb, "replace-1", "replace_cell", cell_id=code_id, source="print('replaced')")
    assert replaced["ok"] is True, replaced
    assert replaced["previous"]["source"] == "print('inserted')"
    nb.cell("print('replaced')").wait_for()

    # A new type swaps in a new cell under the same id.
    retyped = request(nb, "replace-4", "replace_cell", cell_id=md_id, cell_type="raw", source="raw text")
    assert retyped["ok"] is True, retyped
    assert retyped["previous"]["cell_type"] == "markdown"
    (now,) = request(nb, "read-5", "read_cells", cell_ids=[md_id])["cells"]
    assert (now["cell_type"], now["source"], now["metadata"]) == ("raw", "raw text", {"tags": ["plan"]})

    bad = request(nb, "replace-2", "replace_cell", cell_id="nope", source="x")
    assert bad["ok"] is False and "nope" in bad["error"]
    bad_type = request(nb, "replace-3", "replace_cell", cell_id=code_id, cell_type="python")
    assert bad_type["ok"] is False and "cell_type" in bad_type["error"]

    deleted = request(nb, "delete-1", "delete_cells", cell_ids=[md_id, code_id])
    assert deleted["ok"] is True, deleted
    assert [(d["id"], d["index"]) for d in deleted["deleted"]] == [(md_id, 6), (code_id, 5)]
    assert deleted["deleted"][1]["source"] == "print('replaced')"
    assert deleted["deleted"][0]["cell_type"] == "raw"
    deadline = time.monotonic() + 10
    while nb.cells().count() != 5 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert nb.cells().count() == 5
    assert request(nb, "read-4", "read_cells")["total"] == 5


def test_active_cell_is_the_selected_one(nb: Lab) -> None:
    ids = cell_ids(nb)
    active = request(nb, "active-1", "active_cell")
    assert active == {"reply_to": "active-1", "ok": True, "cell_id": ids[DRIVER_I], "index": DRIVER_I}


def test_run_cells_runs_in_order_and_reports_each_cell(nb: Lab) -> None:
    inserted = request(nb, "insert-2", "insert_cells", after=None, cells=[
        {"cell_type": "code", "source": "print(40 + 2)"},
        {"cell_type": "markdown", "source": "## Ran by the agent"},
    ])  # fmt: skip
    code_id, md_id = inserted["ids"]
    ran = request(nb, "run-1", "run_cells", cell_ids=[code_id, md_id], checkpoint=True)
    assert ran["ok"] is True, ran
    code, md = ran["results"]
    assert code["id"] == code_id and code["status"] == "ok" and isinstance(code["execution_count"], int)
    assert code["outputs"] == [{"output_type": "stream", "name": "stdout", "text": "42\n"}]
    assert md == {"id": md_id, "status": "ok", "execution_count": None, "outputs": []}
    events = kernel(nb, "show([m for m in inbox if m.get('event') == 'cell_done' and m['request_id'] == 'run-1'])")
    assert [e["result"]["id"] for e in events] == [code_id, md_id]
    nb.wait_output("print(40 + 2)", "42")
    nb.notebook.locator(".jp-MarkdownOutput h2", has_text="Ran by the agent").wait_for()
    # checkpoint: the notebook was saved with the new cells and their outputs
    saved = nb.read_notebook("ext.ipynb")
    assert [c["id"] for c in saved["cells"]][-2:] == [code_id, md_id]

    ids = cell_ids(nb)
    failed = request(nb, "run-2", "run_cells", cell_ids=[ids[BOOM_I], ids[PLAIN_I]])
    assert failed["ok"] is True, failed
    assert [(r["id"], r["status"]) for r in failed["results"]] == [(ids[BOOM_I], "error"), (ids[PLAIN_I], "aborted")]
    assert failed["results"][0]["outputs"][0]["ename"] == "ValueError"
    assert nb.prompt(PLAIN_I) == "[ ]"  # stopped at the error: never ran

    unknown = request(nb, "run-3", "run_cells", cell_ids=[ids[PLAIN_I], "ghost"])
    assert unknown["ok"] is False and "ghost" in unknown["error"]
    request(nb, "delete-2", "delete_cells", cell_ids=[code_id, md_id])


def test_agent_cells_are_highlighted_as_markdown(nb: Lab) -> None:
    page = nb.page

    def cells() -> list[dict[str, Any]]:
        return page.evaluate(CELLS_JS)

    def settled(check: Any, timeout: float = 10.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while not check(state := cells()):
            if time.monotonic() > deadline:
                raise AssertionError(state)
            time.sleep(0.1)
        return state

    state = settled(lambda s: s[AGENT_I]["language"] == "markdown")
    assert state[AGENT_I]["type"] == "code" and state[AGENT_I]["mime"] == MARKDOWN_MIME
    python = state[PLAIN_I]["mime"]
    assert python != MARKDOWN_MIME and state[PLAIN_I]["language"] == "python"

    # JupyterLab resets every code cell's mime type when the kernel's language changes.
    page.evaluate(SET_LANGUAGE_JS, R_LANGUAGE)
    state = settled(lambda s: s[PLAIN_I]["mime"] != python)
    assert state[AGENT_I]["mime"] == MARKDOWN_MIME and state[AGENT_I]["language"] == "markdown"
    page.evaluate(SET_LANGUAGE_JS, PYTHON_LANGUAGE)
    state = settled(lambda s: s[PLAIN_I]["mime"] == python)
    assert state[AGENT_I]["mime"] == MARKDOWN_MIME

    # Editing the source switches the highlighting both ways.
    page.evaluate(SET_SOURCE_JS, [PLAIN_I, "%%agent\nnow a prompt"])
    settled(lambda s: s[PLAIN_I]["mime"] == MARKDOWN_MIME and s[PLAIN_I]["language"] == "markdown")
    page.evaluate(SET_SOURCE_JS, [PLAIN_I, PLAIN])
    settled(lambda s: s[PLAIN_I]["mime"] == python and s[PLAIN_I]["language"] == "python")


REGISTER_TARGET = """\
reopened = []
def opened(c, msg):
    reopened.append(msg["content"]["data"])
    c.on_msg(lambda m: reopened.append(m["content"]["data"]))
comm.get_comm_manager().register_target("opencode_nb", opened)
show(None)
"""


def test_a_reload_reopens_the_comm_to_the_kernels_target(nb: Lab) -> None:
    kernel(nb, REGISTER_TARGET)
    nb.save()
    nb.reload()
    hellos = until(nb, "show([m for m in reopened if m.get('hello') == 'jupyterlab'])")
    assert hellos[0]["path"] == "ext.ipynb"
    assert hellos[0]["version"] == opencode_nb.__version__


def test_a_restarted_kernel_gets_the_hello(nb: Lab) -> None:
    (nb.root / "register-at-start").touch()
    hellos = nb.root / "hellos.jsonl"
    nb.page.evaluate("() => { void window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart(); }")
    deadline = time.monotonic() + 30
    while not hellos.exists() or '"jupyterlab"' not in hellos.read_text():
        assert time.monotonic() < deadline, "no hello reached the restarted kernel"
        time.sleep(0.2)
    hello = next(h for h in map(json.loads, hellos.read_text().splitlines()) if h.get("hello") == "jupyterlab")
    assert hello["path"] == "ext.ipynb" and set(hello["capabilities"]) >= {"read_cells", "run_cells"}
