"""The demo's prompt and model, for callers that know them from here.

The scenarios themselves live with the scripted provider (`opencode_nb.provider.builtin`), so that
`scripted/demo` answers in any workspace, not only where the demo registers it.
"""

from __future__ import annotations

from ..provider.builtin import WEATHER_PROMPT as DEMO_PROMPT
from ..provider.builtin import DemoModel

__all__ = ["DEMO_PROMPT", "DemoModel"]
