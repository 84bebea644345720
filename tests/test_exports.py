"""Each package's `__init__` is its contract: these are the names callers may import."""

import importlib

import pytest

EXPECTED = {
    "opencode_nb": {"Workspace", "__version__", "load_ipython_extension", "tool", "unload_ipython_extension"},
    "opencode_nb.permission": {
        "NAMED_ONLY", "Grant", "PermissionAsked", "PermissionRequest", "PermissionService", "Rule", "Ruleset",
        "ToolRef", "disabled", "evaluate", "from_config", "merge", "wildcard_match",
    },
    "opencode_nb.agent": {"AgentInfo", "AgentRegistry"},
    "opencode_nb.config": {
        "AgentConfig", "CompactionConfig", "Config", "ConfigError", "ConfigWarning", "LoadedConfig", "ModelConfig",
        "global_config_dir", "load_config",
    },
    "opencode_nb.mcp": {"masked", "rule_in_force", "secret_values", "server_entries", "tool_name"},
}


@pytest.mark.parametrize("module", sorted(EXPECTED))
def test_all_names_exactly_what_the_package_exports(module):
    mod = importlib.import_module(module)
    assert set(mod.__all__) == EXPECTED[module]
    for name in mod.__all__:
        assert getattr(mod, name) is not None


def test_the_session_package_has_no_face():
    """Every caller imports the session's parts by module (`opencode_nb.session.models`), so the package
    re-exports nothing."""
    mod = importlib.import_module("opencode_nb.session")
    assert not hasattr(mod, "__all__")
