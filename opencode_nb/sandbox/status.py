"""Which OS sandbox shell commands run in here, said in one line a person can act on.

Rules decide from what a command says; only an OS sandbox holds when a command does what its words hide.
Where there is none, `sandbox: auto` runs every command unconfined, and the person must learn that from
what they already read (`%agent config`, `opencode-nb demo`, the first command's card), with the reason
and the way to get one, not from the README.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Literal

from ..config.schema import SandboxMode
from .policy import Backend, find_backend

Kind = Literal["bubblewrap", "seatbelt", "none"]


@dataclass(frozen=True)
class SandboxStatus:
    kind: Kind
    mode: SandboxMode
    detail: str
    """The sandbox program in use, or why there is none."""
    platform: str = sys.platform

    @property
    def line(self) -> str:
        """`bubblewrap`, `seatbelt` or `none: …`, then the setting and the detail, for a person to read."""
        where = f"(sandbox: {self.mode}; {self.detail})"
        if self.kind != "none":
            return f"{self.kind}: shell commands run confined {where}"
        if self.mode == "off":
            return f"none: commands run unconfined (sandbox: off in the config; {self.detail})"
        if self.mode == "required":
            return f"none: shell commands will not run — {self.remedy}, or set `sandbox: auto` {where}"
        return f"none: commands run unconfined — {self.remedy} {where}"

    @property
    def remedy(self) -> str:
        """How to get a sandbox, given why there is none."""
        if self.platform == "darwin":
            return "sandbox-exec comes with macOS: /usr/bin/sandbox-exec must be present and working"
        if not self.platform.startswith("linux"):
            return "no OS sandbox exists for this system: run agents where bubblewrap works"
        if "not installed" in self.detail or "does not exist" in self.detail:
            return "install bubblewrap (`apt-get install bubblewrap`, `dnf install bubblewrap`)"
        return "make bubblewrap work here (it needs unprivileged user namespaces)"


def sandbox_status(mode: SandboxMode, binary: str | None = None, platform: str = sys.platform) -> SandboxStatus:
    """The sandbox that commands of a workspace with setting `mode` run in on this machine.

    Args:
        binary: `OPENCODE_NB_BWRAP` from the workspace's environment, if set.
    """
    if mode == "off":
        return SandboxStatus("none", mode, "nothing is probed", platform)
    found = find_backend(binary, platform)
    if isinstance(found, Backend):
        return SandboxStatus("bubblewrap" if found.kind == "bwrap" else "seatbelt", mode, found.binary, platform)
    return SandboxStatus("none", mode, found, platform)
