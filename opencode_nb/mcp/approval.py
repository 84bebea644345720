"""Which project-defined MCP servers the person approved, remembered across kernels by the entry's digest and
the content of the project files its command runs (code.py).

Each approval is the entry's digest → the files as they were approved (path → content hash). A server is
approved when its entry is and its files still hold what they held then: an edited `server.py` under an
unchanged entry asks again, and `changes` names what changed for the question. An approval recorded before the
files were (no `code` in the record) stands only for a command that runs no project file.

One small JSON file in the data dir, written whole through a temporary file and a rename, so a crash never
leaves half a file; an unreadable file counts as no approvals (the person is asked again, nothing runs).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..fs.writer import write_file
from .code import ServerCode
from .entries import ServerEntry

FILE_NAME = "mcp-approved.json"


class Approvals:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE_NAME

    def approved(self, entry: ServerEntry, code: ServerCode) -> bool:
        record = self._read().get(entry.digest)
        return isinstance(record, dict) and (record.get("code") or {}) == dict(code.files)

    def changes(self, entry: ServerEntry, code: ServerCode) -> list[str]:
        """What changed in the files since the entry was approved (empty when the entry itself was not)."""
        record = self._read().get(entry.digest)
        if not isinstance(record, dict):
            return []
        before = record.get("code")
        if not isinstance(before, dict):
            return [f"{path} was not recorded when it was approved" for path in sorted(code.files)]
        return code.changes({str(k): str(v) for k, v in before.items()})

    def approve(self, entry: ServerEntry, code: ServerCode) -> None:
        known = self._read()
        known[entry.digest] = {"server": entry.name, "runs": entry.target, "source": entry.source,
                               "code": dict(code.files),
                               "approved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # The product's one writer: a fresh file renamed over the name, never through a link planted there.
        write_file(self.path.parent, self.path.name, json.dumps(known, indent=1, sort_keys=True).encode("utf-8"))

    def _read(self) -> dict[str, dict[str, object]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}
