"""The sandbox's command lines and policy, without running anything: bwrap's arguments, the macOS profile,
which rules open the network, and what each `sandbox` mode does when there is no sandbox."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from opencode_nb.errors import ToolError
from opencode_nb.permission import Rule, from_config
from opencode_nb.permission.rules import Grant
from opencode_nb.sandbox import bwrap, policy, private, protected, relay, seatbelt
from opencode_nb.sandbox.policy import (
    Backend,
    Confinement,
    Launch,
    SandboxCall,
    ShellSandbox,
    caller_network_rules,
)
from opencode_nb.sandbox.protected import Guard, Protected
from opencode_nb.sandbox.readable import shown_outside


@pytest.fixture(autouse=True)
def no_data_dirs(monkeypatch):
    """These read the argv and profiles built for given folders; a data dir an earlier test left registered, or
    the platform's default one existing on this machine, would add its hiding to them (see test_private.py)."""
    monkeypatch.setattr(private, "folders", lambda: [])


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


def test_behind_the_proxy_the_relay_runs_the_command_and_takes_the_filter_from_bwrap(folders):
    proxy_socket = folders[1] / "proxy.sock"
    proxy_socket.touch()
    confinement = Confinement(Backend("bwrap", "/usr/bin/bwrap"), folders)
    args = confinement.wrap(["bash", "-c", "curl x"], cwd=folders[0], seccomp_fd=9, proxy_socket=proxy_socket)
    relay_at = args.index("--", args.index("--chdir")) + 1
    assert args[relay_at:relay_at + 4] == [policy.sys.executable, "-I", "-S", str(Path(relay.__file__).resolve())]
    assert args[relay_at + 4:] == [str(proxy_socket), "9", "--", "bash", "-c", "curl x"]
    assert "--seccomp" not in args and "--unshare-net" in args
    assert {str(proxy_socket), str(Path(relay.__file__).resolve())} <= set(pairs(args, "--ro-bind"))
    plain = confinement.wrap(["true"], cwd=folders[0], seccomp_fd=9)
    assert pairs(plain, "--seccomp") == ["9"] and plain[-1] == "true"


# ---------------------------------------------------------------------------------------------- network rules


def test_only_rules_that_name_network_give_a_command_a_proxy(tmp_path, fake_sandbox):
    def label(rules: dict, command: str = "curl example.com") -> str:
        call = SandboxCall(ShellSandbox("auto", writable=[tmp_path], binary="/fake/bwrap"), "s1",
                           lambda: from_config(rules))
        return asyncio.run(call.prepare(command, ask_nobody)).label

    assert label({"*": "allow", "bash": "allow"}) == "bwrap"
    assert label({"network": "deny", "*": "allow"}) == "bwrap"
    assert label({"network": {"*": "deny", "pypi.org": "allow"}}) == "bwrap+network"
    assert label({"network": {"pypi.org": "allow", "*": "deny"}}) == "bwrap"  # the catch-all overrides it
    assert label({"network": {"*": "deny", "pip install *": "allow"}}, "pip install x") == "bwrap+network"
    assert label({"network": {"*": "deny", "pip install *": "allow"}}, "cd x && pip install x") == "bwrap"


async def ask_nobody(*args, **kwargs) -> None:
    raise AssertionError("nothing should be asked while preparing")


def test_an_always_grant_for_network_counts_for_its_agent_only():
    rules = from_config({"network": "ask"})
    grants = [Grant(agent="build", permission="network", pattern="pypi.org"),
              Grant(agent="explore", permission="network", pattern="*"),
              Grant(agent="build", permission="bash", pattern="*")]
    build = caller_network_rules(rules, grants, "build")
    assert build[-1] == Rule(permission="network", pattern="pypi.org", action="allow") and len(build) == 2


