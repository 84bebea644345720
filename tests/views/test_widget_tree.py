"""Closing a view closes everything it showed, in the kernel and in the front end."""

from __future__ import annotations

import ipywidgets as widgets

from opencode_nb.views.widget_tree import close_tree


def test_closing_a_tree_closes_its_children_and_their_layouts_and_styles():
    button = widgets.Button(description="Allow once")
    text = widgets.HTML("asks for bash")
    root = widgets.VBox([widgets.HBox([button]), text])
    owned = [root, *root.children, button, text, button.layout, button.style, text.layout, text.style, root.layout]
    close_tree(root)
    assert all(w.comm is None for w in owned)
