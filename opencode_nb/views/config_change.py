"""The prompt for a configuration change that waits for the person: what loosens, and Apply / Keep previous.

Like the permission prompt it decides nothing: a click calls back into the kernel (which records the answer)
and the prompt becomes a one-line record of it. The same answers are `%agent config accept|keep`, which work
where widgets do not; the bundle's HTML and text say so, so a saved notebook still reads right.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import ipywidgets as widgets

from ..config.guard import Held
from .buttons import button, button_row
from .colors import MUTED, tone
from .markdown import escape

log = logging.getLogger(__name__)

MAGICS_NOTE = "%agent config accept applies it; %agent config keep keeps the configuration confirmed before."


def config_change_text(held: Held) -> str:
    lines = "\n".join(f"  {item}" for item in held.loosenings)
    return (f"The configuration files changed while agents ran (session {', '.join(held.sessions) or 'an agent'}), "
            f"and the change loosens what agents may do:\n{lines}\nIt is not applied until you confirm it; the "
            f"configuration confirmed before stays in force.\n{MAGICS_NOTE}")


def config_change_html(held: Held) -> str:
    sessions = ", ".join(held.sessions) or "an agent"
    items = "".join(f"<li><code>{escape(item.key)}</code>: {escape(item.what)} "
                    f'<span style="color:{MUTED}">({escape(item.where)})</span></li>' for item in held.loosenings)
    return (f'<div style="border-left:3px solid {tone("orange")};padding:2px 8px">'
            f"<b>The configuration files changed while agents ran</b> (session {escape(sessions)}), and the change "
            f"loosens what agents may do:<ul style='margin:4px 0'>{items}</ul>"
            f"It is not applied until you confirm it; the configuration confirmed before stays in force."
            f'<div style="font-size:11px;color:{MUTED}">{escape(MAGICS_NOTE)}</div></div>')


class ConfigChangeView:
    """Apply / Keep previous for one held change."""

    def __init__(self, held: Held, apply: Callable[[], str], keep: Callable[[], str]) -> None:
        self.held = held
        self._apply = apply
        self._keep = keep
        self.apply = button("Apply", "warning", icon="check",
                            tooltip="I made this change: use the files as they are now")
        self.keep = button("Keep previous", "info", icon="undo",
                           tooltip="Go on with the configuration confirmed before")
        self.apply.on_click(lambda _: self.answer(self._apply))
        self.keep.on_click(lambda _: self.answer(self._keep))
        self.widget = widgets.VBox([widgets.HTML(config_change_html(held)), button_row([self.apply, self.keep])])
        self.widget.add_class("ocnb-config-change")

    def answer(self, choose: Callable[[], str]) -> None:
        """Record the person's answer once; the prompt becomes what it did."""
        if self.apply.disabled:
            return
        self.apply.disabled = self.keep.disabled = True
        try:
            said = choose()
        except Exception as exc:
            log.exception("configuration answer failed")
            said = f"Not recorded: {exc}"
        self.widget.children = (widgets.HTML(f'<span style="color:{MUTED}">{escape(said)}</span>'),)

    def bundle(self) -> dict[str, object]:
        """The widget, with HTML and text beside it for wherever widgets are not rendered."""
        return {**(self.widget._repr_mimebundle_() or {}), "text/html": config_change_html(self.held),
                "text/plain": config_change_text(self.held)}
