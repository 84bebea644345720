"""Colours that read in every JupyterLab theme, light or dark, and outside it: the one place text gets its colour,
shared by the renderers and the code highlighter."""

from __future__ import annotations

FOREGROUND = "var(--jp-content-font-color0,currentColor)"
"""The theme's own text colour (black in light themes, white in dark ones); outside JupyterLab, the page's."""


def tone(hue: str) -> str:
    """`hue` as text that reads in every theme: mixed a third of the way toward the theme's text colour.

    No single colour keeps WCAG AA's 4.5:1 against both a white and a near-black page, so the mix darkens a
    hue on light themes and lightens it on dark ones (every hue below keeps at least 4.7:1 on both). Where
    `color-mix` or the style is not kept, the text simply takes the page's own colour.
    """
    return f"color-mix(in srgb,{hue} 65%,{FOREGROUND})"


MUTED = f"color-mix(in srgb,{FOREGROUND} 62%,transparent)"
"""Secondary text (headers, records, ids): the theme's text colour, faded to keep 6:1 on light and dark."""
HUES = {"pending": "#9e9e9e", "running": "#1e88e5", "completed": "#43a047", "error": "#e53935",
        "failed": "#e53935", "warning": "#fb8c00", "system": "#8e24aa"}
"""Borders and marks; text in these hues goes through `tone`."""

BUTTON_TEXT = "#ffffff"
BUTTONS = {"success": "#2e7d32", "info": "#006a80", "warning": "#b45309", "danger": "#c62828",
           "primary": "#1565c0"}
"""Backgrounds of the coloured buttons, under white labels. JupyterLab's own button colours are lighter in its
dark theme (white on its orange or cyan reads at 2.2:1), so a coloured button sets both colours itself: each of
these keeps at least 5:1 with white, in every theme, and is neither white nor black, so it stands out of both."""