def test_under_sandbox_exec_the_network_opens_only_when_every_host_is_allowed(tmp_path, monkeypatch):
    monkeypatch.setitem(policy._found, ("/fake/sbx", policy.sys.platform), Backend("sandbox-exec", "/x"))

    def launch(rules: dict) -> Launch:
        call = SandboxCall(ShellSandbox("auto", writable=[tmp_path], binary="/fake/sbx"), "s1",
                           lambda: from_config(rules))
        return asyncio.run(call.prepare("curl x", ask_nobody))

    opened = launch({"network": "allow"}).confinement
    assert opened is not None and opened.network and opened.proxy is None
    for rules in ({"network": {"*": "deny", "pypi.org": "allow"}}, {"network": "ask"}):
        closed = launch(rules).confinement
        assert closed is not None and not closed.network and closed.proxy is None


# ---------------------------------------------------------------------------------------------- modes


@pytest.fixture
def no_sandbox(monkeypatch):
    monkeypatch.setitem(policy._found, ("/missing/bwrap", policy.sys.platform), "bwrap is not here")


@pytest.fixture
def fake_sandbox(monkeypatch):
    monkeypatch.setitem(policy._found, ("/fake/bwrap", policy.sys.platform), Backend("bwrap", "/fake/bwrap"))


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


def test_the_proxy_asks_network_per_host_and_a_refusal_is_noted_with_the_way_to_allow_it(tmp_path, fake_sandbox):
    asked: list[tuple] = []

    async def ask(permission, patterns, always=None, metadata=None, *, always_ask=False):
        asked.append((permission, patterns, always, metadata["port"], always_ask))
        if patterns == ["no.example"]:
            from opencode_nb.errors import CorrectedError
            raise CorrectedError("not today")

    sandbox = ShellSandbox("auto", writable=[tmp_path], binary="/fake/bwrap")
    call = SandboxCall(sandbox, "s1", lambda: from_config({"*": "allow", "network": "ask"}))
    launch = asyncio.run(call.prepare("curl yes.example no.example", ask))
    assert asked == [] and launch.label == "bwrap+network"
    proxy = launch.confinement.proxy
    yes, no = asyncio.run(proxy.decide("yes.example", 443)), asyncio.run(proxy.decide("no.example", 80))
    assert asked == [("network", ["yes.example"], ["yes.example"], 443, True),
                     ("network", ["no.example"], ["no.example"], 80, True)]
    assert yes.allowed and not yes.named and not no.allowed and no.reason == "the person refused it: not today"
    proxy.refused["no.example:80"] = no.reason
    hint = launch.notes("curl: (56) CONNECT tunnel failed, response 403")
    assert "refused: no.example:80 (the person refused it: not today)" in hint
    assert 'network: {"pypi.org": allow}' in hint


# ---------------------------------------------------------------------------------------------- protected paths


def test_existing_protected_paths_are_bound_read_only_after_the_writable_folders(folders):
    project, output = folders
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n")
    (project / "AGENTS.md").write_text("hi\n")
    guard = Guard.taken(Protected(project).paths(), [project, output])
    args = bwrap.bwrap_args("bwrap", writable=[project, output], network=False, cwd=project, guard=guard)
    kept = [str(project / ".git" / "hooks"), str(project / ".git" / "config"), str(project / "AGENTS.md")]
    assert sorted(pairs(args, "--ro-bind-try")) == sorted(kept)
    assert pairs(args, "--bind-try") == [str(project / ".git")]  # cannot be renamed away and rebuilt
    assert args.index("--ro-bind-try") > args.index("--bind")
    assert str(project / "opencode.yaml") not in args  # nothing is made for a missing one: it is looked for after
    assert project / "opencode.yaml" in guard.missing and project / ".opencode" in guard.missing


def test_a_missing_git_folder_is_looked_for_whole(tmp_path):
    guard = Guard.taken(Protected(tmp_path).paths(), [tmp_path])
    assert tmp_path / ".git" in guard.missing and tmp_path / ".git" / "hooks" not in guard.missing
    assert guard.kept == () and guard.pinned == ()


