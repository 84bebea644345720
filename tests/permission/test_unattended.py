"""With nobody to ask, the policy the person chose beforehand decides; a typo in it refuses."""

import pytest

from opencode_nb.permission import PermissionRequest
from opencode_nb.permission.unattended import decide, policy_from_env


def request(permission: str) -> PermissionRequest:
    return PermissionRequest(id="p", session_id="s", agent="build", permission=permission, patterns=["x"])


@pytest.mark.parametrize(("value", "policy"), [
    (None, "deny"), ("allow", "allow"), (" Allow-ReadOnly ", "allow-readonly"), ("alow", "deny"), ("", "deny"),
])
def test_the_policy_comes_from_the_environment_and_anything_unknown_denies(value, policy):
    env = {} if value is None else {"OPENCODE_NB_PERMISSION": value}
    assert policy_from_env(env) == policy


@pytest.mark.parametrize(("permission", "deny", "readonly", "allow"), [
    ("read", "deny", "allow", "allow"),
    ("grep", "deny", "allow", "allow"),
    ("bash", "deny", "deny", "allow"),
    ("edit", "deny", "deny", "allow"),
    ("doom_loop", "deny", "deny", "allow"),
    ("webfetch", "deny", "deny", "allow"),
    ("notebook_read", "deny", "allow", "allow"),
    ("notebook_edit", "deny", "deny", "allow"),
    ("notebook_run", "deny", "deny", "allow"),
])
def test_allow_readonly_lets_looking_through_and_nothing_else(permission, deny, readonly, allow):
    assert [decide(p, request(permission)) for p in ("deny", "allow-readonly", "allow")] == [deny, readonly, allow]
