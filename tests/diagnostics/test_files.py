"""After `write` and `edit` change a Python file, the model reads ruff's error-level findings in the result,
with their lines; a clean file, a non-Python file and style problems add nothing; the card gets the count."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from opencode_nb.tool.edit import EditTool
from opencode_nb.tool.write import WriteTool

UNDEFINED = "import os\n\n\ndef size(path):\n    return os.path.getsize(pth)\n"


async def test_an_undefined_name_reaches_the_model_with_its_line_and_column(ctx, diagnostics):
    result = await WriteTool(diagnostics()).run({"path": "src/size.py", "content": UNDEFINED}, ctx)
    assert result.output == ("Created src/size.py (5 lines).\n\n"
                             "Problems found in src/size.py after this edit, please fix:\n"
                             "ERROR [5:28] F821 Undefined name `pth`")
    found = result.metadata["diagnostics"]
    assert (found["count"], found["checkers"], found["where"]) == (1, ["ruff"], "src/size.py")
    assert found["findings"][0] == {"line": 5, "column": 28, "code": "F821", "message": "Undefined name `pth`",
                                    "source": "ruff"}
    assert result.metadata["summary"] == "Created src/size.py (5 lines)"  # the person's words are unchanged


async def test_a_clean_file_adds_nothing_for_the_model_and_is_known_to_be_checked(ctx, diagnostics):
    result = await WriteTool(diagnostics()).run({"path": "src/ok.py", "content": "X = 1\n"}, ctx)
    assert result.output == "Created src/ok.py (1 line)."
    assert result.metadata["diagnostics"]["count"] == 0 and result.metadata["diagnostics"]["checkers"] == ["ruff"]


async def test_style_is_not_the_model_s_concern_here(ctx, diagnostics):
    styled = "import os, sys\nimport json\nx=1;y = 2   \n" + "z = '" + "a" * 150 + "'\n"
    result = await WriteTool(diagnostics()).run({"path": "src/style.py", "content": styled}, ctx)
    assert "Problems found" not in result.output


async def test_a_syntax_error_is_reported_at_its_line(ctx, diagnostics):
    result = await WriteTool(diagnostics()).run({"path": "src/broken.py", "content": "x = 1\ndef f(:\n    pass\n"},
                                                ctx)
    first = next(row for row in result.output.splitlines() if row.startswith("ERROR"))
    assert first.startswith("ERROR [2:7] invalid-syntax ")


async def test_errors_python_raises_at_run_time_are_reported(ctx, diagnostics):
    code = ("def f():\n    yield 1\n\n\nreturn 3\n"
            "print('%s %s' % (1,))\n"
            "async def g():\n    pass\n\n\ndef h():\n    await g()\n")
    result = await WriteTool(diagnostics()).run({"path": "src/runtime.py", "content": code}, ctx)
    codes = [f["code"] for f in result.metadata["diagnostics"]["findings"]]
    assert codes == ["F706", "F507", "PLE1142"]


async def test_the_findings_are_capped_per_file_and_the_rest_counted(ctx, diagnostics):
    content = "".join(f"v{i} = missing_{i}\n" for i in range(30))
    result = await WriteTool(diagnostics(diagnostics={"max_per_file": 20})).run(
        {"path": "src/many.py", "content": content}, ctx)
    errors = [row for row in result.output.splitlines() if row.startswith("ERROR")]
    assert len(errors) == 20 and errors[-1] == "ERROR [20:7] F821 Undefined name `missing_19`"
    assert result.output.endswith("\n... and 10 more")
    assert result.metadata["diagnostics"]["count"] == 30 and len(result.metadata["diagnostics"]["findings"]) == 20


@pytest.mark.parametrize("config", [{"diagnostics": {"enabled": False}}, {"diagnostics": False},
                                    {"diagnostics": {"python": []}}])
async def test_switched_off_nothing_is_checked(ctx, diagnostics, config):
    result = await WriteTool(diagnostics(**config)).run({"path": "src/size.py", "content": UNDEFINED}, ctx)
    assert result.output == "Created src/size.py (5 lines)."
    assert result.metadata.get("diagnostics", {"count": 0})["count"] == 0


async def test_a_tool_made_without_diagnostics_checks_nothing(ctx):
    result = await WriteTool().run({"path": "src/size.py", "content": UNDEFINED}, ctx)
    assert result.output == "Created src/size.py (5 lines)." and "diagnostics" not in result.metadata


async def test_only_python_files_are_checked(ctx, diagnostics):
    result = await WriteTool(diagnostics()).run({"path": "notes.md", "content": "x = undefined\n"}, ctx)
    assert result.output == "Created notes.md (1 line)." and "diagnostics" not in result.metadata


async def test_an_edit_that_breaks_a_name_is_told_so(ctx, diagnostics, project):
    (project / "src" / "size.py").write_text("import os\n\n\ndef size(path):\n    return os.path.getsize(path)\n")
    result = await EditTool(diagnostics()).run(
        {"path": "src/size.py", "old_string": "getsize(path)", "new_string": "getsize(pth)"}, ctx)
    assert result.output == ("Edited src/size.py: +1 -1 lines.\n\n"
                             "Problems found in src/size.py after this edit, please fix:\n"
                             "ERROR [5:28] F821 Undefined name `pth`")


async def test_the_project_s_own_ruff_settings_apply(ctx, diagnostics, project):
    (project / "pyproject.toml").write_text('[tool.ruff]\nbuiltins = ["spark"]\n')
    result = await WriteTool(diagnostics()).run({"path": "src/job.py", "content": "spark.read(path)\n"}, ctx)
    assert result.output.endswith("ERROR [1:12] F821 Undefined name `path`")  # spark is a builtin there


async def test_ruff_settings_that_do_not_load_do_not_stop_the_check(ctx, diagnostics, project):
    (project / "pyproject.toml").write_text("[tool.ruff]\nno_such_setting = 1\n")
    result = await WriteTool(diagnostics()).run({"path": "src/job.py", "content": "print(path)\n"}, ctx)
    assert result.output.endswith("ERROR [1:7] F821 Undefined name `path`")


async def test_a_missing_ruff_is_said_to_the_person_and_the_edit_stands(ctx, diagnostics, project, monkeypatch):
    from opencode_nb.diagnostics import ruff

    monkeypatch.setattr(ruff, "ruff_binary", lambda: None)
    result = await WriteTool(diagnostics()).run({"path": "src/size.py", "content": UNDEFINED}, ctx)
    assert result.output == "Created src/size.py (5 lines)." and (project / "src/size.py").read_text() == UNDEFINED
    assert result.metadata["diagnostics"]["notes"] == ["ruff is not installed"]
    assert result.metadata["diagnostics"]["checkers"] == []


async def test_a_checker_that_never_answers_costs_its_timeout_and_no_more(ctx, project):
    """A language server that starts and says nothing (here: a shell that sleeps) is given up on at the
    timeout; the edit's result goes on with ruff's findings and a note for the person."""
    from opencode_nb.config.schema import DiagnosticsConfig
    from opencode_nb.diagnostics import Diagnostics

    silent = Diagnostics(DiagnosticsConfig(python=["ruff", "pyright"], timeout_s=0.5),
                         servers=lambda: ("pyright", ["/bin/sh", "-c", "sleep 30"]))
    started = time.monotonic()
    result = await WriteTool(silent).run({"path": "src/size.py", "content": UNDEFINED}, ctx)
    assert time.monotonic() - started < 3
    assert result.output.endswith("ERROR [5:28] F821 Undefined name `pth`")
    assert result.metadata["diagnostics"]["notes"] == [
        "pyright did not answer within 0.5 s (it may still be starting)"]
    [server] = silent._servers.values()
    pid = server._process.pid
    await silent.aclose()
    await _gone(pid)


async def test_pyright_listed_but_not_installed_is_said_once(ctx, project):
    from opencode_nb.config.schema import DiagnosticsConfig
    from opencode_nb.diagnostics import Diagnostics

    none = Diagnostics(DiagnosticsConfig(python=["ruff", "pyright"]), servers=lambda: None)
    first = await WriteTool(none).run({"path": "src/a.py", "content": "X = 1\n"}, ctx)
    second = await WriteTool(none).run({"path": "src/b.py", "content": "Y = 1\n"}, ctx)
    assert "neither pyright nor basedpyright is installed" in first.metadata["diagnostics"]["notes"][0]
    assert second.metadata["diagnostics"]["notes"] == []


async def _gone(pid: int) -> None:
    import asyncio
    import os

    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        try:  # a zombie until the event loop's child watcher reaps it
            if Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] == "Z":
                return
        except (FileNotFoundError, IndexError):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"process {pid} is still running")


async def test_a_formatter_runs_before_the_check_and_the_check_reads_its_result(ctx, diagnostics, project):
    fmt = {"formatter": {"ruff": {"command": ["ruff", "format", "$FILE"], "extensions": [".py"]}}}
    result = await WriteTool(diagnostics(**fmt)).run({"path": "src/f.py", "content": "x=[1,2 ,3]\ny=zz\n"}, ctx)
    assert (project / "src" / "f.py").read_text() == "x = [1, 2, 3]\ny = zz\n"
    assert result.output.endswith("ERROR [2:5] F821 Undefined name `zz`")  # column 5: the formatted line's
    assert "+x = [1, 2, 3]" in result.metadata["diff"]


async def test_a_failing_formatter_leaves_the_file_as_written_and_tells_the_person(ctx, diagnostics, project):
    fmt = {"formatter": {"broken": {"command": ["sh", "-c", "echo cannot parse >&2; exit 3", "$FILE"],
                                    "extensions": [".py"]}}}
    result = await WriteTool(diagnostics(**fmt)).run({"path": "src/f.py", "content": "x=1\n"}, ctx)
    assert (project / "src" / "f.py").read_text() == "x=1\n" and "formatted" not in result.output
    assert result.metadata["formatted"] == {"ran": [], "notes": ["formatter broken failed (exit code 3): cannot parse"]}


async def test_a_formatter_for_other_files_does_not_run(ctx, diagnostics, project):
    fmt = {"formatter": {"md": {"command": ["sh", "-c", "echo ran > ran.txt"], "extensions": [".md"]}}}
    await WriteTool(diagnostics(**fmt)).run({"path": "src/f.py", "content": "x=1\n"}, ctx)
    assert not (project / "ran.txt").exists()


async def test_a_formatter_that_changes_nothing_is_not_worth_a_word_to_the_model(ctx, diagnostics, project):
    fmt = {"formatter": {"ruff": {"command": ["ruff", "format", "$FILE"], "extensions": [".py"]}}}
    result = await WriteTool(diagnostics(**fmt)).run({"path": "src/f.py", "content": "x = 1\n"}, ctx)
    assert result.output == "Created src/f.py (1 line)." and result.metadata["formatted"]["ran"] == ["ruff"]


async def test_a_checker_that_exits_is_said_to_have_stopped_and_the_edit_goes_on(ctx, project):
    from opencode_nb.config.schema import DiagnosticsConfig
    from opencode_nb.diagnostics import Diagnostics

    gone = Diagnostics(DiagnosticsConfig(python=["ruff", "pyright"], timeout_s=10),
                       servers=lambda: ("pyright", ["/bin/sh", "-c", "exit 1"]))
    started = time.monotonic()
    result = await WriteTool(gone).run({"path": "src/size.py", "content": UNDEFINED}, ctx)
    assert time.monotonic() - started < 5
    assert result.output.endswith("ERROR [5:28] F821 Undefined name `pth`")
    assert result.metadata["diagnostics"]["notes"] == ["pyright stopped: pyright exited"]
    await gone.aclose()
