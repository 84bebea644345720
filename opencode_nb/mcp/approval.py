"""Which project-defined MCP servers the person approved, remembered across kernels by the entry's digest.

One small JSON file in the data dir, written whole through a temporary file and a rename, so a crash never
leaves half a file; an unreadable file counts as no approvals (the person is asked again, nothing runs).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from .entries import ServerEntry

FILE_NAME = "mcp-approved.json"


class Approvals:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE_NAME

    def approved(self, entry: ServerEntry) -> bool:
        return entry.digest in self._read()

    def approve(self, entry: ServerEntry) -> None:
        known = self._read()
        known[entry.digest] = {"server": entry.name, "runs": entry.target, "source": entry.source,
                               "approved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".mcp-approved-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(known, out, indent=1, sort_keys=True)
            os.replace(temp, self.path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise

    def _read(self) -> dict[str, dict[str, object]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}
