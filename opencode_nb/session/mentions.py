"""`@name` in a prompt: a subagent to run, a file to attach, or one of the person's variables.

`@explore find the loaders` runs the explore subagent on that prompt directly (the person chose it, so
no task permission is asked). `@data/sales.csv` attaches the file: text inline, images as images.
In a kernel, `@df` (or `@df.price`, `@d["key"]`) of a variable that names no agent or file attaches the
variables tool's description of it, so the model starts from its shape and dtypes. A mention that is
none of these stays plain text.
"""

from __future__ import annotations

import base64
import mimetypes
import re
from pathlib import Path

from ..agent.registry import AgentRegistry
from ..errors import ToolError
from ..tool.context import KernelBridge
from ..tool.support.describe.values import describe
from ..tool.variables import resolve
from .models import AgentPart, FilePart, Part, TextPart

MENTION = re.compile(r"(?<![\w`@])@([\w~][\w./~-]*(?:\[[^\]\s]+\])*)", re.ASCII)
MAX_INLINE_BYTES = 200_000
"""Larger files are attached by reference only: the agent can read them in pieces."""


def mention_parts(registry: AgentRegistry, directory: Path, session_id: str, message_id: str, text: str, *,
                  agents: bool = True, kernel: KernelBridge | None = None) -> list[Part]:
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
        elif kernel is not None:
            described = _variable_text(kernel, name)
            if described is not None:
                parts.append(TextPart(session_id=session_id, message_id=message_id, synthetic=True,
                                      text=f"The person mentioned @{name}, a variable in their kernel:\n{described}"))
    return parts


def _variable_text(kernel: KernelBridge, name: str) -> str | None:
    try:
        value = resolve(kernel.user_ns, name)
    except ToolError:
        return None
    return describe(value, name)


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
