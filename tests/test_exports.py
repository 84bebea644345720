"""Each package's `__init__` is its contract: these are the names callers may import."""

import importlib

import pytest

EXPECTED = {
    "opencode_nb": {"Workspace", "__version__", "load_ipython_extension", "tool", "unload_ipython_extension"},
    "opencode_nb.permission": {
        "NAMED_ONLY", "Action", "CorrectedError", "DeniedError", "Grant", "GrantStore", "PermissionAsked",
        "PermissionReplied",
        "PermissionRequest", "PermissionService", "RejectedError", "Reply", "Rule", "Ruleset", "RulesetField",
        "ToolRef", "disabled", "evaluate", "expand_home", "from_config", "merge", "wildcard_match",
    },
    "opencode_nb.agent": {"AgentInfo", "AgentRegistry", "Mode", "PLAN_FILES", "default_rules"},
    "opencode_nb.config": {
        "CONFIG_ENV", "AgentConfig", "CommandConfig", "CompactionConfig", "Config", "ConfigError", "ConfigWarning",
        "LoadedConfig", "ModelConfig", "ProviderConfig", "global_config_dir", "load_config", "project_root",
    },
    "opencode_nb.mcp": {
        "APPROVAL_PERMISSION", "CallFailed", "McpServers", "McpTool", "ServerClient", "ServerEntry", "ServerState",
        "describe", "masked", "rule_in_force", "secret_values", "server_entries", "tool_name",
    },
}


@pytest.mark.parametrize("module", sorted(EXPECTED))
def test_all_names_exactly_what_the_package_exports(module):
    mod = importlib.import_module(module)
    assert set(mod.__all__) == EXPECTED[module]
    for name in mod.__all__:
        assert getattr(mod, name) is not None


def test_every_session_export_resolves():
    mod = importlib.import_module("opencode_nb.session")
    assert {"Session", "SessionStore", "SessionService", "ToolPart", "MessagePartUpdated"} <= set(mod.__all__)
    for name in mod.__all__:
        getattr(mod, name)
