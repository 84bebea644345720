"""`@name` in a prompt: a subagent to run, or a file to attach.

`@explore find the loaders` runs the explore subagent on that prompt directly (the person chose it, so
no task permission is asked). `@data/sales.csv` attaches the file: text inline, images as images.
A mention that is neither stays plain text.
"""

from __future__ import annotations

import base64
import mimetypes
import re
from pathlib import Path

from ..agent import AgentRegistry
from .models import AgentPart, FilePart, Part

MENTION = re.compile(r"(?<![\w`@])@([\w~][\w./~-]*)", re.ASCII)
MAX_INLINE_BYTES = 200_000
"""Larger files are attached by reference only: the agent can read them in pieces."""


def mention_parts(registry: AgentRegistry, directory: Path, session_id: str, message_id: str, text: str, *,
                  agents: bool = True) -> list[Part]:
    parts: list[Part] = []
    seen: set[str] = set()
    for match in MENTION.finditer(text):
        name = match.group(1).rstrip(".,;:")
        if name in seen:
            continue
        seen.add(name)
        if agents and name in registry and registry.get(name).is_subagent and not registry.get(name).hidden:
            parts.append(AgentPart(session_id=session_id, message_id=message_id, name=name, source=f"@{name}"))
            continue
        path = (directory / Path(name).expanduser()).resolve()
        if path.is_file():
            parts.append(_file_part(path, session_id, message_id, name))
    return parts


def _file_part(path: Path, session_id: str, message_id: str, name: str) -> FilePart:
    mime = mimetypes.guess_type(path.name)[0] or "text/plain"
    size = path.stat().st_size
    if size <= MAX_INLINE_BYTES and (mime.startswith("image/") or _is_text(path)):
        mime = mime if mime.startswith("image/") else "text/plain"
        url = f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode()}"
    else:
        url = path.as_uri()
    return FilePart(session_id=session_id, message_id=message_id, mime=mime, url=url, filename=name,
                    source=f"@{name}")


def _is_text(path: Path) -> bool:
    sample = path.read_bytes()[:4096]
    if b"\0" in sample:
        return False
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(sample) - 4
    return True
