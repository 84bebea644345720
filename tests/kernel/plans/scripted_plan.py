"""The scripted model the plan tests run on, written into each test's project as `plan_model.py`.

As the plan agent it writes a three-step plan to the path it was given and asks for approval (`plan_exit`);
told to keep planning, it says it will revise. As the build agent it carries out each step with one `bash`
command and ends with what the command printed. What it was asked is kept in the module, for the tests to
read back from the kernel.
"""

MODEL = '''
import re
from opencode_nb.provider.builtin.history import last_turn
from opencode_nb.provider.request import TextBlock

PLAN = """# Write and count a greeting

Goal: a file with a greeting, and its word count.

1. Write `hello.txt` containing the words hello plan cells.
2. Count the words in `hello.txt`.
3. Say goodbye.
"""
COMMANDS = {"1": "printf 'hello plan cells' > hello.txt", "2": "wc -w < hello.txt", "3": "echo bye"}
STEP_REQUESTS = []
"""(step, the model-facing text of its prompt), for each step run."""
FAIL = set()
"""Steps whose request fails at the provider."""
PLANNER_READ = []
"""What plan_exit told the plan agent, each time it did not end planning."""
BUILD_TOLD = []
"""The build agent's newest user texts, each time it answered outside a step."""


def respond(request):
    texts, done = last_turn(request)
    if "You are the plan agent" in "\\n".join(request.system):
        if not done:
            every = "\\n".join(b.text for m in request.messages for b in m.content if isinstance(b, TextBlock))
            path = re.search(r"(\\.opencode/plans/[\\w.-]+\\.md)", every).group(1)
            return {"tool_calls": [{"name": "write", "input": {"path": path, "content": PLAN}}]}
        if done[-1].name == "plan_exit":
            PLANNER_READ.append(done[-1].output)
            return {"text": "I will revise the plan as you said."}
        return {"text": "The plan is ready.", "tool_calls": [{"name": "plan_exit", "input": {}}]}
    step = next((m.group(1) for t in texts if (m := re.search(r"This is step (\\d+) of", t))), None)
    if step is None:
        BUILD_TOLD.append("\\n".join(texts))
        return {"text": "The steps are ready."}
    if not done:
        STEP_REQUESTS.append((step, texts[-1]))
        if int(step) in FAIL:
            return {"error": {"message": "the model is overloaded", "status": 400}}
        return {"tool_calls": [{"name": "bash", "input": {"command": COMMANDS[step], "description": "step " + step}}]}
    return {"text": f"Step {step} is done: {done[-1].output.strip()}"}
'''
