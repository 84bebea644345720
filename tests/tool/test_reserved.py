"""Every permission the package decides with is reserved, so no tool from elsewhere can take its name."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import opencode_nb
from opencode_nb import tool
from opencode_nb.agent.builtin import builtins, default_rules
from opencode_nb.mcp.tool import tool_name
from opencode_nb.tool.person import FunctionTool
from opencode_nb.tool.registry import ToolRegistry, default_registry
from opencode_nb.tool.reserved import TOOLS, is_reserved

PACKAGE = Path(opencode_nb.__file__).parent


def _constant(module: str, node: ast.expr) -> str | None:
    """The string `node` stands for: a literal, or a module-level name (`GIT_PERMISSION`) of `module`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        value = getattr(importlib.import_module(module), node.id, None)
        return value if isinstance(value, str) else None
    return None


def asked_permissions() -> dict[str, set[str]]:
    """Every permission passed to an `ask` in the package, by where: `ctx.ask(P, ...)`, `self.ask(P, ...)` and
    the service's `permissions.ask(session, agent, P, ...)`, and every rule or grant written as
    `Rule(permission=P, ...)`; a tool asking under its own name (`self.id`) is one from elsewhere and is not
    collected."""
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        module = "opencode_nb." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("Rule", "Grant"):
                given = next((k.value for k in node.keywords if k.arg == "permission"), None)
                name = _constant(module, given) if given is not None else None
                if name is not None and name != "*":
                    found.setdefault(name, set()).add(f"{path.relative_to(PACKAGE)}:{node.lineno}")
                continue
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "ask"):
                continue
            owner = node.func.value
            if isinstance(owner, ast.Attribute) and owner.attr == "questions":
                continue  # questions, not permissions
            position = 2 if isinstance(owner, ast.Attribute) and owner.attr == "permissions" else 0
            given = next((k.value for k in node.keywords if k.arg == "permission"), None)
            if given is None and len(node.args) > position:
                given = node.args[position]
            name = _constant(module, given) if given is not None else None
            if name is not None:
                found.setdefault(name, set()).add(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


def builtin_rule_permissions(tmp_path: Path) -> set[str]:
    names = set(default_rules(tmp_path, tmp_path))
    for agent in builtins(tmp_path, tmp_path).values():
        names |= set(agent.rules) | set(agent.fixed)
    return names - {"*"}


def test_the_collector_finds_the_permissions_asked_outside_the_tools():
    asked = asked_permissions()
    assert {"external_directory", "git_internals", "agent_config", "doom_loop", "network", "mcp", "bash", "read",
            "edit", "python", "notebook_edit", "todowrite", "task"} <= set(asked)


def test_every_permission_asked_anywhere_is_reserved():
    assert sorted((n, sorted(w)) for n, w in asked_permissions().items() if not is_reserved(n)) == []


def test_every_permission_of_the_built_in_rules_is_reserved(tmp_path):
    assert sorted(n for n in builtin_rule_permissions(tmp_path) if not is_reserved(n)) == []


def test_the_reserved_tools_are_the_registrys():
    assert {*default_registry().ids(), "skill"} == TOOLS


@pytest.mark.parametrize(("server", "name", "expected"), [
    ("external", "directory", "mcp_external_directory"),
    ("git", "internals", "mcp_git_internals"),
    ("agent", "config", "mcp_agent_config"),
    ("doom", "loop", "mcp_doom_loop"),
    ("notebook", "search", "mcp_notebook_search"),
    ("plan", "enter", "mcp_plan_enter"),
    ("External", "Directory", "mcp_External_Directory"),
    ("external", "dir.ectory", "external_dir_ectory"),
    ("github", "search", "github_search"),
])
def test_an_mcp_tool_never_takes_a_built_in_permissions_name(server, name, expected):
    assert tool_name(server, name) == expected


@pytest.mark.parametrize("name", ["external_directory", "git_internals", "agent_config", "doom_loop", "network",
                                  "mcp", "notebook_export", "todo_sync", "plan_enter", "Read"])
def test_a_persons_function_may_not_take_a_built_in_permissions_name(name):
    def f(x: int) -> int:
        return x

    with pytest.raises(ValueError, match="built-in (permission|tool)"):
        tool(name=name)(f)
    with pytest.raises(ValueError, match="built-in (permission|tool)"):
        FunctionTool(f, name=name)
    with pytest.raises(ValueError, match="built-in (permission|tool)"):
        ToolRegistry().add(f, name=name)


def test_other_names_are_free():
    def f(x: int) -> int:
        return x

    assert ToolRegistry().add(f, name="my_external_directory").id == "my_external_directory"
    assert not is_reserved("query") and not is_reserved("today") and not is_reserved("reader")
