"""The one line that says which OS sandbox shell commands run in, probed for real on this machine."""

from __future__ import annotations

import shutil

import pytest

from opencode_nb.sandbox.policy import Backend, find_backend
from opencode_nb.sandbox.status import sandbox_status

BWRAP = shutil.which("bwrap")
needs_bwrap = pytest.mark.skipif(BWRAP is None or not isinstance(find_backend(BWRAP, "linux"), Backend),
                                 reason="bubblewrap does not work here")


@needs_bwrap
@pytest.mark.parametrize("mode", ["auto", "required"])
def test_working_bubblewrap_is_named_with_the_setting_and_the_binary(mode):
    status = sandbox_status(mode, BWRAP, "linux")
    assert status.kind == "bubblewrap"
    assert status.line == f"bubblewrap: shell commands run confined (sandbox: {mode}; {BWRAP})"


def test_a_missing_bubblewrap_under_auto_is_none_unconfined_with_the_reason_and_the_fix():
    status = sandbox_status("auto", "/nonexistent/bwrap", "linux")
    assert status.kind == "none"
    assert status.line == ("none: commands run unconfined — install bubblewrap (`apt-get install bubblewrap`, "
                           "`dnf install bubblewrap`) (sandbox: auto; OPENCODE_NB_BWRAP names /nonexistent/bwrap, "
                           "which does not exist)")


def test_a_missing_bubblewrap_under_required_says_commands_will_not_run():
    line = sandbox_status("required", "/nonexistent/bwrap", "linux").line
    assert line.startswith("none: shell commands will not run — install bubblewrap")
    assert "or set `sandbox: auto` (sandbox: required;" in line


def test_off_is_none_because_the_config_says_so_and_probes_nothing():
    status = sandbox_status("off", "/nonexistent/bwrap", "linux")
    assert status.kind == "none"
    assert status.line.startswith("none: commands run unconfined (sandbox: off in the config")
    assert "install" not in status.line


def test_a_bubblewrap_that_cannot_run_is_not_told_to_be_installed(tmp_path):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    line = sandbox_status("auto", str(fake), "linux").line
    assert "make bubblewrap work here" in line and "No permissions to create new namespace" in line
    assert "install bubblewrap" not in line


def test_a_system_without_an_os_sandbox_is_told_so_not_to_install_bubblewrap():
    line = sandbox_status("auto", None, "win32").line
    assert line.startswith("none: commands run unconfined — no OS sandbox exists for this system")
    assert "there is no OS sandbox for shell commands on win32" in line
