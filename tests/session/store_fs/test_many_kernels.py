"""Eight kernels of one person, fifty turns each, on one store at once: every message and part is there
afterwards, no "database is locked" reaches anyone, and a kernel killed in the middle of a write leaves the
others and the file intact. Each kernel is a real process writing through the store as the session loop does
(`kernel.py`); the store is each backend in turn (`store_target`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from opencode_nb.session.models import AssistantMessage, TextPart
from opencode_nb.session.store.owners import INTERRUPTED

from .kernel import PARTS_PER_TURN, open_store

pytestmark = pytest.mark.timeout(180)

KERNELS = 8
TURNS = 50
VICTIM_TURNS = 10
"""The killed kernel's turns before its last write: the others have most of theirs still to write."""
ROOT = Path(__file__).resolve().parents[3]


def start_kernel(target: str, turns: int, start: Path, *, victim: bool = False) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("OPENCODE_NB_STORE_JOURNAL", None)
    return subprocess.Popen(
        [sys.executable, "-m", "tests.session.store_fs.kernel", target, str(turns), str(start),
         *(["--victim"] if victim else [])],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_kernels(target: str, start: Path) -> tuple[list[str], str, list[str], list[float]]:
    """Start the kernels together, kill the last one inside a write; returns the sessions of the survivors, the
    victim's session, every kernel's stderr and the survivors' single-append times."""
    kernels = [start_kernel(target, TURNS, start) for _ in range(KERNELS - 1)]
    victim = start_kernel(target, VICTIM_TURNS, start, victim=True)
    try:
        sessions = [k.stdout.readline().split()[-1] for k in kernels]  # type: ignore[union-attr]
        victim_session = victim.stdout.readline().split()[-1]  # type: ignore[union-attr]
        start.touch()
        assert victim.stdout.readline().strip() == "inside"  # type: ignore[union-attr]
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(30)
        errors = [victim.stderr.read()]  # type: ignore[union-attr]
        appends: list[float] = []
        for k in kernels:
            out, err = k.communicate(timeout=150)
            errors.append(err)
            assert k.returncode == 0, err
            appends += json.loads(out.splitlines()[-1])["appends_s"]
        return sessions, victim_session, errors, appends
    finally:
        for k in [*kernels, victim]:
            if k.poll() is None:
                k.kill()
                k.wait()


def test_eight_kernels_write_fifty_turns_each_and_a_kernel_killed_mid_write_harms_nothing(
        store_target: str, tmp_path: Path) -> None:
    started = time.monotonic()
    sessions, victim_session, errors, appends = run_kernels(store_target, tmp_path / "go")
    took = time.monotonic() - started
    for err in errors:
        assert "locked" not in err and "Traceback" not in err, err
    assert len(appends) == (KERNELS - 1) * TURNS * 4

    store = open_store(store_target)  # a new store: it finalises what the killed kernel left unfinished
    try:
        for session_id in sessions:
            history = store.messages(session_id)
            assert len(history) == 2 * TURNS
            assert sum(len(m.parts) for m in history) == PARTS_PER_TURN * TURNS
            prompts = [p.text for m in history[::2] for p in m.parts if isinstance(p, TextPart)]
            assert prompts == [f"prompt {n}" for n in range(TURNS)]
            answers = [m.message for m in history[1::2]]
            assert all(isinstance(a, AssistantMessage) and a.finish == "stop" for a in answers)
            tools = [p for m in history[1::2] for p in m.parts if p.type == "tool"]
            assert [t.state.status for t in tools] == ["completed"] * TURNS  # type: ignore[attr-defined]
        killed = store.messages(victim_session)
        assert len(killed) == 2 * VICTIM_TURNS + 1  # its turns, and the answer it was writing
        last = killed[-1].message
        assert isinstance(last, AssistantMessage) and last.finish == "aborted"
        assert last.error is not None and INTERRUPTED in last.error.message
        assert killed[-1].parts == []  # the transaction it died in left nothing
        if store_target.startswith("sqlite:"):
            assert store._db().execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        store.close()
    assert took < 120, f"{KERNELS} kernels x {TURNS} turns took {took:.1f} s"
