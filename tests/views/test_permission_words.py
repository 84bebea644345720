"""An ask says what it asks for in words a person recognises: python's mode is where the code runs."""

from __future__ import annotations

from opencode_nb.permission.events import PermissionRequest
from opencode_nb.views.asks import always_note, permission_html


def ask(permission: str, patterns: list[str], **metadata: str) -> PermissionRequest:
    return PermissionRequest(id="per_1", session_id="ses_1", agent="build", permission=permission,
                             patterns=patterns, always=patterns, metadata=metadata)


def test_a_live_python_ask_says_it_runs_in_your_namespace_not_a_bullet_with_the_mode():
    html = permission_html(ask("python", ["live"], code="df2 = df.dropna()"))
    assert "asks for <b>python</b>: run in your namespace" in html
    assert "<li>" not in html and "<code>live</code>" not in html
    assert always_note(ask("python", ["live"])) == "python run in your namespace by build in this session"
    assert "run in a sandbox" in permission_html(ask("python", ["sandbox"]))


def test_other_asks_still_list_their_patterns():
    html = permission_html(ask("bash", ["git status", "ls -la"]))
    assert "<li><code>git status</code></li><li><code>ls -la</code></li>" in html
