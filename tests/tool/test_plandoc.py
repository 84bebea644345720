"""A plan file as steps: the three ways of writing them, ticking, and the cells a plan becomes."""

from __future__ import annotations

import pytest

from opencode_nb.tool.support.plandoc import (
    PlanError,
    parse_plan,
    parse_step_line,
    plan_cells,
    plan_id_of,
    progress_path,
    tick,
)

PATH = ".opencode/plans/fix-mean-1a2b3c4d.md"

NUMBERED = """# Fix the inflated average

The mean of the 7-day summary is too high.

1. In `stats.py`, make `mean()` divide by `len(values)`.
   Leave `median()` alone.
2) Run `python check_stats.py`
and confirm it passes.
3. Commit.
"""

CHECKLIST = """Tidy the readings
Goal: no gaps left in readings.csv

- [ ] Fill the gaps
  with the previous day's value
- [x] Drop the duplicate row
* [ ] Re-run the summary
"""

HEADINGS = """# Write and count a greeting

## Goal
A file with a greeting, and its word count.

## Step 1: Write the file
Write `hello.txt` containing the words hello plan cells.

### Why
It is the fixture the count needs.

## Step 2 — Count the words ✓
Run `wc -w hello.txt`.

## Notes
Not a step.
"""


def test_a_numbered_plan_gives_title_goal_and_steps_with_their_continuation_lines():
    doc = parse_plan(NUMBERED, PATH)
    assert doc.title == "Fix the inflated average"
    assert doc.goal == "The mean of the 7-day summary is too high."
    assert [s.text for s in doc.steps] == [
        "In `stats.py`, make `mean()` divide by `len(values)`.\nLeave `median()` alone.",
        "Run `python check_stats.py`\nand confirm it passes.",
        "Commit.",
    ]
    assert [s.style for s in doc.steps] == ["numbered"] * 3
    assert [s.done for s in doc.steps] == [False, False, False]
    assert doc.plan_id == "fix-mean-1a2b3c4d"


def test_a_checklist_plan_takes_its_goal_line_and_knows_which_boxes_are_ticked():
    doc = parse_plan(CHECKLIST, "p.md")
    assert doc.title == "Tidy the readings" and doc.goal == "no gaps left in readings.csv"
    assert [s.text for s in doc.steps] == ["Fill the gaps\nwith the previous day's value", "Drop the duplicate row",
                                           "Re-run the summary"]
    assert [s.done for s in doc.steps] == [False, True, False]


def test_step_headings_make_sections_steps_and_a_goal_section_is_the_goal():
    doc = parse_plan(HEADINGS, "h.md")
    assert doc.goal == "A file with a greeting, and its word count."
    assert [s.first_line for s in doc.steps] == ["Write the file", "Count the words"]
    assert "### Why\nIt is the fixture the count needs." in doc.steps[0].text
    assert "Not a step" not in doc.steps[1].text, "a heading of the same level ends the step"
    assert [s.done for s in doc.steps] == [False, True]


def test_a_list_broken_by_a_code_block_goes_on_where_its_numbering_does():
    text = "# T\n\n1. Write the script:\n\n```python\nprint('hi')\n```\n\n2. Run it.\n"
    doc = parse_plan(text, "p.md")
    assert [s.first_line for s in doc.steps] == ["Write the script:", "Run it."]
    assert "```python\nprint('hi')\n```" in doc.steps[0].text


def test_of_several_lists_the_one_under_a_steps_heading_wins():
    text = ("# T\n\n## Files\n1. stats.py\n2. check_stats.py\n\n## Steps\n1. Fix mean\n2. Run the check\n\n"
            "## Open questions\n1. Should median change too?\n")
    assert [s.text for s in parse_plan(text, "p.md").steps] == ["Fix mean", "Run the check"]


def test_numbers_in_code_blocks_are_not_steps():
    text = "# T\n\n```\n1. not a step\n```\n\n1. The step\n"
    assert [s.text for s in parse_plan(text, "p.md").steps] == ["The step"]


