"""A real FUSE filesystem for the store's network mode, and the stores the many-kernels test runs on.

The FUSE mount is `bindfs` over a temporary folder (root and /dev/fuse needed). A missing bindfs skips the tests
that need it, except under CI (`CI` set), where it fails: `.ci/run` installs bindfs. A machine that does not allow a
mount at all (no /dev/fuse, or the mount refused) skips them everywhere: the statfs answers of every kind are
still tested in test_filesystem.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from opencode_nb.session.store.filesystem import Kind, detect


def _unavailable(reason: str, *, installable: bool = False) -> None:
    if installable and os.environ.get("CI"):
        pytest.fail(f"CI must mount a FUSE filesystem for the store tests, but {reason}; .ci/run installs bindfs",
                    pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def fuse_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder on a FUSE filesystem (bindfs over a temporary folder), unmounted at the end."""
    bindfs = shutil.which("bindfs")
    if bindfs is None:
        _unavailable("bindfs is not installed (apt install bindfs)", installable=True)
    if not Path("/dev/fuse").exists():
        _unavailable("/dev/fuse does not exist")
    base = tmp_path_factory.mktemp("fuse")
    backing, mount = base / "backing", base / "mount"
    backing.mkdir()
    mount.mkdir()
    done = subprocess.run([str(bindfs), str(backing), str(mount)], capture_output=True, text=True, timeout=30,
                          check=False)
    if done.returncode != 0:
        _unavailable(f"bindfs could not mount: {done.stderr.strip() or done.returncode}")
    try:
        if detect(mount).kind is not Kind.FUSE:
            _unavailable(f"{mount} is mounted but is not FUSE: {detect(mount)}")
        yield mount
    finally:
        _unmount(mount)


def _unmount(mount: Path) -> None:
    for _ in range(50):
        done = subprocess.run(["fusermount", "-u", str(mount)], capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return
        time.sleep(0.1)
    subprocess.run(["fusermount", "-uz", str(mount)], capture_output=True, check=False)


@pytest.fixture(params=["sqlite-local", "sqlite-network", "postgresql"])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """What `kernel.open_store` opens: SQLite on local disk (WAL), SQLite on a FUSE mount (the network
    filesystem mode, chosen by detection), and a store of its own on the PostgreSQL server of the `pg_url`
    fixture (tests/postgres.py)."""
    if request.param == "sqlite-local":
        return f"sqlite:auto:{tmp_path / 'local' / 'store.sqlite'}"
    if request.param == "sqlite-network":
        folder = request.getfixturevalue("fuse_dir") / tmp_path.name
        folder.mkdir()
        return f"sqlite:auto:{folder / 'store.sqlite'}"
    return f"pg:kernels{os.getpid()}x{time.monotonic_ns()}:{request.getfixturevalue('pg_url')}"