def test_protected_paths_outside_every_writable_folder_are_left_to_the_read_only_root(tmp_path):
    elsewhere = tmp_path / "global"
    elsewhere.mkdir()
    guard = Guard.taken([elsewhere / "opencode.yaml", elsewhere], [tmp_path / "proj"])
    assert (guard.kept, guard.missing, guard.pinned) == ((), (), ())


def test_undo_moves_what_appeared_into_the_quarantine_and_keeps_a_permitted_write(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    guard = Guard.taken(Protected(project).paths(), [project])
    protected.started(guard)
    (project / "opencode.yaml").write_text("sandbox: off\n")
    protected.permitted_write(project / "AGENTS.md")
    (project / "AGENTS.md").write_text("by the write tool\n")
    protected.finished(guard)
    undone = guard.undo(tmp_path / "quarantine")
    assert len(undone) == 1 and "opencode.yaml" in undone[0]
    assert not (project / "opencode.yaml").exists() and (project / "AGENTS.md").exists()
    [moved] = (tmp_path / "quarantine").rglob("opencode.yaml")
    assert moved.read_text() == "sandbox: off\n" and moved.parent.name == "proj"


def test_the_macos_profile_denies_protected_paths_existing_or_not(tmp_path):
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    args = seatbelt.sandbox_exec_args("/usr/bin/sandbox-exec", writable=[project], network=False,
                                      protected=[project / "opencode.yaml", project / ".git" / "hooks"])
    text = args[2]
    assert text.index('(subpath (param "PROTECTED_0"))') > text.index('(subpath (param "WRITABLE_0"))')
    assert '(literal (param "PINNED_0"))' in text
    assert args[5:] == ["-D", f"PROTECTED_0={project.resolve() / 'opencode.yaml'}",
                        "-D", f"PROTECTED_1={project.resolve() / '.git' / 'hooks'}",
                        "-D", f"PINNED_0={project.resolve() / '.git'}"]


# ---------------------------------------------------------------------------------------------- reads


def test_with_outside_reads_not_allowed_only_system_folders_and_the_shown_ones_are_bound(folders, tmp_path):
    project, output = folders
    extra = tmp_path / "shared-data"
    extra.mkdir()
    args = bwrap.bwrap_args("bwrap", writable=[project, output], network=False, cwd=project, shown=[extra])
    assert args[1:3] != ["--ro-bind", "/"] and "/" not in pairs(args, "--ro-bind")
    assert "/usr" in pairs(args, "--ro-bind") and "/etc" in pairs(args, "--ro-bind")
    assert str(extra) in pairs(args, "--ro-bind")
    assert str(Path.home()) not in pairs(args, "--ro-bind")
    if Path("/etc/shadow").is_file():
        assert args[args.index("/etc/shadow") - 2:args.index("/etc/shadow")] == ["--ro-bind", "/dev/null"]


@pytest.mark.parametrize(("config", "shown"), [
    ({"*": "allow"}, None),
    ({"*": "allow", "external_directory": "deny"}, ()),
    ({"external_directory": {"*": "ask"}}, None),  # an ask guards what a line names; data stays readable
    ({"external_directory": {"*": "deny", "{data}/*": "allow"}}, ("{data}",)),
    ({"external_directory": {"*": "deny", "{data}/*": "allow", "{data}/private/*": "deny"}},
     ("{data}/open", "{data}/open.txt")),
    ({"external_directory": {"*": "deny", "/*": "allow"}}, None),
])
def test_what_the_external_directory_rules_show_a_command(tmp_path, config, shown):
    data = tmp_path / "data"
    (data / "private").mkdir(parents=True)
    (data / "open").mkdir()
    (data / "open.txt").write_text("")
    filled = {k: ({p.replace("{data}", str(data)): a for p, a in v.items()} if isinstance(v, dict) else v)
              for k, v in config.items()}
    expected = None if shown is None else tuple(Path(s.replace("{data}", str(data))) for s in shown)
    assert shown_outside(from_config(filled)) == expected


def test_folders_allowed_for_the_call_are_shown_too(tmp_path):
    assert shown_outside(from_config({"external_directory": "deny"}), [tmp_path]) == (tmp_path.resolve(),)
