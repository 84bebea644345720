"""Closing a widget and everything inside it.

`Widget.close()` closes only the widget it is called on: its children, layout and style stay open in the
kernel and in the front end. A view replaced by its transcript, or a prompt collapsed to its record,
closes its whole tree here so nothing it showed lingers.
"""

from __future__ import annotations

import ipywidgets as widgets


def close_tree(widget: widgets.Widget) -> None:
    """Close `widget`, its children (recursively), and the layout and style widgets they carry."""
    for child in getattr(widget, "children", ()) or ():
        close_tree(child)
    for name in ("layout", "style"):
        part = getattr(widget, name, None)
        if isinstance(part, widgets.Widget):
            part.close()
    widget.close()