@pytest.mark.parametrize("text, missing", [
    ("", "is empty"),
    ("   \n\n", "is empty"),
    ("# Just a title\n\nSome prose and - a bullet\n- not a checklist item\n", "has no steps"),
])
def test_a_plan_without_steps_is_an_error_naming_the_file_and_how_to_write_them(text, missing):
    with pytest.raises(PlanError) as caught:
        parse_plan(text, PATH)
    message = str(caught.value)
    assert PATH in message and missing in message and "numbered list" in message


def test_ticking_changes_only_the_steps_first_line_in_each_style():
    assert tick(NUMBERED, PATH, 2) == NUMBERED.replace("2) Run", "2) [x] Run")
    assert tick(CHECKLIST, "p.md", 3) == CHECKLIST.replace("* [ ] Re-run", "* [x] Re-run")
    assert tick(HEADINGS, "h.md", 1) == HEADINGS.replace("## Step 1: Write the file", "## Step 1: Write the file ✓")
    ticked = parse_plan(tick(NUMBERED, PATH, 1), PATH)
    assert [s.done for s in ticked.steps] == [True, False, False]
    assert ticked.steps[0].text == parse_plan(NUMBERED, PATH).steps[0].text, "a tick is not part of the step"


def test_ticking_twice_is_ticking_once_and_keeps_crlf_line_endings():
    for text, path, step in ((NUMBERED, PATH, 1), (CHECKLIST, "p.md", 2), (HEADINGS, "h.md", 2)):
        once = tick(text, path, step)
        assert tick(once, path, step) == once
    crlf = NUMBERED.replace("\n", "\r\n")
    assert tick(crlf, PATH, 3) == crlf.replace("3. Commit.", "3. [x] Commit.")


def test_an_empty_box_in_a_numbered_item_is_filled_rather_than_doubled():
    assert tick("# T\n1. [ ] one\n2. [ ] two\n", "p.md", 2) == "# T\n1. [ ] one\n2. [x] two\n"


def test_ticking_a_step_that_is_not_there_says_how_many_there_are():
    with pytest.raises(PlanError, match="has 3 steps; there is no step 4"):
        tick(NUMBERED, PATH, 4)


def test_a_plan_becomes_a_title_cell_then_a_heading_and_a_step_cell_per_step():
    cells = plan_cells(parse_plan(HEADINGS, ".opencode/plans/greet-9f8e7d6c.md"))
    assert [c.cell_type for c in cells] == ["markdown", "markdown", "code", "markdown", "code"]
    assert cells[0].source.startswith("## Write and count a greeting\n\nA file with a greeting, and its word count.")
    assert "%agent plan run greet-9f8e7d6c" in cells[0].source
    assert cells[1].source == "### Step 1 — Write the file"
    assert cells[2].source.startswith("%%agent --plan greet-9f8e7d6c --step 1\nWrite the file\nWrite `hello.txt`")
    assert cells[3].source == "### Step 2 — Count the words ✓", "a ticked step says so"
    assert [c.metadata["opencode_nb"] for c in cells] == [
        {"plan": "greet-9f8e7d6c", "step": n} for n in (0, 1, 1, 2, 2)]


def test_step_lines_are_recognised_with_their_options_in_any_order():
    assert parse_step_line("%%agent --plan abc-123 --step 2") == ("abc-123", 2)
    assert parse_step_line("%%agent --step=3 --model demo/x --plan=abc") == ("abc", 3)
    assert parse_step_line("%%agent --plan abc") is None
    assert parse_step_line("%%agentx --plan abc --step 1") is None
    assert parse_step_line("print('--plan a --step 1')") is None


def test_the_plan_id_is_the_files_stem_and_progress_sits_beside_the_plan():
    assert plan_id_of(PATH) == "fix-mean-1a2b3c4d"
    assert progress_path(PATH) == ".opencode/plans/fix-mean-1a2b3c4d.progress.json"
