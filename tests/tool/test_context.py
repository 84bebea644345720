"""What a tool may use is a named, typed field of its context; a wrong name fails at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from opencode_nb.agent import AgentRegistry
from opencode_nb.config.schema import Config
from opencode_nb.tool.base import ToolContext
from opencode_nb.tool.registry import default_registry


async def never(*args, **kwargs) -> None:
    return None


def context(tmp_path: Path, **fields) -> ToolContext:
    return ToolContext(session_id="s", message_id="m", call_id="c", agent="build", directory=tmp_path,
                       data_dir=tmp_path, ask=never, **fields)


def test_services_a_run_cannot_supply_are_none(tmp_path):
    ctx = context(tmp_path)
    assert (ctx.tasks, ctx.switch_agent, ctx.plan_path, ctx.model, ctx.kernel, ctx.todos, ctx.questions) == (
        None, None, None, None, None, None, None)


def test_a_misspelt_service_is_an_error_not_a_silent_none(tmp_path):
    with pytest.raises(TypeError):
        context(tmp_path, task_runner=object())
    ctx = context(tmp_path)
    with pytest.raises(AttributeError):
        ctx.extra  # noqa: B018 - the untyped bag is gone
    with pytest.raises(AttributeError):
        ctx.kernal = object()  # type: ignore[attr-defined]


def test_every_tool_has_a_spec_per_agent_and_only_task_tells_agents_apart(tmp_path):
    agents = AgentRegistry(Config(), {}, data_dir=tmp_path, tmp_dir=tmp_path)
    build, plan = agents.get("build"), agents.get("plan")
    registry = default_registry()
    for tool in (registry.get(i) for i in registry.ids()):
        if tool.id == "task":
            assert "- explore:" in tool.spec_for(build, agents).description
        else:
            assert tool.spec_for(build, agents) == tool.spec_for(plan, agents) == tool.spec()
