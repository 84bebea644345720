"""A program under another name is that program: copies and links of installed programs are judged as them."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from opencode_nb.tool.shell import identity
from opencode_nb.tool.shell.identity import identify
from opencode_nb.tool.shell.parse import parse_command

RM = shutil.which("rm")
ENV = shutil.which("env")


def patterns(line: str, cwd: Path) -> list[str]:
    return parse_command(line, cwd=cwd).patterns


def hidden(line: str, cwd: Path) -> list[str]:
    return [h.reason for h in parse_command(line, cwd=cwd).hidden]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root


@pytest.mark.parametrize("make", [
    f"cp {RM} del", f"ln -s {RM} del", f"ln {RM} del", f"install {RM} del", f"cat {RM} > del; chmod +x del",
])
def test_a_copy_or_link_of_a_program_is_judged_as_that_program(project, make):
    done = subprocess.run(["bash", "-c", make], cwd=project, capture_output=True)
    if done.returncode and "Invalid cross-device link" in done.stderr.decode():
        pytest.skip("the project is on another file system than the programs: no hard link")
    assert "rm x" in patterns("./del x", project)
    assert hidden("./del x", project) == []


@pytest.mark.parametrize("line", [
    "env ./del x", "timeout 5 ./del x", "find . -exec ./del x \\;", "bash -c './del x'", "command ./del x",
])
def test_a_copy_run_through_another_program_is_judged_as_that_program(project, line):
    shutil.copy(RM, project / "del")
    assert "rm x" in patterns(line, project), line


def test_a_copy_of_a_wrapper_is_seen_through_like_the_wrapper(project):
    shutil.copy(ENV, project / "e")
    assert "rm x" in patterns("./e rm x", project)


def test_a_copy_of_an_interpreter_given_code_is_hidden_code(project):
    shutil.copy(shutil.which("python3") or "", project / "py")
    assert any("command line" in r for r in hidden("./py -c 'x'", project))


def test_a_copy_put_in_a_path_folder_of_the_project_is_not_an_installed_program(project, monkeypatch):
    (project / "bin").mkdir()
    shutil.copy(RM, project / "bin" / "del")
    monkeypatch.setenv("PATH", f"{project / 'bin'}{os.pathsep}{os.environ['PATH']}")
    assert "rm x" in patterns("del x", project)


def test_programs_run_by_their_own_names_add_nothing(project):
    for line in ("rm x", f"{RM} x", "ls -la", "git status"):
        assert identify(line.split()[0], project) == identity.Identity(), line
    assert patterns("rm x", project) == ["rm x"]


def test_a_script_or_program_of_the_project_is_hidden_code(project):
    script = project / "s.sh"
    script.write_text("#!/bin/sh\nrm x\n")
    script.chmod(0o755)
    (project / "tools").mkdir()
    shutil.copy(script, project / "tools" / "t")
    for line in ("./s.sh", "tools/t", "env ./s.sh", f"{script}"):
        assert any("not a program installed" in r for r in hidden(line, project)), line


def test_a_file_changed_in_place_is_compared_again(project):
    copy = project / "del"
    shutil.copy(RM, copy)
    assert "rm x" in patterns("./del x", project)
    copy.write_text("#!/bin/sh\necho hi\n")
    assert "rm x" not in patterns("./del x", project)
    assert hidden("./del x", project)


def test_a_program_installed_under_several_names_run_by_another_is_judged_as_each(project):
    installed, _ = identity._installed(project)
    several = next((sorted(p) for p in installed.by_inode.values() if len({Path(x).name for x in p}) > 2), None)
    if several is None:
        pytest.skip("no program here is installed under several names")
    shutil.copy(several[0], project / "multi")
    found = identify("./multi", project).installed_as
    assert {Path(p).name for p in found} == {Path(p).name for p in several}
