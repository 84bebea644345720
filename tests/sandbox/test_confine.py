"""What this machine offers for confinement, found out independently of `confine`, and what `confine` makes
of it: the strongest mechanism that works is the one reported, each one stops what it claims by effect, and
a mechanism that cannot apply falls through to the next with the reason said."""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path

import pytest

from opencode_nb.kernel.python import worker
from opencode_nb.sandbox import confine
from opencode_nb.sandbox.linux import load

from .forked import in_child, landlock_version, user_namespaces_work

libc = load()
pytestmark = pytest.mark.skipif(libc is None, reason="Linux only")


def confined(mechanisms, attempt, tmp_path: Path) -> object:
    plan = confine.prepare(mechanisms, scratch_mb=64, secrets=["CONFINE_TEST_SECRET"])

    def run() -> object:
        report = confine.enter(plan)
        return {"report": report.to_json(), "attempt": attempt(plan.scratch)}
    try:
        return in_child(run)
    finally:
        plan.remove_scratch()


def tries(tmp_path: Path):
    outside = tmp_path / "outside.txt"
    parent = os.getpid()

    def attempt(scratch: str) -> dict[str, object]:
        said: dict[str, object] = {}
        for name, call in (("write outside", lambda: outside.write_text("x")),
                           ("write scratch", lambda: Path(scratch, "s.txt").write_text("x")),
                           ("signal parent", lambda: os.kill(parent, 0)),
                           ("unix socket", lambda: socket.socket(socket.AF_UNIX)),
                           ("tmpdir", lambda: tempfile.gettempdir() == scratch or 1 / 0)):
            try:
                call()
                said[name] = "done"
            except (OSError, ZeroDivisionError) as exc:
                said[name] = type(exc).__name__
        said["secret"] = os.environ.get("CONFINE_TEST_SECRET", "gone")
        return said
    return attempt, outside


def test_with_user_namespaces_here_confinement_uses_them_and_holds(tmp_path, monkeypatch):
    if not user_namespaces_work():
        pytest.skip("no user namespaces on this machine")
    monkeypatch.setenv("CONFINE_TEST_SECRET", "s3cret-value")
    attempt, outside = tries(tmp_path)
    result = confined(confine.MECHANISMS, attempt, tmp_path)
    assert result["report"]["mechanism"] == "namespaces"
    assert result["attempt"] == {"write outside": "OSError", "write scratch": "done",
                                 "signal parent": "ProcessLookupError", "unix socket": "PermissionError",
                                 "tmpdir": "done", "secret": "gone"}
    assert not outside.exists()


def test_with_namespaces_the_code_sees_only_harmless_devices_and_cannot_write_kernel_settings(tmp_path):
    if not user_namespaces_work():
        pytest.skip("no user namespaces on this machine")

    def attempt(scratch: str) -> dict[str, object]:
        try:
            with open("/proc/sys/kernel/core_pattern", "w") as setting:  # what the kernel runs at a crash
                setting.write("|/bin/false")
            wrote = "done"
        except OSError as exc:
            wrote = type(exc).__name__
        return {"dev": sorted(os.listdir("/dev")), "core_pattern": wrote, "pids": sorted(
            name for name in os.listdir("/proc") if name.isdigit())}
    result = confined(confine.MECHANISMS, attempt, tmp_path)
    assert result["report"]["mechanism"] == "namespaces"
    assert set(result["attempt"]["dev"]) <= {*confine.DEVICES, "fd", "stdin", "stdout", "stderr", "shm"}
    assert result["attempt"]["core_pattern"] != "done"
    assert result["attempt"]["pids"] == ["1"]  # itself, the first process of its PID namespace


def test_with_landlock_here_it_confines_alone_and_says_what_it_covers(tmp_path, monkeypatch):
    version = landlock_version()
    if version < 1:
        pytest.skip("no Landlock on this machine")
    monkeypatch.setenv("CONFINE_TEST_SECRET", "s3cret-value")
    attempt, outside = tries(tmp_path)
    result = confined(("landlock",), attempt, tmp_path)
    report = result["report"]
    assert report["mechanism"] == "landlock"
    assert result["attempt"]["write outside"] == "PermissionError" and result["attempt"]["write scratch"] == "done"
    assert result["attempt"]["unix socket"] == "PermissionError" and result["attempt"]["secret"] == "gone"
    assert result["attempt"]["signal parent"] == ("PermissionError" if version >= 6 else "done")
    assert ("signals" in report["covers"]) is (version >= 6) and ("partial" in report["covers"]) is (version < 6)
    assert not outside.exists()


def test_nothing_allowed_means_python_level_only_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("CONFINE_TEST_SECRET", "s3cret-value")
    attempt, outside = tries(tmp_path)
    result = confined((), attempt, tmp_path)
    assert result["report"]["mechanism"] == "none" and result["report"]["why_not"]
    assert result["attempt"]["write outside"] == "done" and outside.exists()
    assert result["attempt"]["secret"] == "gone"  # the environment is scrubbed at every level
    assert confine.Report.from_json(result["report"]).label() == confine.PYTHON_ONLY


def test_a_report_read_back_from_a_sandbox_rejects_an_unknown_mechanism():
    with pytest.raises(ValueError):
        confine.Report.from_json({"mechanism": "trust-me"})
    assert confine.Report("namespaces").confined and not confine.Report("landlock", ("partial",)).confined


@pytest.mark.parametrize("prefix", [confine.SCRATCH_PREFIX, worker.SCRATCH_PREFIX], ids=["fork", "worker"])
def test_scratch_folders_of_kernels_that_died_are_removed_and_live_ones_kept(tmp_path, prefix):
    import subprocess

    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f"{prefix}{dead.pid}-abc"
    alive = tmp_path / f"{prefix}{os.getpid()}-def"
    for folder in (stale, alive):
        folder.mkdir()
        (folder / "left.txt").write_text("x")
    confine.remove_stale(str(tmp_path), prefix)
    assert not stale.exists() and alive.exists()
