"""A real PostgreSQL server for the store's tests and bench, started from the distribution's binaries.

The server lives in a temporary folder (data, log and unix socket) and listens on a free loopback port with
password authentication, so the store meets it as it meets a hub's database: by URL, as a role that is not a
superuser. initdb refuses to run as root, so as root the server runs as the `postgres` OS user the package
made. Missing binaries skip the tests that need them, except under CI (`CI` set), where they fail: `.ci/run`
installs postgresql.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

SUPERUSER = "postgres"


class Unavailable(Exception):
    """No server can be started here; the message says why."""


def find_bindir() -> Path:
    """The folder of initdb and pg_ctl: `pg_config --bindir`, else the newest /usr/lib/postgresql/*/bin."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        done = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        if done.returncode == 0:
            candidates.append(Path(done.stdout.strip()))
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                                           key=lambda p: int(p.split("/")[-2]) if p.split("/")[-2].isdigit() else 0,
                                           reverse=True)]
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    raise Unavailable("the PostgreSQL server binaries (initdb, pg_ctl) are not installed (apt install postgresql)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """One PostgreSQL server in its own folder; `url(role, password, database)` names a database on it."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.base = Path(tempfile.mkdtemp(prefix="ocnb-pg-"))
        self.data = self.base / "data"
        self.socket_dir = self.base / "run"
        self.log = self.base / "server.log"
        self.port = _free_port()
        self.password = secrets.token_hex(12)
        self._as: list[str] = []
        if os.geteuid() == 0:
            runuser = shutil.which("runuser")
            if runuser is None:
                raise Unavailable("running as root, and runuser is missing to run the server as `postgres`")
            self._as = [runuser, "-u", "postgres", "--"]

    def _run(self, *argv: str) -> None:
        done = subprocess.run([*self._as, *argv], capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            tail = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise Unavailable(f"{Path(argv[0]).name} failed ({done.returncode}): {done.stderr.strip()}\n{tail}")

    def start(self) -> Server:
        self.socket_dir.mkdir()
        pwfile = self.base / "pw"
        pwfile.write_text(self.password + "\n")
        if self._as:
            shutil.chown(self.base, "postgres")
            for item in (self.socket_dir, pwfile):
                shutil.chown(item, "postgres")
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", SUPERUSER, "--auth=scram-sha-256",
                  f"--pwfile={pwfile}", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
        pwfile.unlink()
        options = f"-p {self.port} -k {self.socket_dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(str(self.bindir / "pg_ctl"), "start", "-w", "-t", "60", "-D", str(self.data), "-l",
                  str(self.log), "-o", options)
        return self

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            subprocess.run([*self._as, str(self.bindir / "pg_ctl"), "stop", "-m", "fast", "-w", "-D",
                            str(self.data)], capture_output=True, timeout=60, check=False)
        shutil.rmtree(self.base, ignore_errors=True)

    def url(self, role: str = SUPERUSER, password: str | None = None, database: str = "postgres") -> str:
        return f"postgresql://{role}:{password or self.password}@127.0.0.1:{self.port}/{database}"

    def admin(self, sql: str, database: str = "postgres") -> None:
        """Run SQL as the superuser (autocommit: CREATE DATABASE cannot run in a transaction)."""
        import psycopg

        with psycopg.connect(self.url(database=database), autocommit=True) as db:
            db.execute(sql)

    def role(self, name: str) -> str:
        """A new login role (no superuser, no CREATEDB) with its password; returns the password."""
        password = secrets.token_hex(12)
        self.admin(f"CREATE ROLE {name} LOGIN PASSWORD '{password}'")
        return password

    def database(self, name: str, owner: str | None = None) -> None:
        self.admin(f"CREATE DATABASE {name}" + (f" OWNER {owner}" if owner else ""))


def start_server() -> Server:
    """A started server (the caller stops it); `Unavailable` says why not."""
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise Unavailable("psycopg is not installed (pip install 'opencode_nb[postgres]')") from exc
    server = Server(find_bindir())
    try:
        return server.start()
    except BaseException:
        server.stop()
        raise


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Server]:
    """The session's PostgreSQL server, stopped at the end."""
    try:
        server = start_server()
    except Unavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the store tests on PostgreSQL, but {exc}; .ci/run installs postgresql",
                        pytrace=False)
        pytest.skip(str(exc))
    try:
        yield server
    finally:
        server.stop()


_counter = iter(range(1, 1 << 30))


@pytest.fixture
def pg_url(pg_server: Server) -> str:
    """The URL of a fresh database owned by a fresh role of its own (not a superuser), one per test."""
    name = f"t{os.getpid()}_{next(_counter)}"
    password = pg_server.role(name)
    pg_server.database(name, owner=name)
    return pg_server.url(name, password, name)
