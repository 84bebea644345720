import asyncio
import os
from pathlib import Path

import pytest

from opencode_nb.errors import DeniedError
from opencode_nb.permission import evaluate, from_config
from opencode_nb.tool.base import MAX_OUTPUT_BYTES
from opencode_nb.tool.bash import BashTool

from .fakes import RecordingContext


def gone(pid: int) -> bool:
    """True once the process has exited (a zombie waiting for init to reap it counts as gone)."""
    stat = Path(f"/proc/{pid}/stat")
    if stat.parent.parent.is_dir() and stat.parent.parent.joinpath("self").exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"
        except (FileNotFoundError, ProcessLookupError):
            return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def eventually_gone(pid: int) -> bool:
    for _ in range(100):
        if gone(pid):
            return True
        await asyncio.sleep(0.05)
    return False


async def wait_for_file(path: Path) -> str:
    for _ in range(200):
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


async def test_output_and_exit_code_come_back_and_every_command_is_asked(ctx):
    result = await BashTool().run({"command": "echo hello && exit 3", "description": "Say hello"}, ctx)
    assert result.output == "hello\n\n(exit code 3)"
    assert result.metadata["exit"] == 3 and result.title == "Say hello"
    [asked] = ctx.asked
    assert (asked.permission, asked.patterns, asked.always) == ("bash", ["echo hello", "exit 3"], ["echo *", "exit *"])
    assert asked.metadata["command"] == "echo hello && exit 3" and asked.always_ask is False


async def test_it_runs_in_the_workspace_with_bash(ctx, project):
    result = await BashTool().run({"command": "pwd; echo ${BASH_VERSION:+bash}"}, ctx)
    assert result.output.splitlines()[:2] == [str(project), "bash"]


async def test_a_command_past_what_the_system_passes_is_a_clear_error_and_one_just_within_runs(ctx, project):
    from opencode_nb.errors import ToolError
    from opencode_nb.tool.bash import MAX_COMMAND_BYTES

    filler = "# " + "x" * (MAX_COMMAND_BYTES - len("echo within\n# "))
    result = await BashTool().run({"command": "echo within\n" + filler}, ctx)
    assert result.output.startswith("within")
    with pytest.raises(ToolError) as raised:
        await BashTool().run({"command": "echo beyond\n" + filler + "x"}, ctx)
    assert "131,072 bytes long" in str(raised.value) and "write tool" in str(raised.value)
    assert "Argument list" not in str(raised.value)


async def test_a_command_with_no_output_says_so(ctx):
    assert (await BashTool().run({"command": "true"}, ctx)).output == "(no output)\n\n(exit code 0)"


async def test_an_unparseable_command_is_asked_whatever_the_rules(ctx):
    await BashTool().run({"command": "echo 'unclosed"}, ctx)
    [asked] = ctx.asked
    assert asked.always_ask is True and asked.patterns[0] == "echo 'unclosed"
    assert "could not be parsed" in asked.metadata["unparsed"]


async def test_a_denied_command_never_runs(project):
    ctx = RecordingContext(project, deny={"bash"})
    with pytest.raises(DeniedError):
        await BashTool().run({"command": "touch ran.txt"}, ctx)
    assert not (project / "ran.txt").exists()


