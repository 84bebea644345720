"""The python tool in a real kernel prints a key from `os.environ`: what it printed is redacted.

Live runs share the kernel's process and so its environment, as does a copy-on-write fork: nothing can keep
the key from such code, and redacting what it prints, on its way to the store, the views and the model, is
what protects it there. A spawned worker is given an environment without keys (tests/safety/test_secrets.py).
"""

from __future__ import annotations

import sys

import pytest

from ..kernel.conftest import kernel  # noqa: F401  (fixture)

pytestmark = [pytest.mark.timeout(120), pytest.mark.skipif(sys.platform == "win32", reason="POSIX kernels")]

KEY = "sk-ant-kernel-8c2e6a0f4b9d1e7c3a5f"
PRINT_KEY = [{"tool_calls": [{"name": "python", "input": {
    "code": "import os\nkey = os.environ['ANTHROPIC_API_KEY']\nprint(key, key.upper())\nlen(key)"}}]},
    {"text": "printed it"}]


def tool_output(fe) -> str:
    msg = fe.run_id("import opencode_nb.kernel as k\nws = k.current().workspace()\n"
                    "[p] = [p for m in ws.sessions.messages(k.current().session_id) for p in m.parts "
                    "if p.type == 'tool']\nprint(p.state.status, p.state.output, p.state.metadata)")
    return fe.text(msg)


@pytest.mark.parametrize("permission", [{"python": "allow"}, {"python": {"live": "deny", "sandbox": "allow"}}],
                         ids=["live", "sandboxed"])
def test_a_key_printed_by_python_in_the_kernel_is_redacted(kernel, permission):  # noqa: F811
    fe = kernel(PRINT_KEY, permission=permission, render_views=False,
                env={"OPENCODE_NB_HEADLESS": "1", "ANTHROPIC_API_KEY": KEY})
    cell = fe.run_id("%agent print the key")
    output = tool_output(fe)
    assert output.startswith("completed") and "[redacted: ANTHROPIC_API_KEY] [redacted: ANTHROPIC_API_KEY]" in output
    assert str(len(KEY)) in output, "the code did run with the key in its environment"
    for text in (output, fe.text(cell)):
        assert KEY not in text and KEY.upper() not in text
