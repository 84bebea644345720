import asyncio
import os
import time

import pytest

from opencode_nb.errors import DeniedError
from opencode_nb.tool.bash import BashTool, command_patterns
from opencode_nb.tool.shell import parse_command

from .fakes import recording_context


@pytest.mark.parametrize(("command", "patterns", "always"), [
    ("ls -la", ["ls -la"], ["ls *"]),
    ("git checkout main", ["git checkout main"], ["git checkout *"]),
    ("npm run build -- --watch", ["npm run build -- --watch"], ["npm run build *"]),
    ("a && b; c | d", ["a", "b", "c", "d"], ["a *", "b *", "c *", "d *"]),
    ("echo $(whoami)", ["echo $(whoami)", "whoami"], ["echo *", "whoami *"]),
    ("echo `date`", ["echo `date`", "date"], ["echo *", "date *"]),
    ("(cd sub && rm -rf build)", ["cd sub", "rm -rf build"], ["cd *", "rm *"]),
    ("echo hi > out.txt 2>&1", ["echo hi"], ["echo *"]),
    ("FOO=1 make test", ["make test"], ["make test *"]),
    ("env FOO=1 python x.py", ["env FOO=1 python x.py", "python x.py"], ["env *", "python *"]),
    ("sudo rm -rf /", ["sudo rm -rf /", "rm -rf /"], ["sudo *", "rm *"]),
    ("python -m pytest -q", ["python -m pytest -q"], ["python -m pytest *"]),
])
def test_each_simple_command_is_checked_on_its_own(command, patterns, always):
    assert command_patterns(command) == (patterns, always)


def test_an_unparseable_line_is_flagged():
    parsed = parse_command("echo 'unclosed")
    assert not parsed.parsed and parsed.patterns


async def test_output_and_exit_code_come_back_and_the_patterns_are_asked(ctx):
    result = await BashTool().run({"command": "echo hello && exit 3", "description": "say hello"}, ctx)
    assert result.output.startswith("hello") and "(Exit code 3.)" in result.output
    assert result.metadata["exit"] == 3 and result.title == "say hello"
    [asked] = ctx.extra["asked"]
    assert (asked.permission, asked.patterns, asked.always) == ("bash", ["echo hello", "exit 3"], ["echo *", "exit *"])


async def test_an_unparseable_command_is_asked_whatever_the_rules(ctx):
    await BashTool().run({"command": "echo 'unclosed"}, ctx)
    assert ctx.extra["asked"][0].always_ask is True


async def test_a_denied_command_never_runs(project):
    ctx = recording_context(project, deny={"bash"})
    with pytest.raises(DeniedError):
        await BashTool().run({"command": "touch ran.txt"}, ctx)
    assert not (project / "ran.txt").exists()


async def test_paths_outside_the_workspace_ask_external_directory(ctx, tmp_path):
    await BashTool().run({"command": f"ls {tmp_path}"}, ctx)
    assert ("external_directory", [f"{tmp_path}/*"]) in [(a.permission, a.patterns) for a in ctx.extra["asked"]]


async def test_output_streams_into_live_updates(ctx):
    await BashTool().run({"command": "for i in 1 2 3; do echo line$i; sleep 0.15; done"}, ctx)
    outputs = [m["output"] for _, m in ctx.extra["updates"] if m]
    assert len(outputs) >= 2 and outputs[-1].startswith("line1")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_a_timeout_kills_the_whole_process_group(ctx, project):
    result = await BashTool().run({"command": "sleep 30 & echo $! > child.pid; wait", "timeout": 0.5}, ctx)
    assert result.metadata["timed_out"] and "timed out" in result.output
    child = int((project / "child.pid").read_text())
    for _ in range(50):
        if not _alive(child):
            break
        await asyncio.sleep(0.05)
    assert not _alive(child)


async def test_cancelling_kills_the_process_group_too(ctx, project):
    task = asyncio.create_task(BashTool().run({"command": "sleep 30 & echo $! > child.pid; wait"}, ctx))
    for _ in range(100):
        if (project / "child.pid").exists() and (project / "child.pid").read_text().strip():
            break
        await asyncio.sleep(0.02)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 0.5
    child = int((project / "child.pid").read_text())
    for _ in range(50):
        if not _alive(child):
            break
        await asyncio.sleep(0.05)
    assert not _alive(child)
