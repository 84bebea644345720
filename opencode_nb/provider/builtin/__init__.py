"""The built-in offline demo model, `scripted/demo`: it plays a scenario instead of understanding a prompt.

It needs no API key and no script: the scripted provider uses it when `provider.scripted.script` is not set.
It plays the weather-stats scenario (find and fix a wrong average, with a subagent, plan mode, an edit
behind an ask and a self-check) when the prompt is about that average, the data-exploration scenario when
it is about `df`, the Fix/Explain scenario (`fix.py`: a wrong column or variable name) for a `%agent fix` or
`%agent explain` of a failed cell, and otherwise says plainly what it is and what it can show. Every answer
is derived from the session's own messages, so each session plays its scenario from the beginning and
follows what actually happened (a rejected edit, a failing check).
"""

from __future__ import annotations

from typing import Any

from ...errors import ProviderError
from ..request import LLMRequest
from . import data, fix, weather

DEMO = "demo"
"""The model id of the demo: `scripted/demo`."""
MODELS = (DEMO, data.MODEL)
"""Model ids the scripted provider answers with no script; `data-exploration` forces that scenario."""
WEATHER_PROMPT = weather.PROMPT

MARKERS = {"data-explorer": "You are data-explorer", "explore": "You are explore", "plan": "You are the plan agent",
           "build": "You are the build agent"}
"""How an agent is recognised from its system prompt."""

INTRO = ("I am `scripted/demo`, the offline demo model: I do not read or answer prompts, I play scripted "
         "scenarios. Ask “The average temperature in summarise() looks too high. Find the bug in this project, "
         "fix it, check the fix, and keep a todo list while you work.” in a copy of the sample project "
         "(`from opencode_nb.demo import sample_project`) to see explore survey it, a switch to plan mode, an "
         "edit behind your approval and a self-check; or ask about a DataFrame `df` to see data-explorer "
         "profile it in a sandbox. For real answers choose a real model: `anthropic/claude-sonnet-4-6` "
         "(ANTHROPIC_API_KEY), `openai/gpt-5` (OPENAI_API_KEY) or an OpenAI-compatible local server in "
         "opencode.yaml; `%agent models` lists them.")


class DemoModel:
    """`respond(request)` for the scripted provider: the demo's next move in the requesting session."""

    def __call__(self, request: LLMRequest) -> dict[str, Any]:
        system = "\n".join(request.system)
        agent = next((a for a, marker in MARKERS.items() if marker in system), "build")
        forced = request.model.id == data.MODEL
        if agent == "data-explorer":
            return data.explorer(request)
        if agent == "explore":
            return weather.explore(request)
        if agent == "plan":
            return weather.plan(request) or _intro(request)
        # A Fix or Explain prompt carries the cell's context, whose words (a frame named `df`, an average) must
        # not start another scenario.
        failed = fix.build(request)
        if failed is not None:
            return failed
        if forced:
            return data.build(request, forced=True) or _intro(request)
        return weather.build(request) or data.build(request) or fix.acknowledged(request) or _intro(request)


class BuiltinDemo(DemoModel):
    """The demo as the scripted provider's default: models other than `demo` have nothing to play."""

    def __call__(self, request: LLMRequest) -> dict[str, Any]:
        if request.model.id not in MODELS:
            raise ProviderError(
                f"scripted/{request.model.id} has no script: set provider.scripted.script in opencode.yaml to a "
                "list of turns, or choose scripted/demo, the built-in offline demo.", retryable=False,
                kind="bad_request")
        return super().__call__(request)


def _intro(request: LLMRequest) -> dict[str, Any]:
    """What the demo says to a prompt it has no scenario for (words only: the turn ends there)."""
    return {"text": INTRO}
