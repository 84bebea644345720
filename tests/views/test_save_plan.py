"""In a notebook, a finished plan's card offers "Save as cells", which asks the kernel layer to do it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from opencode_nb.session.models import ToolCompleted, ToolPart, ToolRunning
from opencode_nb.views.tool_card import ToolCardView, savable_plan

from .conftest import click
from .test_session import buttons, wait_for, watched


def part(tool: str, tool_input: dict[str, Any], metadata: dict[str, Any] | None = None, *,
         running: bool = False) -> ToolPart:
    state: Any = ToolRunning(input=tool_input) if running else ToolCompleted(
        input=tool_input, output="ok", metadata=metadata or {}, started_at=0.0)
    return ToolPart(session_id="s", message_id="m", call_id="c", tool=tool, state=state)


@pytest.mark.parametrize("tool_part, offered", [
    (part("plan_exit", {}), True),
    (part("plan_exit", {}, {"plan": "p", "cells": ["a", "b"]}), False),
    (part("write", {"path": ".opencode/plans/fix-mean-1a2b.md", "content": "1. x"}), True),
    (part("edit", {"path": "/work/proj/.opencode/plans/fix-mean-1a2b.md"}), True),
    (part("write", {"path": "notes/plan.md", "content": "1. x"}), False),
    (part("write", {"path": ".opencode/plans/fix.md"}, running=True), False),
], ids=["plan-exit", "plan-exit-that-saved-cells", "write-plan", "edit-plan-absolute", "other-file", "running"])
def test_which_cards_offer_to_save_the_plan_as_cells(tool_part, offered):
    assert savable_plan(tool_part) is offered
    card = ToolCardView(tool_part, save_plan=lambda report: None)
    card.flush()
    assert (card.save_button is not None) is offered


def test_without_a_notebook_no_card_offers_it():
    card = ToolCardView(part("plan_exit", {}))
    card.flush()
    assert card.save_button is None


def test_the_button_asks_once_and_shows_the_answer():
    asked: list[Any] = []
    card = ToolCardView(part("plan_exit", {}), save_plan=asked.append)
    card.flush()
    assert card.save_button is not None
    click(card.save_button)
    click(card.save_button)
    assert len(asked) == 1 and card.save_button.disabled
    note = card.widget.children[-1].children[1]
    assert "saving…" in note.value
    asked[0]("Saved plan p as 5 cells.")
    assert "Saved plan p as 5 cells." in note.value


async def test_the_session_view_forwards_the_click_with_its_session_and_shows_what_came_back(tmp_path):
    saved: list[str] = []

    async def on_save_plan(session_id: str) -> str:
        saved.append(session_id)
        await asyncio.sleep(0)
        return "Saved plan x as 3 cells: 1 step to run."

    turns = [{"tool_calls": [{"name": "write", "input": {"path": ".opencode/plans/x.md", "content": "1. Do it\n"}}]},
             {"text": "Plan written."}]
    ws, hub, session, view = watched(tmp_path, turns, permission={"edit": "allow"}, on_save_plan=on_save_plan)
    view.start()
    await ws.prompt(session.id, "plan it")
    hub.flush_all()
    button = buttons(view.widget, "Save as cells")
    assert len(button) == 1
    click(button[0])
    await wait_for(lambda: saved)
    card = next(iter(view.cards.values()))
    await wait_for(lambda: "Saved plan x as 3 cells" in card.widget.children[-1].children[1].value)
    assert saved == [session.id]
    await ws.aclose()


async def test_a_view_without_the_callback_shows_no_button(tmp_path):
    turns = [{"tool_calls": [{"name": "write", "input": {"path": ".opencode/plans/x.md", "content": "1. Do it\n"}}]},
             {"text": "Plan written."}]
    ws, hub, session, view = watched(tmp_path, turns, permission={"edit": "allow"})
    view.start()
    await ws.prompt(session.id, "plan it")
    hub.flush_all()
    assert buttons(view.widget, "Save as cells") == []
    await ws.aclose()
