"""The quickstart's throwaway project copies: each goes with the process (the kernel) that made it."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import pytest

from opencode_nb.demo.scratch import QUICKSTART_PREFIX, UNOWNED_AGE_S, remove_leftovers


@pytest.fixture
def tmpdir_of_our_own(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    return tmp_path


def test_a_quickstart_copy_is_removed_when_the_process_that_made_it_exits(tmpdir_of_our_own):
    made = subprocess.run([sys.executable, "-c", "from opencode_nb.demo import sample_project\n"
                           "project = sample_project()\nassert (project / 'stats.py').is_file()\nprint(project)"],
                          env={**os.environ}, capture_output=True, text=True, timeout=60, check=True)
    project = made.stdout.strip()
    assert project.startswith(str(tmpdir_of_our_own / QUICKSTART_PREFIX))
    assert list(tmpdir_of_our_own.iterdir()) == []


def test_a_new_copy_first_removes_those_of_processes_that_are_gone(tmpdir_of_our_own):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = tmpdir_of_our_own / f"{QUICKSTART_PREFIX}{gone.pid}-abcd"
    ours = tmpdir_of_our_own / f"{QUICKSTART_PREFIX}{os.getpid()}-efgh"
    stale = tmpdir_of_our_own / f"{QUICKSTART_PREFIX}k2j4_x9q"  # named by an earlier version: no process in it
    recent = tmpdir_of_our_own / f"{QUICKSTART_PREFIX}zz81_qq0"
    for folder in (dead, ours, stale, recent):
        (folder / "weather-stats").mkdir(parents=True)
    old = time.time() - UNOWNED_AGE_S - 60
    os.utime(stale, (old, old))
    assert sorted(remove_leftovers()) == sorted([dead, stale])
    assert ours.is_dir() and recent.is_dir()
