"""A docstring read as a function tool's description: its first paragraph, its sections, and each
parameter's words, from Google (`Args:`) or NumPy (`Parameters` and a dashed line) layouts, so a person's
`@tool` function is described to the model by what its author already wrote."""

from __future__ import annotations

import inspect
import re

_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters|"
                      r"Returns|Return|Yields|Raises|Examples?|Notes?|See Also|Attributes|Warnings?)\s*:?\s*$")
_PARAMETER_SECTIONS = {"Args", "Arguments", "Parameters", "Params", "Keyword Args", "Keyword Arguments",
                       "Other Parameters"}
_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\(([^)]*)\))?\s*(?::\s*(.*))?$")


def sections(doc: str) -> tuple[str, dict[str, list[str]]]:
    """The docstring's first paragraph and its sections (Google `Args:` or NumPy `Parameters` + dashes),
    each as its body's lines with the common indent removed."""
    lines = inspect.cleandoc(doc).splitlines() if doc else []
    found: dict[str, list[str]] = {}
    first: list[str] = []
    i = 0
    while i < len(lines) and lines[i].strip() and not _starts_section(lines, i):
        first.append(lines[i].strip())
        i += 1
    while i < len(lines):
        if not _starts_section(lines, i):
            i += 1
            continue
        title = _SECTION.match(lines[i].strip()).group(1)  # type: ignore[union-attr]
        numpy = not lines[i].rstrip().endswith(":")
        indent = len(lines[i]) - len(lines[i].lstrip())
        i += 2 if numpy else 1
        body = []
        while i < len(lines) and not _starts_section(lines, i):
            line = lines[i]
            if not numpy and line.strip() and len(line) - len(line.lstrip()) <= indent:
                break
            body.append(line)
            i += 1
        found[title] = _dedent(body)
    return " ".join(first), found


def _starts_section(lines: list[str], i: int) -> bool:
    text = lines[i].strip()
    if not _SECTION.match(text):
        return False
    if text.endswith(":"):
        return True
    following = lines[i + 1].strip() if i + 1 < len(lines) else ""
    return len(following) >= 3 and set(following) == {"-"}


def _dedent(body: list[str]) -> list[str]:
    while body and not body[-1].strip():
        body.pop()
    indents = [len(line) - len(line.lstrip()) for line in body if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:] for line in body]


def parameter_docs(doc: str) -> dict[str, str]:
    """Each parameter's description, from the Google `Args:` or NumPy `Parameters` sections."""
    described: dict[str, str] = {}
    for title, body in sections(doc)[1].items():
        if title not in _PARAMETER_SECTIONS:
            continue
        current: str | None = None
        for line in body:
            entry = _ENTRY.match(line) if line and not line[0].isspace() else None
            if entry:
                current = entry.group(1)
                text = entry.group(3) or ""
                numpy_type = entry.group(3) is not None and entry.group(2) is None and line.count(" : ") == 1
                described[current] = "" if numpy_type else text.strip()
            elif current is not None and line.strip():
                described[current] = f"{described[current]} {line.strip()}".strip()
    return {k: v for k, v in described.items() if v}
