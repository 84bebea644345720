"""Buttons that show their whole label and read in every theme.

JupyterLab's widget button has a fixed width, and in a row it shrinks to fit: "Always allow" became "Always all…"
and a card's Stop button a bare "■ …". Every button of the views is made here: as wide as its label, never
shrunk, in rows that wrap onto another line rather than squeeze. A coloured one paints its own background and
white label (`colors.BUTTONS`), whatever the theme's colour for that kind of button.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import ipywidgets as widgets

from .colors import BUTTON_TEXT, BUTTONS
from .markdown import escape

Kind = Literal["", "success", "info", "warning", "danger", "primary"]
"""A button's colour by what it does; "" is the theme's plain button."""


def whole_width() -> widgets.Layout:
    """A layout as wide as the label, never shrunk by its row."""
    return widgets.Layout(width="auto", min_width="max-content", flex="0 0 auto")


def button(description: str, kind: Kind = "", *, icon: str = "", tooltip: str = "") -> widgets.Button:
    made = widgets.Button(description=description, icon=icon, tooltip=tooltip or description, layout=whole_width())
    paint(made, kind)
    return made


def paint(target: widgets.Button, kind: Kind) -> None:
    """Colour `target` as `kind` ("" gives it back the theme's plain look), label and background together."""
    target.button_style = ""
    target.style.button_color = BUTTONS[kind] if kind else None
    target.style.text_color = BUTTON_TEXT if kind else None


def button_row(children: Sequence[widgets.Widget]) -> widgets.HBox:
    """A row of buttons (and fields) that wraps onto the next line when the page is narrow."""
    return widgets.HBox(list(children), layout=widgets.Layout(flex_flow="row wrap", align_items="center"))


PLACEHOLDER_FITS = 22
"""The longest placeholder kept inside a field: it fits in the field's narrowest width (16em) whole."""


def typed_answer(hint: str, placeholder: str) -> tuple[widgets.HTML | None, widgets.Text]:
    """A field for the person's own words, and the line above it that says what to type, if one is needed.

    A hint that fits in the field stays its placeholder. A longer one would be cut at the field's edge, so it
    becomes a line above the field, where it wraps and is read whole, and the field holds only `placeholder`."""
    fits = len(hint) <= PLACEHOLDER_FITS
    field = widgets.Text(placeholder=hint if fits else placeholder, layout=widgets.Layout(
        width="auto", flex="1 1 16em", min_width="min(16em, 100%)", max_width="40em"))
    label = None if fits else widgets.HTML(
        f'<div style="font-size:12px;line-height:1.4;margin:4px 0 2px">{escape(hint)}</div>')
    return label, field
