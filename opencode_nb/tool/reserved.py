"""Permission names are one namespace, shared by the tools we ship, the permissions they ask, and every tool
that comes from elsewhere (an MCP server's, a person's `@tool` function, plugins').

A tool from elsewhere asks under its own name (`McpTool`, `FunctionTool`), and rules and "always" grants are
keyed by permission name alone. So such a tool whose name, once sanitised, is a permission of ours would wear
that permission: an MCP server `external` offering a tool `directory` is `external_directory`, and "always" at
its harmless-looking prompt would be a grant of the real `external_directory`, after which `write` reaches
`$HOME` without asking (`git` + `internals` would likewise open `.git/hooks`). A rule written for ours would
reach it as well (`notebook_*: allow`).

So every name a built-in decides with is reserved here, in one place: the tools we ship (`TOOLS`), the
permissions asked by name with no tool of their own (`ASKED`), the tools the `edit` permission governs, and the
families named by prefix (`FAMILIES`). A tool from elsewhere never takes one: an MCP tool becomes `mcp_<name>` and the
person is told (`mcp/servers.py`); a person's function is refused in the cell that defines it
(`decorator.py`). Names are compared case-folded, so `External_Directory` cannot pass for ours on a prompt
either. `tests/tool/test_reserved.py` holds `TOOLS` to the registry, collects every permission the package asks
(`ctx.ask`, `permissions.ask`) and every rule of `agent/builtin.py`, and fails when one is not reserved here.
"""

from __future__ import annotations

from ..permission.rules import EDIT_TOOLS

TOOLS = frozenset({
    "read", "write", "edit", "list", "glob", "grep", "bash", "webfetch", "todowrite", "todoread", "question", "task",
    "plan_enter", "plan_exit", "python", "variables", "notebook_read", "notebook_edit", "notebook_run", "skill",
    "task_status", "task_cancel",
})
"""The tools we ship (`registry.default_registry`, `skill` with skills); `tests/tool/test_reserved.py` holds
this to the registry, so a tool added there and not here fails."""

ASKED = frozenset({
    "external_directory", "git_internals", "agent_config", "doom_loop", "network", "mcp", "sandbox", "live", "hook",
})
"""Permissions asked or written in built-in rules by name with no tool of their own (`sandbox` and `live` are
the `python` permission's patterns, kept from tool names so that a prompt never reads like one of them)."""

FAMILIES = ("notebook_", "todo", "plan_")
"""Prefixes of built-in families: a rule for one (`notebook_*: deny`) must not reach a tool from elsewhere."""

PREFIX = "mcp_"
"""What an MCP tool whose name is reserved is given in front of it."""

RESERVED = frozenset(n.casefold() for n in (*TOOLS, *ASKED, *EDIT_TOOLS))
"""Every reserved permission name, case-folded."""


def is_reserved(name: str) -> bool:
    """Whether `name` is, or could be read as, a permission of ours."""
    folded = name.casefold()
    return folded in RESERVED or folded.startswith(FAMILIES)


def why_reserved(name: str) -> str:
    """The sentence that tells a person why `name` cannot be a tool's name."""
    return (f"`{name}` is the name of a built-in permission, so a tool named so would share its rules and "
            "\"always\" grants")


def refuse_reserved(tool_id: str) -> None:
    """Raises ValueError, naming the fix, when a person's function would take a reserved name."""
    if not is_reserved(tool_id):
        return
    fix = f"Rename the function, or give the tool another name: @tool(name=\"my_{tool_id}\")"
    if tool_id.casefold() in TOOLS:
        raise ValueError(f"`{tool_id}` is the name of a built-in tool; a function may not replace it. {fix}")
    raise ValueError(f"{why_reserved(tool_id)}. {fix}")

