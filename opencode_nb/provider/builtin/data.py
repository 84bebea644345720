"""The demo's scenario in the data-exploration notebook: profile `df` without touching it, then clean a copy.

build hands the profiling of `df` to data-explorer, which lists the variables, describes `df`, computes
statistics in the sandbox (and, to show what the sandbox is for, tries to fill the frame's gaps there: the
person's `df` keeps them) and reports. Asked for a cleaned frame, build makes one with live python. As in
the weather scenario, each move is read from the session's own history, and a failed call is reported.
"""

from __future__ import annotations

from typing import Any

from ..request import LLMRequest
from .history import first_line, since, words

MODEL = "data-exploration"
"""`<provider>/data-exploration` always plays this scenario, whatever the prompt."""

is_task = words(r"\bdf\b")
is_cleaning = words(r"\bclean")

PROFILE = ("Profile the DataFrame `df` in the notebook: shape, dtypes, missing values, ranges, suspicious "
           "values and inconsistent categories. Report exact figures.")

SANDBOX_CODE = """print(df.isna().sum().to_string())
print("outliers:", df.loc[df["temp_c"] > 40, ["date", "site", "temp_c"]].to_dict("records"))
print("status values:", sorted(df["status"].unique()))
stats = df[df["temp_c"] <= 40].groupby("site")["temp_c"].agg(["count", "mean", "max"]).round(1)
df["temp_c"] = df["temp_c"].fillna(df["temp_c"].median())   # only the sandbox's copy changes
stats"""

CLEAN_CODE = """clean = df.assign(status=df["status"].str.lower())
clean = clean[clean["temp_c"].between(-30, 40)].reset_index(drop=True)
clean.shape"""

EXPLORER_MOVES: list[dict[str, Any]] = [
    {"tool_calls": [{"name": "variables", "input": {}}]},
    {"tool_calls": [{"name": "variables", "input": {"name": "df"}}]},
    {"tool_calls": [{"name": "python", "input": {"code": SANDBOX_CODE,
                                                 "description": "Missing values, outliers, per-site stats"}}]},
]
FINDINGS = ("`df`: 42 rows × 5 columns (date, site, temp_c, humidity, status). `temp_c` has 3 missing values and an "
            "impossible 85.0 °C (north, 2026-10-09); once that reading is set aside the per-site means are "
            "10.4 °C north, 13.4 °C south and 10.2 °C east. `status` has `ok`, `OK` and `fault`: the first two "
            "should be one category. I computed this in the sandbox; the person's `df` was not changed.")


def build(request: LLMRequest, *, forced: bool = False) -> dict[str, Any] | None:
    """build's next move, or None when no prompt of the session is about `df` (and the model is not forced)."""
    s = since(request, lambda text: forced or is_task(text))
    if s is None:
        return None
    if is_cleaning(s.prompt):
        made = s.last("python")
        if made is None:
            return {"text": "Making `clean`: lower-cased status, and only plausible temperatures (missing ones "
                            "drop out too).",
                    "tool_calls": [{"name": "python", "input": {"code": CLEAN_CODE,
                                                                "description": "Build a cleaned copy of df"}}]}
        if not made.ok:
            return {"text": f"`clean` was not made: {first_line(made.output or '')}. `df` is untouched."}
        return {"text": "`clean` has 38 rows: the 3 missing and the 1 impossible temperature are gone, and "
                        "`status` is lower-case. `df` itself is untouched; `%agent undo` removes `clean`."}
    task = s.last("task")
    if task is None:
        return {"text": "I'll have data-explorer profile `df` without touching it.",
                "tool_calls": [{"name": "task", "input": {"description": "Profile df",
                                                          "subagent_type": "data-explorer", "prompt": PROFILE}}]}
    if not task.ok or "42 rows" not in (task.output or ""):
        return {"text": f"data-explorer could not profile `df`: {first_line(task.output or 'no answer')}"}
    return {"text": "data-explorer's findings: 42 readings from 3 sites; `temp_c` has 3 missing values and one "
                    "impossible reading (85.0 °C at the north site on 2026-10-09); `status` mixes `ok` and `OK`. "
                    "Your `df` is unchanged. Ask me for a cleaned frame when you want one."}


def explorer(request: LLMRequest) -> dict[str, Any]:
    """data-explorer's moves: its task prompt is the child session's only prompt."""
    s = since(request, lambda text: True)
    done = len(s.steps) if s is not None else 0
    if done < len(EXPLORER_MOVES):
        failed = next((c for c in (s.calls if s else []) if not c.ok), None)
        if failed is None:
            return EXPLORER_MOVES[done]
        return {"text": f"I could not finish the profile: {failed.name} failed ({first_line(failed.output or '')})."}
    return {"text": FINDINGS}
