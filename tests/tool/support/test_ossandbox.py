"""The sandbox's command lines and policy, without running anything: bwrap's arguments, the macOS profile,
which rules open the network, and what each `sandbox` mode does when there is no sandbox."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from opencode_nb.errors import ToolError
from opencode_nb.permission import Rule, from_config
from opencode_nb.permission.rules import Grant
from opencode_nb.tool.support import bwrap, ossandbox, seatbelt
from opencode_nb.tool.support.ossandbox import (
    Backend,
    Confinement,
    Launch,
    SandboxCall,
    ShellSandbox,
    caller_network_rules,
    network_action,
)


def pairs(args: list[str], flag: str) -> list[str]:
    """The values given to `flag` (each `--bind SRC DEST` gives SRC)."""
    return [args[i + 1] for i, a in enumerate(args) if a == flag]


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    project, output = tmp_path / "proj", tmp_path / "data" / "tool-output"
    project.mkdir()
    output.mkdir(parents=True)
    return project, output


def test_bwrap_binds_root_read_only_and_only_the_writable_folders_read_write(folders, monkeypatch):
    monkeypatch.setattr(bwrap.os, "geteuid", lambda: 1000)
    project, output = folders
    args = bwrap.bwrap_args("/usr/bin/bwrap", writable=[project, output, project / "missing"], network=False,
                            cwd=project)
    assert args[:5] == ["/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev"]
    assert pairs(args, "--bind") == [str(project), str(output)]
    assert args.index("--tmpfs") < args.index("--bind")  # writable folders stay visible under /tmp's tmpfs
    assert "/run" in pairs(args, "--tmpfs") and "/tmp" in pairs(args, "--tmpfs")
    for flag in ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--die-with-parent"):
        assert flag in args
    assert pairs(args, "--remount-ro") == ["/proc"]  # /proc/sys would otherwise be writable by root
    assert pairs(args, "--cap-drop") == ["ALL"] and "--cap-add" not in args
    assert args[-3:] == ["--chdir", str(project), "--"]


def test_bwrap_as_root_keeps_only_the_file_permission_capabilities(folders, monkeypatch):
    monkeypatch.setattr(bwrap.os, "geteuid", lambda: 0)
    args = bwrap.bwrap_args("bwrap", writable=list(folders), network=False, cwd=folders[0])
    assert pairs(args, "--cap-add") == list(bwrap.FILE_CAPABILITIES)
    assert not {"CAP_SYS_ADMIN", "CAP_NET_ADMIN", "CAP_MKNOD", "CAP_KILL"} & set(pairs(args, "--cap-add"))


def test_bwrap_with_network_shares_it_and_still_hides_every_other_process(folders):
    args = bwrap.bwrap_args("bwrap", writable=list(folders), network=True, cwd=folders[0])
    assert "--unshare-net" not in args and "--unshare-pid" in args and "--proc" in args


def test_bwrap_masks_jupyters_runtime_folder(folders, tmp_path, monkeypatch):
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    monkeypatch.setattr(bwrap, "jupyter_runtime", lambda: [str(runtime)])
    assert str(runtime) in pairs(bwrap.bwrap_args("bwrap", writable=[], network=True, cwd=folders[0]), "--tmpfs")


def test_bwrap_points_a_tmpdir_it_cannot_write_at_its_private_tmp(folders, tmp_path, monkeypatch):
    monkeypatch.setattr(bwrap, "_tempdir", lambda: str(tmp_path / "elsewhere"))
    args = bwrap.bwrap_args("bwrap", writable=list(folders), network=False, cwd=folders[0])
    assert args[args.index("--setenv") + 1: args.index("--setenv") + 3] == ["TMPDIR", "/tmp"]
    monkeypatch.setattr(bwrap, "_tempdir", lambda: "/tmp")
    assert "--setenv" not in bwrap.bwrap_args("bwrap", writable=list(folders), network=False, cwd=folders[0])


def test_a_confinement_wraps_the_command_after_the_sandbox_arguments(folders):
    confined = Confinement(Backend("bwrap", "/usr/bin/bwrap"), tuple(folders))
    argv = confined.wrap(["/bin/bash", "-c", "echo hi"], cwd=folders[0])
    assert argv[0] == "/usr/bin/bwrap" and argv[-4:] == ["--", "/bin/bash", "-c", "echo hi"]


def test_the_macos_profile_denies_writes_network_and_signals_outside_the_sandbox():
    assert seatbelt.profile(2, network=False) == """\
