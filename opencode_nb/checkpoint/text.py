"""Checkpoints as a person reads them in a terminal or a cell: one line per turn, with what it changed, and
diffs with their secrets hidden.

Everything here passes redaction before anyone sees it (`opencode-nb diff|checkpoints`, `ws.checkpoints.diff`,
`%agent diff`, `%agent checkpoints`, an undo's conflict): known secret values anywhere (`secrets.redact`), and
in a file that conventionally holds secrets (`.env`, `id_rsa`, `credentials`...: `secrets.is_secret_file`)
every value, whatever its length and whether or not it was ever learned: a diff is where an old key, gone from
the file today and so known to nobody, would otherwise be printed. Such a file's lines keep their key
(`+STRIPE_KEY=[redacted: .env:STRIPE_KEY]`), so the diff still says what changed.
"""

from __future__ import annotations

import codecs
import re
from datetime import datetime

from .. import secrets
from .records import TurnRecord, not_recorded

_PROMPT_WIDTH = 48
_GIT_HEADER = re.compile(r"^diff --git a/(.*) b/(.*)$")
_QUOTED_HEADER = re.compile(r'^diff --git (?:"a/(?:[^"\\]|\\.)*"|a/\S*) ("b/(?:[^"\\]|\\.)*")$')
_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_ASSIGNMENT = re.compile(r"^(\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_.\-]*\s*[=:]\s*)(.*)$")


def format_turns(turns: list[TurnRecord], *, available: bool = True, why_not: str | None = None) -> str:
    """`  3  14:02  "fix the mean"  src/stats.py (+1 -1), out.csv (new)`, taken-back turns marked `undone`."""
    if not turns:
        lines = ["no turns yet in this session"]
    else:
        lines = []
        for turn in turns:
            prompt = " ".join(turn.prompt.split())
            prompt = prompt if len(prompt) <= _PROMPT_WIDTH else prompt[:_PROMPT_WIDTH - 1] + "…"
            files = ", ".join(f.label() for f in turn.files) or "no file changes"
            if turn.skipped:
                files += f"; not recorded: {not_recorded(turn.skipped)}"
            mark = " (undone)" if turn.undone else ""
            lines.append(f"{turn.index:>3}  {datetime.fromtimestamp(turn.created):%H:%M}  {prompt!r}{mark}  {files}")
    if not available and why_not:
        lines.append(f"note: {why_not}")
    return secrets.redact("\n".join(lines))


def redact_patch(patch: str) -> str:
    """A unified diff (git's, or `store.unified`'s) as it may be shown: see the module's docstring."""
    if not patch:
        return patch
    out: list[str] = []
    path, secret = "", False
    old = new = 0
    for line in patch.splitlines(keepends=True):
        body = line.rstrip("\n")
        if old > 0 or new > 0:  # inside a hunk: its lines, counted, never mistaken for headers
            sign = body[:1]
            if sign in ("-", " "):
                old -= 1
            if sign in ("+", " "):
                new -= 1
            out.append(sign + _mask(path, body[1:]) + line[len(body):] if secret and sign in "+- " and body
                       else line)
            continue
        header = _GIT_HEADER.match(body)
        hunk = _HUNK.match(body)
        if header is not None:
            path = header.group(2)
            secret = secrets.is_secret_file(path)
        elif body.startswith(("--- ", "+++ ")) and body[4:] != "/dev/null":
            name = _unquoted(body[4:])
            path = name[2:] if name[:2] in ("a/", "b/") else name
            secret = secrets.is_secret_file(path)
        elif hunk is not None:
            old = int(hunk.group(1)) if hunk.group(1) is not None else 1
            new = int(hunk.group(2)) if hunk.group(2) is not None else 1
        out.append(line)
    return secrets.redact("".join(out))


def patch_sections(patch: str) -> list[tuple[str, str]]:
    """A git patch cut into its files: (path, that file's part), in order. The path is read from the `+++`
    line (the `---` one for a deletion) before the first hunk, else from the `diff --git` line, unquoted as
    git quotes odd names."""
    sections: list[list[str]] = []
    for line in patch.splitlines(keepends=True):
        if line.startswith("diff --git ") or not sections:
            sections.append([line])
        else:
            sections[-1].append(line)
    return [(_section_path(lines), "".join(lines)) for lines in sections]


def _section_path(lines: list[str]) -> str:
    old = ""
    for line in lines[1:]:
        body = line.rstrip("\n")
        if body.startswith("@@"):
            break
        if body.startswith(("+++ ", "--- ")) and body[4:] != "/dev/null":
            name = _unquoted(body[4:])
            if body.startswith("+++ "):
                return name[2:] if name[:2] in ("a/", "b/") else name
            old = name[2:] if name[:2] in ("a/", "b/") else name
    if old:
        return old
    header = _GIT_HEADER.match(lines[0].rstrip("\n"))
    if header is not None:
        return header.group(2)
    quoted = _QUOTED_HEADER.match(lines[0].rstrip("\n"))
    return _unquoted(quoted.group(1))[2:] if quoted is not None else ""


def _unquoted(name: str) -> str:
    """A path as git prints it in a diff: in double quotes, C-escaped, when it holds a quote, a backslash, a
    tab, a newline or another control character (`"b/q\\"/.env"`); the label then names the real file."""
    if len(name) < 2 or not (name.startswith('"') and name.endswith('"')):
        return name
    try:
        return codecs.escape_decode(name[1:-1].encode("utf-8", "surrogateescape"))[0].decode("utf-8", "replace")
    except ValueError:
        return name


def _mask(path: str, text: str) -> str:
    """A secret file's line with its value hidden: a blank line and a key's `-----BEGIN` line stay, a `KEY=value`
    keeps `KEY`, anything else (a comment too: `# old key: ...`) is hidden whole."""
    stripped = text.strip()
    if not stripped or (stripped.startswith("-----") and stripped.endswith("-----")):
        return text
    match = _ASSIGNMENT.match(text)
    if match is not None:
        key = match.group(1).strip().rstrip("=:").strip().removeprefix("export").strip()
        return match.group(1) + secrets.label(f"{path}:{key}")
    return secrets.label(path)
