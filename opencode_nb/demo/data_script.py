"""What the built-in scripted model does in the data-exploration notebook.

build hands the profiling of `df` to data-explorer, which lists the variables, describes `df`, computes
statistics in the sandbox (and, to show what the sandbox is for, tries to fill the frame's gaps there: the
person's `df` keeps them) and reports. Asked for a cleaned frame, build makes one with live python.
"""

from __future__ import annotations

from typing import Any

MODEL = "data-exploration"
"""`demo/data-exploration` picks this script."""

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

TURNS: dict[str, list[dict[str, Any]]] = {
    "build": [
        {"text": "I'll have data-explorer profile `df` without touching it.",
         "tool_calls": [{"name": "task", "input": {"description": "Profile df", "subagent_type": "data-explorer",
                                                   "prompt": PROFILE}}]},
        {"text": "data-explorer's findings: 42 readings from 3 sites; `temp_c` has 3 missing values and one "
                 "impossible reading (85.0 °C at the north site on 2026-10-09); `status` mixes `ok` and `OK`. "
                 "Your `df` is unchanged. Ask me for a cleaned frame when you want one."},
        {"text": "Making `clean`: lower-cased status, and only plausible temperatures (missing ones drop out "
                 "too).",
         "tool_calls": [{"name": "python", "input": {"code": CLEAN_CODE,
                                                     "description": "Build a cleaned copy of df"}}]},
        {"text": "`clean` has 38 rows: the 3 missing and the 1 impossible temperature are gone, and `status` "
                 "is lower-case. `df` itself is untouched; `%agent undo` removes `clean`."},
    ],
    "data-explorer": [
        {"tool_calls": [{"name": "variables", "input": {}}]},
        {"tool_calls": [{"name": "variables", "input": {"name": "df"}}]},
        {"tool_calls": [{"name": "python", "input": {"code": SANDBOX_CODE,
                                                     "description": "Missing values, outliers, per-site stats"}}]},
        {"text": "`df`: 42 rows × 5 columns (date, site, temp_c, humidity, status). `temp_c` has 3 missing "
                 "values and an impossible 85.0 °C (north, 2026-10-09); once that reading is set aside the "
                 "per-site means are 10.4 °C north, 13.4 °C south and 10.2 °C east. `status` has `ok`, `OK` "
                 "and `fault`: the first two should be one category. I computed this in the sandbox; the "
                 "person's `df` was not changed."},
    ],
}

MARKERS = {"data-explorer": "You are data-explorer", "build": "You are the build agent"}


class DataDemoModel:
    """Answers each request with the next turn of the agent that asked."""

    def __init__(self) -> None:
        self.turns = {agent: list(queue) for agent, queue in TURNS.items()}

    def __call__(self, system: str) -> dict[str, Any]:
        agent = next((a for a, marker in MARKERS.items() if marker in system), "build")
        return self.turns[agent].pop(0) if self.turns[agent] else {"text": "Done."}