async def test_paths_outside_the_workspace_ask_external_directory_first_in_one_request(ctx, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    await BashTool().run({"command": f"ls {tmp_path}/elsewhere && cat {tmp_path}/notes.txt"}, ctx)
    assert [a.permission for a in ctx.asked] == ["external_directory", "bash"]
    folders = [f"{tmp_path}/elsewhere/*", f"{tmp_path}/*"]
    assert ctx.asked[0].patterns == folders and ctx.asked[0].always == folders


async def test_a_refused_outside_path_stops_the_command(project, tmp_path):
    ctx = RecordingContext(project, reject={"external_directory"})
    with pytest.raises(Exception, match="rejected"):
        await BashTool().run({"command": f"touch {tmp_path}/x"}, ctx)
    assert not (tmp_path / "x").exists() and [a.permission for a in ctx.asked] == ["external_directory"]


async def test_a_plain_cd_needs_no_bash_permission(ctx):
    result = await BashTool().run({"command": "cd src"}, ctx)
    assert ctx.asked == [] and result.metadata["exit"] == 0


async def test_output_streams_into_live_updates(ctx):
    await BashTool().run({"command": "for i in 1 2 3 4; do echo line$i; sleep 0.2; done"}, ctx)
    outputs = [m["output"] for _, m in ctx.updates if m and "output" in m]
    assert len(outputs) >= 3
    assert outputs[0].startswith("line1") and outputs[-1] == "line1\nline2\nline3\nline4\n"


async def test_live_updates_are_throttled(ctx):
    await BashTool().run({"command": "for i in $(seq 200); do echo $i; sleep 0.005; done"}, ctx)
    outputs = [m for _, m in ctx.updates if m and "output" in m]
    assert 2 <= len(outputs) <= 40  # 200 writes over about a second, at most ten updates a second


async def test_a_timeout_kills_the_whole_process_group(ctx, project):
    result = await BashTool().run({"command": "sleep 30 & echo $! > child.pid; wait", "timeout": 0.5}, ctx)
    assert result.metadata["timed_out"] is True and "exceeded its timeout" in result.output
    assert await eventually_gone(int((project / "child.pid").read_text()))


async def test_a_child_that_ignores_sigterm_is_killed_after_the_grace_period(ctx, project):
    command = "bash -c 'trap \"\" TERM; echo $$ > stubborn.pid; sleep 30' & wait"
    result = await BashTool().run({"command": command, "timeout": 0.5}, ctx)
    assert result.metadata["timed_out"]
    assert await eventually_gone(int((project / "stubborn.pid").read_text()))


async def test_cancelling_kills_the_process_group_and_keeps_the_partial_output(ctx, project):
    task = asyncio.create_task(BashTool().run({"command": "echo started; sleep 30 & echo $! > child.pid; wait"},
                                              ctx))
    child = int(await wait_for_file(project / "child.pid"))
    for _ in range(400):  # the output has been read (a Stop before that has nothing to keep)
        if any(str((update or {}).get("output", "")).startswith("started") for _, update in ctx.updates):
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await eventually_gone(child)
    assert ctx.updates[-1][1]["output"].startswith("started")


async def test_a_background_process_holding_the_output_is_stopped_once_the_shell_exits(ctx, project):
    result = await BashTool().run({"command": "(sleep 30; echo late) & echo $! > bg.pid; echo done"}, ctx)
    assert result.output.startswith("done") and "were stopped" in result.output
    assert await eventually_gone(int((project / "bg.pid").read_text()))


async def test_a_background_process_with_its_own_output_file_is_left_running(ctx, project):
    result = await BashTool().run({"command": "sleep 30 > /dev/null 2>&1 & echo $! > bg.pid"}, ctx)
    pid = int((project / "bg.pid").read_text())
    try:
        assert "were stopped" not in result.output and not gone(pid)
    finally:
        os.kill(pid, 9)


async def test_a_huge_output_keeps_its_tail_and_saves_the_rest(ctx):
    result = await BashTool().run({"command": "seq 1 300000"}, ctx)
    assert result.metadata["truncated"] is True
    saved = Path(result.metadata["output_path"])
    assert saved.read_text().splitlines()[-1] == "300000" and saved.parent == ctx.data_dir / "tool-output"
    assert result.output.startswith("(Output truncated: ") and "300000\n\n(exit code 0)" in result.output
    assert len(result.output.encode()) < MAX_OUTPUT_BYTES + 1000


async def test_multibyte_characters_survive_chunk_boundaries(ctx):
    result = await BashTool().run({"command": "python3 -c \"print('é' * 100000)\""}, ctx)
    assert "\ufffd" not in result.output and "éé" in result.output


async def test_the_timeout_is_validated(ctx):
    with pytest.raises(Exception, match="timeout"):
        await BashTool().run({"command": "true", "timeout": 601}, ctx)


async def test_a_timeout_in_milliseconds_is_explained(ctx):
    with pytest.raises(Exception, match="timeout is in seconds and at most 600 \\(120000 looks like milliseconds\\)"):
        await BashTool().run({"command": "true", "timeout": 120000}, ctx)


async def test_an_empty_command_is_an_error(ctx):
    with pytest.raises(Exception, match="command is empty"):
        await BashTool().run({"command": "   "}, ctx)


# ------------------------------------------------------------------------------ what the rules cannot see

def with_rules(ctx: RecordingContext, bash: dict) -> RecordingContext:
    """The context as the loop builds it: the agent's rules readable by the tool."""
    rules = from_config({"bash": bash})
    ctx.rules = lambda permission: [r for r in rules if r.permission == permission]
    ctx.permitted = lambda permission, pattern: evaluate(permission, pattern, rules).action
    return ctx


async def test_code_no_rule_sees_asks_a_person_when_the_rules_deny_something(ctx):
    with_rules(ctx, {"*": "allow", "rm *": "deny"})
    await BashTool().run({"command": "python3 -c 'print(1)'"}, ctx)
    [asked] = ctx.asked
    assert asked.always_ask is True and asked.always == []
    assert "runs code given on the command line" in asked.metadata["unchecked"][0]


@pytest.mark.parametrize("bash", [{"*": "allow"}, {"*": "allow", "rm *": "deny", "python3 *": "allow"},
                                  {"rm *": "deny", "*": "allow"}])
async def test_code_no_rule_sees_runs_when_nothing_is_denied_or_a_rule_names_the_program(ctx, bash):
    with_rules(ctx, bash)
    result = await BashTool().run({"command": "python3 -c 'print(1)'"}, ctx)
    assert result.output.startswith("1") and [a.always_ask for a in ctx.asked] == [False]


async def test_a_program_only_the_run_can_name_asks_whatever_the_rules_allow(ctx):
    with_rules(ctx, {"*": "allow"})
    await BashTool().run({"command": "cmd=true; $cmd"}, ctx)
    [asked] = ctx.asked
    assert asked.always_ask is True and "`$cmd` is only known when the line runs" in asked.metadata["unchecked"][0]


async def test_without_the_rules_at_hand_code_no_rule_sees_asks(ctx):
    await BashTool().run({"command": "echo 'print(1)' | python3"}, ctx)
    assert ctx.asked[-1].always_ask is True


async def test_a_statement_with_no_command_word_is_checked(ctx):
    with_rules(ctx, {"*": "allow", "rm *": "deny"})
    await BashTool().run({"command": "y='a[$(touch made)]'; (( y ))"}, ctx)
    [asked] = ctx.asked
    assert "(( y ))" in asked.patterns and asked.always_ask is True


async def test_paths_built_from_the_environment_ask_external_directory_as_written(ctx):
    await BashTool().run({"command": "ls ~/x $HOME/y >/dev/null 2>&1; true"}, ctx)
    assert ctx.asked[0].permission == "external_directory" and ctx.asked[0].patterns == ["~/x", "$HOME/y"]


async def test_writing_git_s_own_files_asks_git_internals(ctx, project):
    (project / ".git" / "hooks").mkdir(parents=True)
    await BashTool().run({"command": "echo 'exit 0' > .git/hooks/pre-commit"}, ctx)
    assert [a.permission for a in ctx.asked] == ["git_internals", "bash"]
    assert ctx.asked[0].patterns == [".git/hooks/pre-commit"] and ctx.asked[1].always_ask is True
