"""Asking the person, in the cell that asked for an undo or a redo, whether to write over a change of theirs.

An undo (or redo) would overwrite a file the person edited after the agent's turn, or a name they rebound
since: the cell shows what they would lose (the diff, highlighted as the edit tool's card shows one) with
"Overwrite my change" and "Keep mine", and the undo waits for the click. The `%agent undo` line is awaited
at the top level of its cell, so ipykernel delivers the click while it waits (see the permission prompt).
Nobody can click where no page shows widgets: there the caller passes no confirm and the change is kept.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..checkpoint.records import Conflict
from ..views.markdown import escape
from ..views.render import diff_html, icon_html
from .futures import settle

OVERWRITE = "Overwrite my change"
KEEP = "Keep mine"


async def ask_overwrite(conflict: Conflict) -> bool:
    """Show the conflict in the current cell and wait for the person's choice: True overwrites their change."""
    import ipywidgets as widgets
    from IPython.display import display

    loop = asyncio.get_running_loop()
    chosen: asyncio.Future[bool] = loop.create_future()

    def answer(value: bool) -> None:  # the click may arrive on another thread (a subshell)
        loop.call_soon_threadsafe(settle, chosen, value)

    body = f"{icon_html('question-circle')}<b>{escape(conflict.path)}</b>: {escape(conflict.reason)}"
    if conflict.diff:
        body += diff_html(conflict.diff)
    overwrite = widgets.Button(description=OVERWRITE, button_style="danger", layout=widgets.Layout(width="auto"))
    keep = widgets.Button(description=KEEP, button_style="primary", layout=widgets.Layout(width="auto"))
    overwrite.on_click(lambda _: answer(True))
    keep.on_click(lambda _: answer(False))
    box = widgets.VBox([widgets.HTML(body), widgets.HBox([overwrite, keep])], layout=widgets.Layout(
        margin="2px 0 6px 0", padding="4px 8px", border="1px solid #90caf9"))
    box.add_class("ocnb-undo-conflict")
    display(box)
    try:
        value = await chosen
    finally:
        _settle(box, widgets, chosen, [overwrite, keep])
    return value


def _settle(box: Any, widgets: Any, chosen: asyncio.Future[bool], buttons: list[Any]) -> None:
    """Replace the buttons by the answer, so a saved notebook reads what was decided."""
    for button in buttons:
        button.disabled = True
    said = ("overwritten with the agent's version" if chosen.result() else "kept as you had it") \
        if chosen.done() and not chosen.cancelled() else "not decided: the undo was stopped"
    box.children = [box.children[0], widgets.HTML(f"<i>{escape(said.capitalize())}.</i>")]
