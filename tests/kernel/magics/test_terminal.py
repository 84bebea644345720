"""Terminal IPython's asking: one question at a time, and never an approval by accident."""

from __future__ import annotations

import threading
import time

from opencode_nb.kernel.magics.terminal import wire
from opencode_nb.provider.scripted import Scripted
from opencode_nb.workspace import Workspace

TWO = [{"tool_calls": [{"name": "bash", "input": {"command": "echo one", "description": "one"}},
                       {"name": "bash", "input": {"command": "echo two", "description": "two"}}]},
       {"text": "Done."}]


def workspace(tmp_path, turns):
    ws = Workspace(tmp_path, {"model": "scripted/t", "permission": {"bash": "ask"}}, data_dir=tmp_path / "d", env={})
    ws.providers.register("scripted", Scripted(turns))
    return ws


class Terminal:
    """Answers prompts from a list, recording how many were open at once."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.prompts: list[str] = []
        self.open = self.most_open = 0
        self.lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        with self.lock:
            self.open += 1
            self.most_open = max(self.most_open, self.open)
            self.prompts.append(prompt)
        time.sleep(0.05)
        with self.lock:
            self.open -= 1
            if not self.answers:
                raise EOFError
            return self.answers.pop(0)


def outcomes(ws, session_id):
    return sorted((p.state.input["command"], p.state.status) for m in ws.sessions.messages(session_id)
                  for p in m.parts if p.type == "tool")


async def test_parallel_asks_are_put_one_at_a_time(tmp_path):
    ws = workspace(tmp_path, TWO)
    terminal = Terminal(["o", "a"])
    off = wire(ws, read=terminal)
    session = ws.sessions.create(str(tmp_path))
    await ws.prompt(session.id, "run both")
    assert terminal.most_open == 1 and len(terminal.prompts) == 2
    assert outcomes(ws, session.id) == [("echo one", "completed"), ("echo two", "completed")]
    off()
    await ws.aclose()


async def test_an_empty_line_refuses_and_a_closed_input_refuses_instead_of_hanging(tmp_path):
    ws = workspace(tmp_path, TWO)
    off = wire(ws, read=Terminal([""]))  # Enter, then end of input
    session = ws.sessions.create(str(tmp_path))
    await ws.prompt(session.id, "run both")
    assert outcomes(ws, session.id) == [("echo one", "error"), ("echo two", "error")]
    off()
    await ws.aclose()


PLAN_FIRST = [{"text": "Planning first.", "tool_calls": [{"name": "plan_enter", "input": {}}]},
              {"text": "Here is my plan."}]


async def test_a_mode_switch_is_one_short_line_not_the_instructions_written_for_the_model(tmp_path):
    import io

    ws = workspace(tmp_path, PLAN_FIRST)
    out, terminal = io.StringIO(), Terminal(["1"])
    off = wire(ws, read=terminal, out=out)
    session = ws.sessions.create(str(tmp_path))
    await ws.prompt(session.id, "make a plan")
    text = out.getvalue()
    assert "Switch to the plan agent" in terminal.prompts[0]
    assert "✓ plan_enter Switched to planning" in text and "\n  → @plan takes over\n" in text
    assert text.index("✓ plan_enter") < text.index("→ @plan takes over") < text.index("plan: Here is my plan.")
    assert "Research the task" not in text and "(mode switch)" not in text and "you: The person asked" not in text
    assert "asked: Switch" not in text, "the question put on the terminal is not printed a second time"
    off()
    await ws.aclose()


async def test_each_ask_is_one_line_just_above_the_call_it_was_for(tmp_path):
    import io

    ws = workspace(tmp_path, TWO)
    out, terminal = io.StringIO(), Terminal(["a"])  # "always" for the first covers the second
    off = wire(ws, read=terminal, out=out)
    session = ws.sessions.create(str(tmp_path))
    await ws.prompt(session.id, "run both")
    text = out.getvalue()
    assert len(terminal.prompts) == 1 and "? build asks for bash: echo one" in terminal.prompts[0]
    assert "? permission" not in text and "asked for bash echo one" not in text, "answered at the prompt: no echo"
    assert text.count("asked for bash echo two") == 1
    assert text.index("? build asked for bash echo two: always allowed") < text.index("✓ bash two")
    off()
    await ws.aclose()


async def test_a_refused_call_reads_rejected_by_you_with_the_reason_typed(tmp_path):
    import io

    from opencode_nb.errors import MODEL_TEMPLATES

    ws = workspace(tmp_path, TWO)
    out = io.StringIO()
    off = wire(ws, read=Terminal(["use the staging folder", "r"]), out=out)
    session = ws.sessions.create(str(tmp_path))
    await ws.prompt(session.id, "run both")
    text = out.getvalue()
    assert "Rejected by you: “use the staging folder”" in text
    assert not [t for t in MODEL_TEMPLATES if t in text], text
    off()
    await ws.aclose()
