"""A configuration that agents changed, and that loosens what they may do, waits for the person.

An agent that may write files may write `opencode.yaml` (a permission the person granted, live python,
`sandbox: off`), and the configuration steers every later run: its sandbox, its rules, where prompts go.
So a change made while agents ran is applied only when it cannot widen their reach (loosen.py); otherwise
the configuration the person last stood behind stays in force until they confirm the change.

The record — one JSON file per project root in the workspace's data dir (`config-guard/`), which every
sandboxed process has out of sight wherever it lies (sandbox/private.py; attacked in
tests/safety/test_store_in_project.py) — holds:

- `trusted`: the configuration files' content (snapshot.py) as last confirmed. Content, not a digest, so the
  configuration it describes can be read again from it when the disk holds something else;
- `runs`: every run in flight, of any process: its pid and host, its session and the files' digest when it
  started (`ConfigGuard.running`, around each `Workspace.prompt`, and around every process we start for the
  agents for as long as it lives, `sandbox/treatment.py`: an MCP server writes whenever it likes);
- `unconfirmed`: the sessions of runs during which the files changed (digest at the end differs from the
  start), or that never recorded their end (their process died) while the files differ from their start;
- `kept`: the digest of files whose change the person chose not to apply, so it is not asked again.

`settle`, when a configuration is read, decides what is in force:

1. no record (the first run ever here): the files as they are; they become `trusted`;
2. the files are `trusted`: nothing to decide;
3. they differ and no run is in flight and none left its change unconfirmed: the person edited them between
   runs, and the change applies at once, whatever it does;
4. otherwise an agent may have made the change: it applies (and becomes `trusted`) only if nothing in it
   loosens; else the trusted configuration is read from its snapshot and used, and the `Held` change says
   what loosens, in which file and key, and which sessions may have made it.

A change made while a run was in flight is judged even if the person made it: who wrote it cannot be told
apart. Later edits do not clear the suspicion: content that descends from an unconfirmed change is compared
with `trusted` until it holds nothing looser. A mixed change (some keys looser, some stricter) keeps the
trusted configuration whole: picking the stricter parts out of it is not attempted.

The record is changed under an exclusive `flock`, so concurrent runs of several processes (two kernels, a
script beside a notebook) see each other. This is the second line: with `sandbox: off` a command can
write the data dir too, so the first line is the OS sandbox keeping the config files read-only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from ..errors import ConfigError, OpencodeNbError
from ..pids import alive as _alive
from .load import LoadedConfig, _extra_file, load_config, stamp_files
from .loosen import Loosening, RulesOf, config_rules, loosenings
from .paths import global_config_dir, project_root
from .snapshot import Snapshot, take_snapshot

try:
    import fcntl
except ImportError:  # Windows: one process at a time is all that is guarded there
    fcntl = None  # type: ignore[assignment]

RECORD_DIR = "config-guard"
ACCEPT_HINT = ("`opencode-nb config accept` (in a notebook `%agent config accept`, in Python "
               "`Workspace(..., accept_config=True)`)")


class RunEntry(BaseModel):
    pid: int
    host: str
    session: str
    started: float
    files: str
    """The files' digest when the run started."""


class Record(BaseModel):
    trusted: Snapshot
    runs: dict[str, RunEntry] = Field(default_factory=dict)
    unconfirmed: list[str] = Field(default_factory=list)
    kept: str | None = None


@dataclass(frozen=True)
class Held:
    """A change to the configuration files that waits for the person."""

    digest: str
    """The files' digest: accepting applies exactly these files, not whatever they hold later."""
    loosenings: list[Loosening]
    sessions: list[str]
    """The sessions whose runs may have made the change."""
    kept: bool
    """The person already chose to keep the previous configuration for these files."""

    def message(self) -> str:
        runs = ", ".join(self.sessions) or "an agent"
        lines = "\n".join(f"  {item}" for item in self.loosenings)
        return (f"The configuration files changed while agents ran (session {runs}), and the change loosens what "
                f"agents may do or what reaches the model:\n{lines}\nIt is not applied: the configuration confirmed "
                f"before stays in force. If you made this change, apply it with {ACCEPT_HINT}; `opencode-nb config "
                "keep` keeps the previous configuration without asking again.")


@dataclass(frozen=True)
class Decision:
    loaded: LoadedConfig
    """The configuration in force."""
    held: Held | None
    """The change not applied, if any."""
    guard: ConfigGuard


