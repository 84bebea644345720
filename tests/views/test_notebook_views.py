"""How the notebook tools' calls and prompts are shown: cells named by id, the diff or the sources to approve.

These are view tests kept beside the tools' own (the views are pure functions of stored parts and requests).
"""

from __future__ import annotations

import pytest

from opencode_nb.permission.events import PermissionRequest
from opencode_nb.session.models import Attachment, ToolCompleted, ToolPart, ToolPending, ToolRunning
from opencode_nb.views.asks import permission_html
from opencode_nb.views.labels import summary_title, tool_title
from opencode_nb.views.render import tool_card_html


def call(tool: str, tool_input: dict, state=None) -> ToolPart:
    return ToolPart(session_id="s", message_id="m", call_id="c", tool=tool,
                    state=state or ToolRunning(input=tool_input, started_at=1.0))


@pytest.mark.parametrize(("tool", "tool_input", "title"), [
    ("notebook_edit", {"action": "insert", "after": "abc123", "source": "x"}, "insert below [abc123]"),
    ("notebook_edit", {"action": "insert", "source": "x"}, "insert below the agent's cell"),
    ("notebook_edit", {"action": "replace", "cell_id": "abc123", "source": "x"}, "replace [abc123]"),
    ("notebook_edit", {"action": "delete", "cell_id": "abc123"}, "delete [abc123]"),
    ("notebook_run", {"cell_ids": ["a", "b"]}, "run [a], [b]"),
    ("notebook_read", {"cell_ids": ["a"]}, "cells [a]"),
    ("notebook_read", {}, "all cells"),
])
def test_a_notebook_call_is_labelled_by_its_action_and_cell_ids(tool, tool_input, title):
    assert tool_title(call(tool, tool_input)) == title
    assert summary_title({"tool": tool, "status": "running", "input": tool_input}) == title
    html = tool_card_html(call(tool, tool_input), now=2.0)
    assert f"<b>{tool}</b>" in html and title.replace("'", "&#x27;") in html


def test_a_pending_call_without_input_has_an_empty_label():
    assert tool_title(call("notebook_edit", {}, ToolPending())) == ""
    assert tool_title(call("notebook_edit", {"action": "delete"})) == "delete"


def test_the_edit_prompt_shows_where_and_the_cells_diff():
    request = PermissionRequest(id="p", session_id="s", agent="build", permission="notebook_edit",
                                patterns=["insert"], always=["insert"],
                                metadata={"where": "below cell abc123", "diff": "--- a/new code cell\n+++ b/new "
                                          "code cell\n@@ -0,0 +1 @@\n+print(1)\n"})
    html = permission_html(request)
    assert "below cell abc123" in html and "+print(1)" in html and "rgba(67,160,71" in html


def test_the_run_prompt_shows_each_cells_source_under_its_id():
    request = PermissionRequest(id="p", session_id="s", agent="build", permission="notebook_run",
                                patterns=["a", "b"], always=["a", "b"],
                                metadata={"cells": [{"id": "a", "cell_type": "code", "source": "total = 1"},
                                                    {"id": "b", "cell_type": "markdown", "source": "# <Notes>"}]})
    html = permission_html(request)
    assert html.index("[a]") < html.index("total") < html.index("[b]") < html.index("# &lt;Notes&gt;")


def test_a_finished_run_shows_its_images_like_python_does():
    state = ToolCompleted(input={"cell_ids": ["plot"]}, output="Ran 1 cell", title="run [plot]", started_at=1.0,
                          ended_at=2.0, attachments=[Attachment(mime="image/png", url="data:image/png;base64,iVBOR")])
    assert '<img src="data:image/png;base64,iVBOR"' in tool_card_html(call("notebook_run", {}, state))
