"""The checkpoint store's git config: only what `SnapshotStore.ensure` wrote, checked before every git call.

git runs programs its repository config names: `core.fsmonitor` at every `ls-files`/`update-index`,
`filter.<driver>.clean`/`process` for every file a `.gitattributes` line marks (the project's own
`.gitattributes` is read, and the turn writes it), `diff.<driver>.textconv`, `diff.external`, `core.pager`,
`core.editor`, `core.sshCommand`, `core.askPass`, `credential.helper`, `gpg.program`, hooks, and whatever an
`include.path` pulls in. The kernel runs git on the store outside any sandbox, so a config a sandboxed process
managed to change would run its code there. The sandbox keeps the data dir out of such processes' sight
(`sandbox/private.py`); this is the second line, for a store reached some other way (a data dir on a shared
disk, a file put there by hand, a sandbox that failed).

Two mechanisms, because neither alone covers it:

- `COMMAND_LINE`: settings given to every git call as command-line config (`GIT_CONFIG_COUNT`, which is
  git's `-c`, set in the environment so no call site can leave it out), which win over the repository's. They
  pin the keys that have one name: `core.fsmonitor`, `core.hooksPath`, the pager, the editor, ssh, askpass,
  credential helpers, signing, and `protocol.allow=never` (no transport, so no `ext::` command).
- `verify`: `-c` cannot unset a family of keys (`filter.<any name>.clean`, `diff.<any name>.textconv`,
  `merge.<any name>.driver`, `include.path`, `includeIf.*`), so the config file itself is read before each
  git call and must be exactly the few keys `ensure` writes, in the form `render` writes them; anything else
  (another key, another value, another layout, a link in its place, a `commondir` or `config.worktree`
  beside it that would make git read another file) and it is written afresh, with a warning. Rewriting
  rather than refusing: the store is ours and the checkpoints in it are still good, so an undo keeps working.
  A strict whitelist of our own rendering, not a blacklist of dangerous keys, so a key git learns next year
  to run a program from is refused today. Measured: the check is one read of a 300-byte file per call.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

OURS: tuple[tuple[str, str], ...] = (
    ("core.repositoryformatversion", "0"), ("core.bare", "false"), ("core.autocrlf", "false"),
    ("core.untrackedCache", "true"), ("core.quotePath", "false"), ("core.logAllRefUpdates", "false"),
    ("core.fsmonitor", "false"), ("core.hooksPath", os.devnull), ("gc.auto", "0"),
)
"""What the store's config says, whatever the machine."""
PROBED = ("core.filemode", "core.symlinks", "core.ignorecase", "core.precomposeunicode")
"""What `git init` finds out about the file system; kept as it found, true or false only."""

COMMAND_LINE: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"), ("core.hooksPath", os.devnull), ("core.pager", "cat"), ("core.editor", ":"),
    ("core.sshCommand", ""), ("core.askPass", ""), ("credential.helper", ""), ("diff.external", ""),
    ("core.attributesFile", os.devnull), ("commit.gpgSign", "false"), ("tag.gpgSign", "false"),
    ("gpg.program", ":"), ("protocol.allow", "never"), ("core.alternateRefsCommand", ""),
)
"""Given to every git call on the store, over whatever its config says."""

BESIDE = ("commondir", "config.worktree")
"""Files in a git dir that make git read a config other than `config`."""

_LINE = re.compile(r"\t([A-Za-z][A-Za-z0-9]*) = (\S+)")


def render(probed: dict[str, str]) -> str:
    """The config text `ensure` writes: our keys, then what git found of the file system."""
    keys = dict(OURS) | {k: v for k, v in probed.items() if k in PROBED and v in ("true", "false")}
    sections: dict[str, list[str]] = {}
    for key, value in keys.items():
        section, name = key.split(".", 1)
        sections.setdefault(section, []).append(f"\t{name} = {value}\n")
    return "".join(f"[{section}]\n" + "".join(lines) for section, lines in sections.items())


def parse(text: str) -> dict[str, str] | None:
    """The keys of a config in `render`'s form, or None when it is anything else."""
    keys: dict[str, str] = {}
    section: str | None = None
    for line in text.splitlines():
        if line.startswith("[") and line.endswith("]") and line[1:-1].isalpha():
            section = line[1:-1]
            continue
        found = _LINE.fullmatch(line)
        if found is None or section is None:
            return None
        keys[f"{section}.{found[1]}"] = found[2]
    return keys


def acceptable(text: str) -> dict[str, str] | None:
    """The probed keys of `text` when it is a config `ensure` could have written, else None."""
    keys = parse(text)
    if keys is None:
        return None
    ours, probed = dict(OURS), {}
    for key, value in keys.items():
        if key in ours:
            if ours[key] != value:
                return None
        elif key in PROBED and value in ("true", "false"):
            probed[key] = value
        else:
            return None
    if any(key not in keys for key in ours) or render(probed) != text:
        return None
    return probed


def default_probed() -> dict[str, str]:
    """What `git init` finds on this platform's usual file system: for a config rewritten from nothing."""
    if sys.platform == "darwin":
        return {"core.filemode": "true", "core.ignorecase": "true", "core.precomposeunicode": "true"}
    if os.name == "nt":
        return {"core.filemode": "false", "core.symlinks": "false", "core.ignorecase": "true"}
    return {"core.filemode": "true"}


def verify(git_dir: Path) -> list[str]:
    """Make the store's config what `ensure` wrote; what was wrong, one line each (empty: nothing was)."""
    wrong: list[str] = []
    for name in BESIDE:
        path = git_dir / name
        if os.path.lexists(path):
            wrong.append(f"{path} (makes git read another config)")
            _remove(path)
    config = git_dir / "config"
    text = _read(config)
    probed = acceptable(text) if text is not None else None
    if probed is None:
        wrong.append(f"{config} (holds more than the store's own settings)")
        write(git_dir, default_probed())
    if wrong:
        log.warning("the checkpoint store's git config was changed; written afresh: %s", "; ".join(wrong))
    return wrong


def write(git_dir: Path, probed: dict[str, str]) -> None:
    """Write the config as `render` makes it: to a fresh file renamed over the entry, whatever it was."""
    fd, temp = tempfile.mkstemp(prefix=".config-", dir=git_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(render(probed))
        os.replace(temp, git_dir / "config")
    except BaseException:
        _remove(Path(temp))
        raise


def _read(path: Path) -> str | None:
    """The file's text when it is a plain file (a link or anything else counts as tampered)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, 65536)
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _remove(path: Path) -> None:
    import shutil

    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    except FileNotFoundError:
        pass
