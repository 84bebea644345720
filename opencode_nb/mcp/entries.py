"""The `mcp` entries of the configuration, as the servers' owner needs them: who defined each, and its digest.

A server the person's own configuration names (the global config dir, `$OPENCODE_NB_CONFIG`, a mapping passed
in code) is theirs and starts when needed. One that a project's files define, or change in any key, is code
somebody else chose to run on this machine: it starts only once the person approved that exact entry. The
digest is what approval is remembered by: the project root and the entry as written, with a value read from
the environment standing as the names of its variables (a rotated token needs no new approval, a header that
starts sending a different variable does).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config.load import DEFAULTS_SOURCE, OVERRIDES_SOURCE, LoadedConfig
from ..config.schema import McpConfig
from ..secrets import looks_secret
from .code import ServerCode, server_code

SECRET_FIELDS = ("headers", "environment")
"""The parts of an entry whose values are secrets: masked in listings, redacted in output."""

PERSON_SOURCES = (DEFAULTS_SOURCE, OVERRIDES_SOURCE)
"""Sources that are not files of the project: built in, or passed by the person's own code."""


@dataclass(frozen=True)
class ServerEntry:
    name: str
    config: McpConfig
    source: str | None
    """The file (and key) that last wrote the entry, for messages."""
    line: int | None
    project: bool
    """Defined or changed by a project's files: it needs the person's approval before it starts."""
    digest: str
    folder: Path | None = None
    """Where a local server's command runs and its relative paths start: the folder of the project's config
    file that names the command (`python server.py` beside `play/opencode.yaml` runs `play/server.py`); the
    workspace's working folder for an entry of the person's own configuration. None: the project root."""

    @property
    def target(self) -> str:
        """What the entry runs or reaches, as the approval prompt and `%agent mcp` show it."""
        if self.config.type == "local":
            return " ".join(self.config.command or [])
        return self.config.url or ""

    def code(self, root: Path) -> ServerCode:
        """The project files a local server's command runs, as they are now (none for a remote server). Reads
        files: call it on a thread from the event loop."""
        if self.config.type != "local":
            return ServerCode({})
        return server_code(list(self.config.command or []), root, self.folder)


def server_entries(loaded: LoadedConfig) -> list[ServerEntry]:
    """Every configured server, in the order written (disabled ones too: listings show them)."""
    found: list[ServerEntry] = []
    for name, config in loaded.config.mcp.items():
        sources = {source for path, (source, _) in loaded.origins.items() if path[:2] == ("mcp", name)}
        source, line = loaded.where("mcp", name)
        project = any(_from_project(s, loaded) for s in sources)
        folder = _run_folder(loaded, loaded.where("mcp", name, "command")[0])
        found.append(ServerEntry(name, config, source, line, project, digest(loaded, name, config), folder))
    return found


def _run_folder(loaded: LoadedConfig, source: str | None) -> Path:
    """The folder of the project file that wrote a command (a `.opencode/` folder's file: the folder holding
    it), as relative paths in a config file are read from where the file is; else the working folder."""
    if source is not None and source not in PERSON_SOURCES and _from_project(source, loaded):
        path = Path(source)
        if path.is_absolute() and path.is_relative_to(loaded.root):
            folder = path.parent
            return folder.parent if folder.name == ".opencode" else folder
    return loaded.directory


def _from_project(source: str | None, loaded: LoadedConfig) -> bool:
    if source is None or source in PERSON_SOURCES:
        return False
    path = Path(source)
    if loaded.extra is not None and path == loaded.extra:
        return False
    return not path.is_relative_to(loaded.global_dir)


def digest(loaded: LoadedConfig, name: str, config: McpConfig) -> str:
    written: dict[str, Any] = config.model_dump(mode="json")
    for field in SECRET_FIELDS:
        written[field] = {key: _as_written(loaded, ("mcp", name, field, key), value)
                          for key, value in written[field].items()}
    for key in ("url",):
        if written.get(key) is not None:
            written[key] = _as_written(loaded, ("mcp", name, key), written[key])
    text = json.dumps({"root": str(loaded.root), "name": name, "entry": written}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _as_written(loaded: LoadedConfig, path: tuple[str, ...], value: str) -> str:
    names = loaded.env_refs.get(path)
    return "{env:" + ",".join(names) + "}" if names else value


def masked(path: tuple[str, ...], value: Any) -> Any | None:
    """How a listing shows `value` at `path`: masked when it is a header or environment value of an `mcp` entry,
    None when `path` is not such a place (the caller's own masking applies)."""
    if len(path) < 3 or path[0] != "mcp" or path[2] not in SECRET_FIELDS:
        return None
    if isinstance(value, dict):
        return {key: "•••• (set)" if item else "" for key, item in value.items()}
    return "•••• (set)" if value else ""


def secret_values(loaded: LoadedConfig) -> dict[str, str]:
    """Values to redact wherever text is shown or stored, by config key: every header value, and the environment
    values read from variables or named like secrets (a literal `LOG_LEVEL: debug` is configuration)."""
    out: dict[str, str] = {}
    for name, config in loaded.config.mcp.items():
        for key, value in config.headers.items():
            out[f"mcp.{name}.headers.{key}"] = _credential(value)
        for key, value in config.environment.items():
            if loaded.env_refs.get(("mcp", name, "environment", key)) or looks_secret(key):
                out[f"mcp.{name}.environment.{key}"] = value
    return {key: value for key, value in out.items() if value}


def _credential(value: str) -> str:
    """`Bearer abc…` → `abc…`: the part that is secret, so it is redacted wherever it appears alone too."""
    scheme, _, rest = value.partition(" ")
    return rest if rest and scheme.lower() in ("bearer", "token", "basic") else value
