"""What a checker found, and how the model and the person read it.

The model reads the findings at the end of the tool's result, one line each (`ERROR [line:col] CODE message`),
capped per file so a file full of mistakes cannot fill the context; the person reads a count and the first few
on the card (`metadata["diagnostics"]`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Finding:
    """One error-level problem, at a 1-based line and column of the file or cell that was changed."""

    line: int
    column: int
    code: str
    """The checker's rule (`F821`, `invalid-syntax`, `reportAttributeAccessIssue`)."""
    message: str
    source: str
    """Which checker said so: `ruff`, `pyright`, `basedpyright`."""

    def line_for_model(self) -> str:
        return f"ERROR [{self.line}:{self.column}] {self.code} {self.message}"

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "column": self.column, "code": self.code, "message": self.message,
                "source": self.source}


@dataclass(frozen=True)
class Checked:
    """What the checks after one change found: in `where` (a path as the model reads it, or `cell <id>`)."""

    where: str
    findings: list[Finding] = field(default_factory=list)
    checkers: list[str] = field(default_factory=list)
    """The checkers that ran to the end, so a clean result is known to be clean, not merely unchecked."""
    notes: list[str] = field(default_factory=list)
    """Why a checker said nothing (not installed, timed out): for the person, never the model."""
    cap: int = 20

    def for_model(self) -> str:
        """The block appended to the tool's output; "" when nothing was found."""
        if not self.findings:
            return ""
        shown = self.findings[: self.cap]
        rest = len(self.findings) - len(shown)
        lines = [f"Problems found in {self.where} after this edit, please fix:",
                 *(f.line_for_model() for f in shown)]
        if rest:
            lines.append(f"... and {rest} more")
        return "\n\n" + "\n".join(lines)

    def metadata(self) -> dict[str, Any]:
        """`metadata["diagnostics"]` of the tool's result: what the card shows."""
        return {"where": self.where, "count": len(self.findings),
                "findings": [f.as_dict() for f in self.findings[: self.cap]],
                "checkers": list(self.checkers), "notes": list(self.notes)}


def merged(groups: Iterable[Sequence[Finding]]) -> list[Finding]:
    """The findings of several checkers in line order, each place and problem once: ruff and pyright both
    report an undefined name, and the model needs to read it only once (the first checker's wording wins)."""
    seen: set[tuple[int, int]] = set()
    kept: list[Finding] = []
    for group in groups:
        fresh = [f for f in group if (f.line, f.column) not in seen]
        seen.update((f.line, f.column) for f in fresh)
        kept.extend(fresh)
    return sorted(kept, key=lambda f: (f.line, f.column))
