"""The `hooks` entries of the configuration as the runner needs them: who defined each, and its digest; and
which of the project's own the person approved.

A hook the person's own configuration names (the global config dir, `$OPENCODE_NB_CONFIG`, a mapping passed in
code) is theirs and runs. One that a project's files define is a command somebody else chose to run on this
machine at every tool call: it runs only once the person approved that exact entry. As for MCP servers
(`mcp/approval.py`), the approval holds the entry's digest (project root, event, matcher, command, timeout) and
the project files its command runs, as they were (`mcp/code.py`): an edited `hooks/check.sh` under an unchanged
entry waits for a new approval.

The approvals are one small JSON file in the data dir, written whole through a temporary file and a rename; an
unreadable file counts as no approvals (nothing runs until the person approves again).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

from ..config.load import DEFAULTS_SOURCE, OVERRIDES_SOURCE, LoadedConfig
from ..config.schema import HOOK_EVENTS, HookCommandConfig
from ..fs.writer import write_file
from ..mcp.code import ServerCode, server_code

DEFAULT_TIMEOUT_S = 60.0
"""Claude Code's default: a hook that runs longer is stopped and the call goes on."""
APPROVALS_FILE = "hooks-approved.json"
PERSON_SOURCES = (DEFAULTS_SOURCE, OVERRIDES_SOURCE)


REDIRECTION = re.compile(r"""(?:\d|&)?>>?\|?\s*(?:"[^"]*"|'[^']*'|[^\s;|&]+)""")
"""A shell redirection of output and its target (`>> log`, `2>/dev/null`, `&> out`)."""


@dataclass(frozen=True)
class HookEntry:
    """One command of one matcher group of one event, where it was written and whether it needs approval."""

    event: str
    matcher: str | None
    hook: HookCommandConfig
    source: str | None
    """The file that wrote it, for messages and `%agent hooks`."""
    line: int | None
    project: bool
    """Written by a project's files: it runs only once the person approved it."""
    digest: str
    position: tuple[int, int] = (0, 0)
    """(matcher group, hook) within the event's list: the order answers are combined in."""

    @property
    def command(self) -> str:
        return self.hook.command or ""

    @property
    def timeout_s(self) -> float:
        return self.hook.timeout if self.hook.timeout is not None else DEFAULT_TIMEOUT_S

    @property
    def runs(self) -> bool:
        """Whether it can ever run here: a `command` hook of an event that fires."""
        return self.hook.type == "command" and self.event in HOOK_EVENTS

    @property
    def label(self) -> str:
        """How messages name it: `PreToolUse hook "./check.sh"`."""
        shown = self.command if len(self.command) <= 80 else self.command[:77] + "..."
        return f"{self.event} hook {json.dumps(shown)}"

    def code(self, root: Path) -> ServerCode:
        """The project files its command runs, as they are now (not the files it only writes to: a hook that
        appends to a log is not changed by its log). Reads files: call it on a thread."""
        return server_code(["/bin/sh", "-c", REDIRECTION.sub(" ", self.command)], root)


def hook_entries(loaded: LoadedConfig) -> list[HookEntry]:
    """Every configured hook, in the order written (those that never run too: listings show them)."""
    found: list[HookEntry] = []
    for event, groups in loaded.config.hooks.items():
        for g, group in enumerate(groups):
            for h, hook in enumerate(group.hooks):
                source, line = loaded.where("hooks", event, str(g), "hooks", str(h))
                project = from_project(source, loaded)
                found.append(HookEntry(event, group.matcher, hook, source, line, project,
                                       entry_digest(loaded.root, event, group.matcher, hook), (g, h)))
    return found


def entry_digest(root: Path, event: str, matcher: str | None, hook: HookCommandConfig) -> str:
    text = json.dumps({"root": str(root), "event": event, "matcher": matcher, "type": hook.type,
                       "command": hook.command, "timeout": hook.timeout}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def from_project(source: str | None, loaded: LoadedConfig) -> bool:
    """Any source that is not the person's own counts as the project's: a hook of unknown origin waits too."""
    if source in PERSON_SOURCES:
        return False
    if source is None:
        return True
    path = Path(source)
    if loaded.extra is not None and path == loaded.extra:
        return False
    if loaded.managed is not None and str(loaded.managed.path) == source:
        return False
    return not path.is_relative_to(loaded.global_dir)


class HookApprovals:
    """The approved project hooks: digest → the project files its command ran when it was approved."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / APPROVALS_FILE

    def approved(self, entry: HookEntry, code: ServerCode) -> bool:
        record = self._read().get(entry.digest)
        return isinstance(record, dict) and (record.get("code") or {}) == dict(code.files)

    def changes(self, entry: HookEntry, code: ServerCode) -> list[str]:
        """What changed in its files since the entry was approved (empty when it never was)."""
        record = self._read().get(entry.digest)
        before = record.get("code") if isinstance(record, dict) else None
        if not isinstance(before, dict):
            return []
        return code.changes({str(k): str(v) for k, v in before.items()})

    def approve(self, entry: HookEntry, code: ServerCode) -> None:
        known = self._read()
        known[entry.digest] = {"event": entry.event, "matcher": entry.matcher, "command": entry.command,
                               "source": entry.source, "code": dict(code.files),
                               "approved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # The product's one writer: a fresh file renamed over the name, never through a link planted there.
        write_file(self.path.parent, self.path.name, json.dumps(known, indent=1, sort_keys=True).encode("utf-8"))

    def _read(self) -> dict[str, object]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}