class ConfigGuard:
    """The record of one project root (see the module docstring)."""

    def __init__(self, data_dir: Path, root: Path, snapshot: Callable[[], Snapshot]) -> None:
        digest = hashlib.sha256(str(root).encode()).hexdigest()[:16]
        self.path = data_dir / RECORD_DIR / f"{root.name or 'root'}-{digest}.json"
        self._snapshot = snapshot

    # ------------------------------------------------------------------------------------------ deciding

    def settle(self, now: Snapshot, new: LoadedConfig, reload: Callable[[Snapshot], LoadedConfig],
               rules_of: RulesOf = config_rules, *, accept: bool = False) -> Decision:
        """What is in force, given the files `now` and the configuration `new` read from them.

        Raises:
            ConfigError: the change must wait, but the configuration confirmed before cannot be read.
        """
        with self._locked() as record:
            if record is not None:
                self._reap(record, now)
            if record is None or accept or now.digest == record.trusted.digest:
                self._write(Record(trusted=now, runs=record.runs if record else {}))
                return Decision(new, None, self)
            suspects = list(dict.fromkeys([*record.unconfirmed, *(r.session for r in record.runs.values())]))
            if not suspects:
                self._write(record.model_copy(update={"trusted": now, "kept": None}))
                return Decision(new, None, self)
            try:
                old = reload(record.trusted)
            except ConfigError as exc:
                raise ConfigError(exc.path, line=exc.line, hint=(
                    f"the configuration files changed while agents ran (session {', '.join(suspects)}), and "
                    f"the configuration confirmed before them can no longer be read ({exc.hint}); to use the "
                    f"files as they are now: {ACCEPT_HINT}")) from None
            found = loosenings(old, new, rules_of)
            if not found:
                self._write(Record(trusted=now, runs=record.runs))
                return Decision(new, None, self)
            self._write(record.model_copy(update={"unconfirmed": suspects}))
            held = Held(now.digest, found, suspects, kept=record.kept == now.digest)
            return Decision(dataclasses.replace(old, stamp=new.stamp), held, self)

    def accept(self, digest: str | None = None) -> None:
        """Make the files as they are now the trusted configuration (the person confirmed them).

        Args:
            digest: the files the person was shown; refused if they changed again since.

        Raises:
            OpencodeNbError: the files changed again after they were shown.
        """
        with self._locked() as record:
            now = self._snapshot()
            if digest is not None and now.digest != digest:
                raise OpencodeNbError("the configuration files changed again after that change was shown; "
                                      "nothing was applied. Look at the new change before accepting it.")
            self._write(Record(trusted=now, runs=record.runs if record else {}))

    def keep(self, digest: str) -> None:
        """Keep the trusted configuration for the files with `digest` without asking again."""
        with self._locked() as record:
            if record is not None:
                self._write(record.model_copy(update={"kept": digest}))

    # ------------------------------------------------------------------------------------------ runs

    @contextlib.contextmanager
    def running(self, session_id: str) -> Iterator[None]:
        """Record a run in flight; at its end, a change of the files during it leaves them unconfirmed."""
        run_id = uuid.uuid4().hex
        with self._locked() as record:
            start = self._snapshot()
            record = record or Record(trusted=start)
            record.runs[run_id] = RunEntry(pid=os.getpid(), host=socket.gethostname(), session=session_id,
                                           started=time.time(), files=start.digest)
            self._write(record)
        try:
            yield
        finally:
            with self._locked() as record:
                if record is not None:
                    entry = record.runs.pop(run_id, None)
                    if entry is not None and self._snapshot().digest != entry.files:
                        record.unconfirmed = list(dict.fromkeys([*record.unconfirmed, session_id]))
                    self._write(record)

    def _reap(self, record: Record, now: Snapshot) -> None:
        """Runs whose process is gone never recorded their end: whatever changed since they started is
        unconfirmed."""
        host = socket.gethostname()
        for run_id, entry in list(record.runs.items()):
            if entry.host == host and not _alive(entry.pid):
                del record.runs[run_id]
                if now.digest != entry.files:
                    record.unconfirmed = list(dict.fromkeys([*record.unconfirmed, entry.session]))

    # ------------------------------------------------------------------------------------------ the file

    @contextlib.contextmanager
    def _locked(self) -> Iterator[Record | None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "a") as lock:
            if fcntl is not None:
                fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield self._read()
            finally:
                if fcntl is not None:
                    fcntl.flock(lock, fcntl.LOCK_UN)

    def _read(self) -> Record | None:
        try:
            return Record.model_validate_json(self.path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValidationError, ValueError):
            # A damaged record trusts nothing it cannot read: start again from the files as they are, as on
            # the first run, rather than refuse every configuration forever.
            return None

    def _write(self, record: Record) -> None:
        temporary = self.path.with_suffix(f".{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # it may hold literal keys
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(record.model_dump_json())
        os.replace(temporary, self.path)


def settle_config(
    directory: Path,
    overrides: Mapping[str, Any] | None,
    *,
    env: Mapping[str, str],
    data_dir: Path,
    rules_of: RulesOf = config_rules,
    accept: bool = False,
) -> Decision:
    """Read the configuration of `directory` and decide, with the guard's record, what is in force.

    Raises:
        ConfigError: the files have problems (as `load_config`), or a held change has no previous
            configuration left to keep.
    """
    directory = Path(directory).expanduser().resolve()
    root = project_root(directory)
    places = (directory, root, global_config_dir(env), _extra_file(env))
    guard = ConfigGuard(data_dir, root, lambda: take_snapshot(*places))
    stamp = stamp_files(*places)  # before the files are read: an edit meanwhile shows as a change

    def reload(files: Snapshot) -> LoadedConfig:
        return dataclasses.replace(load_config(directory, overrides, env=env, files=files), stamp=stamp)

    now = take_snapshot(*places)
    return guard.settle(now, reload(now), reload, rules_of, accept=accept)

