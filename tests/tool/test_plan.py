"""plan_exit in a notebook saves the approved plan as step cells under the calling cell; elsewhere it hands the
plan to the build agent as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from opencode_nb import Workspace
from opencode_nb.provider import Scripted
from opencode_nb.provider.request import LLMRequest, TextBlock, ToolResultBlock

from .memory_notebook import MemoryNotebook

PLAN = "# Greet\n\nGoal: a greeting on disk.\n\n1. Write `hello.txt`.\n2. Count its words.\n"


class Planner:
    """The plan agent writes `plan` to its plan file and calls plan_exit; the build agent then answers
    `build_text`. Records every step request."""

    def __init__(self, plan: str = PLAN, build_text: str = "The steps are ready to run.") -> None:
        self.plan = plan
        self.build_text = build_text
        self.requests: list[LLMRequest] = []
        self.plan_path = ""

    def __call__(self, request: LLMRequest) -> Any:
        self.requests.append(request)
        system = "\n".join(request.system)
        results = [b for m in request.messages for b in m.content if isinstance(b, ToolResultBlock)]
        if "You are the plan agent" in system:
            if not results:
                text = next(b.text for m in request.messages for b in m.content
                            if isinstance(b, TextBlock) and "your plan file, " in b.text)
                self.plan_path = text.split("your plan file, ", 1)[1].split(",", 1)[0]
                return {"tool_calls": [{"name": "write", "input": {"path": self.plan_path, "content": self.plan}}]}
            if results[-1].name == "write":
                return {"tool_calls": [{"name": "plan_exit", "input": {}}]}
            return {"text": "Revising the plan."}
        return {"text": self.build_text}


@pytest.fixture
def workspace(tmp_path: Path):
    made: list[Workspace] = []

    def make(*, notebook: MemoryNotebook | None, answer: str = "Yes") -> tuple[Workspace, Planner, list[Any]]:
        root = tmp_path / f"proj{len(made)}"
        (root / ".git").mkdir(parents=True)
        asked: list[Any] = []

        def on_question(request: Any) -> list[list[str]]:
            asked.append(request)
            return [[answer]]

        ws = Workspace(root, {"model": "scripted/demo", "permission": {"edit": "allow"}},
                       data_dir=tmp_path / "data", env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")},
                       on_question=on_question)
        planner = Planner()
        ws.providers.register("scripted", Scripted(respond=planner))
        ws.notebook = notebook
        made.append(ws)
        return ws, planner, asked

    yield make
    for ws in made:
        ws.close()


def _tool(ws: Workspace, session_id: str, name: str) -> Any:
    return next(p for m in ws.sessions.messages(session_id) for p in m.parts
                if getattr(p, "tool", None) == name)


def _users(ws: Workspace, session_id: str) -> list[tuple[str, bool, str]]:
    return [(m.message.agent, m.message.synthetic, " ".join(getattr(p, "text", "") for p in m.parts))
            for m in ws.sessions.messages(session_id) if m.message.role == "user"]


async def test_in_a_notebook_an_approved_plan_becomes_step_cells_under_the_calling_cell(workspace):
    notebook = MemoryNotebook(["%%agent --agent plan\nplan a greeting", "print('after')"], calling="cell-0")
    ws, planner, asked = workspace(notebook=notebook)
    session = ws.sessions.create()
    result = await ws.prompt(session.id, "plan a greeting", agent="plan")

    plan_id = Path(planner.plan_path).stem
    assert plan_id == session.slug
    sources = [c.source for c in notebook.cells]
    assert sources[0].startswith("%%agent --agent plan") and sources[-1] == "print('after')"
    assert sources[1].startswith("## Greet\n\na greeting on disk.")
    assert sources[2:6] == ["### Step 1 — Write `hello.txt`.", f"%%agent --plan {plan_id} --step 1\nWrite `hello.txt`.",
                            "### Step 2 — Count its words.", f"%%agent --plan {plan_id} --step 2\nCount its words."]
    assert notebook.inserted[0][0] is None and notebook.inserted[0][1] == session.id, "under the calling cell"

    assert [(t.content, t.status, t.id) for t in ws.sessions.todos(session.id)] == [
        ("Write `hello.txt`.", "pending", "1"), ("Count its words.", "pending", "2")]
    question = asked[0].questions[0]
    assert question.question.endswith("is ready (2 steps). What now?")
    assert [o.label for o in question.options] == ["Run the steps now", "Save them as cells to run one by one",
                                                   "Keep planning"]

    exit_part = _tool(ws, session.id, "plan_exit")
    assert exit_part.state.title == "Saved the plan as 2 steps in cells to run now"
    assert "Do not carry out any step now" in exit_part.state.output
    assert exit_part.state.metadata["plan"] == plan_id and len(exit_part.state.metadata["cells"]) == 5
    users = _users(ws, session.id)
    assert [(a, s) for a, s, _ in users] == [("plan", False), ("build", True)]
    assert "saved as 2 steps in notebook cells" in users[1][2] and "Do not carry out any step now" in users[1][2]
    assert result.agent == "build" and result.text == "The steps are ready to run."
    assert ws.sessions.current_agent(session.id) == "build"


async def test_outside_a_notebook_plan_exit_hands_the_plan_to_the_build_agent_as_before(workspace):
    ws, planner, asked = workspace(notebook=None)
    session = ws.sessions.create()
    await ws.prompt(session.id, "plan a greeting", agent="plan")
    assert asked[0].questions[0].question == f"The plan at {planner.plan_path} is ready. What now?"
    assert [o.label for o in asked[0].questions[0].options] == ["Run the steps now", "Keep planning"]
    assert _tool(ws, session.id, "plan_exit").state.output == ("The person approved the plan; the build agent "
                                                               "carries it out.")
    assert "Execute it step by step" in _users(ws, session.id)[1][2]
    assert ws.sessions.todos(session.id) == []


async def test_a_notebook_that_cannot_be_read_is_no_notebook_for_plan_exit(workspace):
    notebook = MemoryNotebook(refuse="No notebook file is known: set OPENCODE_NB_NOTEBOOK.", unreadable=True)
    ws, _, asked = workspace(notebook=notebook)
    session = ws.sessions.create()
    await ws.prompt(session.id, "plan a greeting", agent="plan")
    assert [o.label for o in asked[0].questions[0].options] == ["Run the steps now", "Keep planning"]
    assert notebook.inserted == []


async def test_when_the_cells_cannot_be_inserted_the_result_says_so_and_the_plan_is_carried_out(workspace):
    notebook = MemoryNotebook(["x = 1"], refuse="The notebook has unsaved changes in another window.")
    ws, _, asked = workspace(notebook=notebook)
    session = ws.sessions.create()
    await ws.prompt(session.id, "plan a greeting", agent="plan")
    assert "Save them as cells to run one by one" in [o.label for o in asked[0].questions[0].options]
    part = _tool(ws, session.id, "plan_exit")
    assert part.state.status == "completed"
    assert "could not be saved as notebook cells: The notebook has unsaved changes" in part.state.output
    assert "the build agent carries out the plan now" in part.state.output
    assert "Execute it step by step" in _users(ws, session.id)[1][2]
    assert [c.source for c in notebook.cells] == ["x = 1"]


async def test_saying_no_keeps_planning_and_inserts_nothing(workspace):
    notebook = MemoryNotebook(["x = 1"])
    ws, _, _ = workspace(notebook=notebook, answer="No")
    session = ws.sessions.create()
    await ws.prompt(session.id, "plan a greeting", agent="plan")
    assert "keep planning" in _tool(ws, session.id, "plan_exit").state.error
    assert len(notebook.cells) == 1 and ws.sessions.current_agent(session.id) == "plan"


async def test_a_plan_without_steps_goes_back_to_the_plan_agent_before_anyone_is_asked(workspace):
    notebook = MemoryNotebook(["x = 1"])
    ws, planner, asked = workspace(notebook=notebook)
    planner.plan = "# Greet\n\nJust write a greeting somewhere.\n"
    session = ws.sessions.create()
    await ws.prompt(session.id, "plan a greeting", agent="plan")
    error = _tool(ws, session.id, "plan_exit").state.error
    assert "has no steps: write them as a numbered list" in error and "call plan_exit again" in error
    assert asked == [] and len(notebook.cells) == 1


async def test_approving_a_plan_again_forgets_the_progress_of_its_earlier_version(workspace):
    notebook = MemoryNotebook(["x = 1"])
    ws, _, _ = workspace(notebook=notebook)
    session = ws.sessions.create()
    progress = ws.root / ".opencode" / "plans" / f"{session.slug}.progress.json"
    progress.parent.mkdir(parents=True)
    progress.write_text('{"plan": "old", "steps": {"1": {"status": "done", "runs": 3}}}')
    await ws.prompt(session.id, "plan a greeting", agent="plan")
    assert not progress.exists()


async def test_a_plan_approved_again_replaces_the_plan_cells_under_the_calling_cell(workspace):
    """Run All in a new kernel plans again: the new plan takes the old cells' place, the person's cells stay."""
    notebook = MemoryNotebook(["%%agent --agent plan\nplan a greeting", "print('after')"], calling="cell-0")
    ws, _planner, _asked = workspace(notebook=notebook)
    first = ws.sessions.create()
    await ws.prompt(first.id, "plan a greeting", agent="plan")
    assert len(notebook.cells) == 7

    ws.providers.register("scripted", Scripted(respond=Planner(PLAN.replace("Count its words.", "Count lines."))))
    second = ws.sessions.create()
    await ws.prompt(second.id, "plan a greeting", agent="plan")

    sources = [c.source for c in notebook.cells]
    assert len(sources) == 7 and sources[0].startswith("%%agent") and sources[-1] == "print('after')"
    assert sources[5] == f"%%agent --plan {second.slug} --step 2\nCount lines."
    assert not any(first.slug in s for s in sources)