(version 1)
(allow default)
(deny file-write*)
(allow file-write*
    (subpath (param "WRITABLE_0"))
    (subpath (param "WRITABLE_1"))
    (literal "/dev/null")
    (literal "/dev/zero")
    (literal "/dev/dtracehelper")
    (regex #"^/dev/fd/[0-9]+$")
    (regex #"^/dev/tty")
)
(deny signal)
(allow signal (target same-sandbox))
(deny network*)
"""
    assert "network" not in seatbelt.profile(0, network=True)


def test_sandbox_exec_gets_real_paths_as_parameters(folders, tmp_path, monkeypatch):
    link = tmp_path / "link"
    link.symlink_to(folders[0])
    monkeypatch.setenv("TMPDIR", str(tmp_path / "data"))
    args = seatbelt.sandbox_exec_args("/usr/bin/sandbox-exec", writable=[link, tmp_path / "missing"], network=True)
    assert args[:2] == ["/usr/bin/sandbox-exec", "-p"]
    assert args[2] == seatbelt.profile(2, network=True)
    assert args[3:] == ["-D", f"WRITABLE_0={folders[0]}", "-D", f"WRITABLE_1={tmp_path / 'data'}"]


# ---------------------------------------------------------------------------------------------- network rules


def test_only_rules_that_name_network_open_it():
    everything = from_config({"*": "allow", "bash": "allow"})
    assert network_action("curl example.com", everything) == "deny"
    assert network_action("curl x", from_config({"network": "deny", "*": "allow"})) == "deny"
    rules = from_config({"network": {"*": "deny", "pip install *": "allow", "git push *": "ask"}})
    assert network_action("pip install pandas", rules) == "allow"
    assert network_action("git push origin main", rules) == "ask"
    assert network_action("cd x && pip install pandas", rules) == "deny"  # the whole line is the pattern


def test_an_always_grant_for_network_counts_for_its_agent_only():
    rules = from_config({"network": "ask"})
    grants = [Grant(agent="build", permission="network", pattern="pip install *"),
              Grant(agent="explore", permission="network", pattern="*"),
              Grant(agent="build", permission="bash", pattern="*")]
    build = caller_network_rules(rules, grants, "build")
    assert build[-1] == Rule(permission="network", pattern="pip install *", action="allow") and len(build) == 2
    assert network_action("pip install x", build) == "allow" and network_action("curl x", build) == "ask"


# ---------------------------------------------------------------------------------------------- modes


@pytest.fixture
def no_sandbox(monkeypatch):
    monkeypatch.setitem(ossandbox._found, ("/missing/bwrap", ossandbox.sys.platform), "bwrap is not here")


@pytest.fixture
def fake_sandbox(monkeypatch):
    monkeypatch.setitem(ossandbox._found, ("/fake/bwrap", ossandbox.sys.platform), Backend("bwrap", "/fake/bwrap"))


def test_off_never_confines_and_says_nothing(tmp_path, no_sandbox):
    sandbox = ShellSandbox("off", writable=[tmp_path], binary="/missing/bwrap")
    assert asyncio.run(sandbox.launch("s1")) == Launch()


def test_auto_without_a_sandbox_says_so_once_per_session(tmp_path, no_sandbox):
    sandbox = ShellSandbox("auto", writable=[tmp_path], binary="/missing/bwrap")

    async def notes() -> list[str | None]:
        return [(await sandbox.launch(s, tell=t)).note for s, t in
                [("s1", False), ("s1", True), ("s1", True), ("s2", True)]]

    first_hidden, first, again, other = asyncio.run(notes())
    assert first_hidden is None and again is None
    assert first == other and first is not None and "bwrap is not here" in first


def test_required_without_a_sandbox_is_a_tool_error_naming_the_way_out(tmp_path, no_sandbox):
    sandbox = ShellSandbox("required", writable=[tmp_path], binary="/missing/bwrap")
    with pytest.raises(ToolError, match=r"sandbox: required.*bwrap is not here.*bubblewrap.*sandbox: auto"):
        asyncio.run(sandbox.launch("s1"))


def test_a_sandbox_confines_with_the_writable_folders_made_and_resolved(tmp_path, fake_sandbox):
    sandbox = ShellSandbox("required", writable=[tmp_path / "out" / "tool-output"], binary="/fake/bwrap")
    launch = asyncio.run(sandbox.launch("s1"))
    assert launch.confinement == Confinement(Backend("bwrap", "/fake/bwrap"), ((tmp_path / "out" / "tool-output")
                                                                                .resolve(),))
    assert launch.label == "bwrap" and launch.notes("all fine") == ""


def test_prepare_asks_network_once_with_the_command_and_survives_a_refusal(tmp_path, fake_sandbox):
    asked: list[tuple] = []

    async def ask(permission, patterns, always=None, metadata=None, *, always_ask=False):
        asked.append((permission, patterns, always, always_ask))
        if patterns == ["curl no"]:
            from opencode_nb.errors import CorrectedError
            raise CorrectedError("not today")

    sandbox = ShellSandbox("auto", writable=[tmp_path], binary="/fake/bwrap")
    call = SandboxCall(sandbox, "s1", lambda: from_config({"network": "ask"}))
    yes = asyncio.run(call.prepare("curl yes", ask, always=["curl *"]))
    no = asyncio.run(call.prepare("curl no", ask))
    assert asked == [("network", ["curl yes"], ["curl *"], True), ("network", ["curl no"], ["curl no"], True)]
    assert yes.label == "bwrap+network" and no.label == "bwrap"
    hint = no.notes("curl: (6) Could not resolve host: example.com")
    assert "without network access (the person refused it: not today)" in hint and "`network`" in hint
    assert no.notes("ok") == ""
