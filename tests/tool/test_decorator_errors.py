"""`@tool` refuses a function it cannot offer with one line that says what to change: IPython shows the
exception's own line (`_render_traceback_`), not a traceback through opencode_nb's files."""

from __future__ import annotations

import socket

import pytest

from opencode_nb import tool
from opencode_nb.tool.decorator import UnusableFunction, UnusableToolName


def test_a_parameter_no_model_can_fill_is_one_line_naming_the_parameter():
    with pytest.raises(UnusableFunction) as refused:
        @tool
        def fetch(sock: socket.socket) -> str: ...
    assert isinstance(refused.value, TypeError)
    [line] = refused.value._render_traceback_()
    assert line.startswith("UnusableFunction: @tool: parameter `sock` of fetch is annotated socket")
    assert refused.value.__cause__ is None and refused.value.__suppress_context__


def test_a_taken_or_empty_name_is_one_line_too():
    with pytest.raises(UnusableToolName) as refused:
        tool(name="bash")(lambda command: command)
    assert isinstance(refused.value, ValueError)
    assert refused.value._render_traceback_() == [f"UnusableToolName: {refused.value}"]
    with pytest.raises(UnusableToolName, match="cannot name a tool"):
        tool(name="...")(lambda: None)
    with pytest.raises(UnusableFunction, match="takes a function"):
        tool(print)
