"""In a notebook, `@tool` on a function it cannot offer fails the cell with one line, not a traceback."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(90)

BAD_TOOL = '''
import socket
from opencode_nb import tool

@tool
def fetch(sock: socket.socket, n: int) -> str:
    """Read n bytes."""
    return sock.recv(n).decode()
'''


def test_a_parameter_no_model_can_fill_fails_the_cell_with_one_line(kernel):
    fe = kernel([], render_views=False, env={"OPENCODE_NB_HEADLESS": "1"})
    msg = fe.execute(BAD_TOOL)
    reply = fe.done(msg)["content"]
    assert reply["status"] == "error" and reply["ename"] == "UnusableFunction"
    assert reply["traceback"] == [f"UnusableFunction: {reply['evalue']}"]
    assert reply["evalue"].startswith("@tool: parameter `sock` of fetch is annotated socket, which a model cannot "
                                      "send as JSON")
    shown = [o for o in fe.outputs(msg) if o.get("msg_type") == "error" or o.get("output_type") == "error"]
    assert all("opencode_nb/" not in "".join(o.get("content", o).get("traceback", [])) for o in shown)
