"""The python tool in a real kernel prints a key it found: what it printed is redacted.

Live runs share the kernel's process and so its environment. A copy-on-write fork has the key taken out of
its environment, but the kernel's memory is its to read (the environment the kernel started with, under
/proc/self/environ, or a provider client's settings): nothing can keep the key from such code, and redacting
what it prints, on its way to the store, the views and the model, is what protects it there. A spawned worker
is given an environment without keys (tests/safety/test_secrets.py).
"""

from __future__ import annotations

import sys

import pytest

from ..kernel.conftest import kernel  # noqa: F401  (fixture)

pytestmark = [pytest.mark.timeout(120), pytest.mark.skipif(sys.platform == "win32", reason="POSIX kernels")]

KEY = "sk-ant-kernel-8c2e6a0f4b9d1e7c3a5f"
FIND_KEY = ("import os\nprint('in environ:', 'ANTHROPIC_API_KEY' in os.environ)\n"
            "started = dict(v.split('=', 1) for v in open('/proc/self/environ').read().split('\\0') if '=' in v)\n"
            "key = started['ANTHROPIC_API_KEY']\nprint(key, key.upper(), key[::-1])\nlen(key)")


def print_key(code: str) -> list[dict]:
    return [{"tool_calls": [{"name": "python", "input": {"code": code}}]}, {"text": "printed it"}]


def tool_output(fe) -> str:
    msg = fe.run_id("import opencode_nb.kernel as k\nws = k.current().workspace()\n"
                    "[p] = [p for m in ws.sessions.messages(k.current().session_id) for p in m.parts "
                    "if p.type == 'tool']\nprint(p.state.status, p.state.output, p.state.metadata)")
    return fe.text(msg)


@pytest.mark.parametrize(("permission", "in_environ"), [({"python": "allow"}, True),
                                                       ({"python": {"live": "deny", "sandbox": "allow"}}, False)],
                         ids=["live", "sandboxed"])
def test_a_key_printed_by_python_in_the_kernel_is_redacted(kernel, permission, in_environ):  # noqa: F811
    fe = kernel(print_key(FIND_KEY), permission=permission, render_views=False,
                env={"OPENCODE_NB_HEADLESS": "1", "ANTHROPIC_API_KEY": KEY})
    cell = fe.run_id("%agent print the key")
    output = tool_output(fe)
    assert output.startswith("completed") and f"in environ: {in_environ}" in output
    assert "[redacted: ANTHROPIC_API_KEY] [redacted: ANTHROPIC_API_KEY] [redacted: ANTHROPIC_API_KEY]" in output
    assert str(len(KEY)) in output, "the code did find the key"
    for text in (output, fe.text(cell)):
        assert KEY not in text and KEY.upper() not in text and KEY[::-1] not in text
