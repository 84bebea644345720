"""What a configuration change puts in front of the model that the configuration before it did not.

A config value may read a variable (`{env:NAME}`) or a file (`{file:path}`), and `instructions` entries add
files to every system prompt. An agent that may write `opencode.yaml` could so hand the next runs a variable's
value (kept from its own processes), a file outside the project (`~/.ssh/id_rsa`) or one its `read` rules keep
from it. Each such new source is a loosening for the guard (loosen.py); this module finds them and words what
would reach the model, for the person who is asked to confirm it:

- the variable by name, and whether its name makes it a secret (then the model reads `[redacted: NAME]` in its
  place: the system prompt passes redaction, session/system.py) or its value is sent as it is;
- the file by its path with links resolved (a path inside the project that a link leads out of is not read at
  all: inside.py), whether
  it is outside the project, its size, and whether it is a file that holds secrets (its values redacted).

Never the value or the file's text: the message is shown, logged and stored. Sources are compared key path by
key path (`LoadedConfig.env_refs`, `file_refs`) and instruction files by resolved path, so a reference the
confirmed configuration already read is not judged again, even when the file it names now holds other text.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator
from pathlib import Path

from ..secrets import looks_secret
from ..secrets.files import is_secret_file
from .layer import KeyPath
from .load import LoadedConfig

TO_THE_MODEL = {
    ("agent", "prompt"): "the agent's system prompt", ("agent", "description"): "the agent's description",
    ("command", "template"): "the command's prompt", ("command", "description"): "the command's description",
}
"""Keys whose value the model reads, by section and field; any other key says where the value goes by its name."""


def reaching_model(old: LoadedConfig, new: LoadedConfig) -> list[tuple[KeyPath, str]]:
    """Each key path of `new` that reads a variable or a file `old` did not read there, with what it reads; and
    `("instructions",)` for each instruction file `old` did not have."""
    return [*_variables(old, new), *_files(old, new), *_instructions(old, new)]


def _variables(old: LoadedConfig, new: LoadedConfig) -> Iterator[tuple[KeyPath, str]]:
    for path, names in new.env_refs.items():
        before = set(old.env_refs.get(path, ()))
        for name in dict.fromkeys(names):
            if name in before:
                continue
            said = f"now reads the variable ${name} into {_into(path) or 'this value'}"
            if _into(path):
                secret = looks_secret(name) or any(fnmatch.fnmatchcase(name, p) for p in new.config.secrets.env)
                said += (f" (a secret by its name: the model reads [redacted: {name}] in its place)" if secret else
                         " (not a secret by its name: its value is sent as it is)")
            yield path, said


def _files(old: LoadedConfig, new: LoadedConfig) -> Iterator[tuple[KeyPath, str]]:
    for path, files in new.file_refs.items():
        before = set(old.file_refs.get(path, ()))
        for file in dict.fromkeys(files):
            if file not in before:
                into = _into(path)
                yield path, (f"now reads the file {_describe(Path(file), new.root, to_model=bool(into))} into "
                             f"{into or 'this value'}")


def _instructions(old: LoadedConfig, new: LoadedConfig) -> Iterator[tuple[KeyPath, str]]:
    before = {os.path.realpath(p) for p in old.instruction_files}
    for file in new.instruction_files:
        real = Path(os.path.realpath(file))
        if str(real) not in before:
            yield ("instructions",), (f"adds the file {_describe(real, new.root, to_model=True)} to every agent's "
                                      "system prompt")


def _into(path: KeyPath) -> str:
    """What the model reads the value as, or "" for a key it does not read."""
    if len(path) == 3 and (path[0], path[2]) in TO_THE_MODEL:
        return f"{TO_THE_MODEL[path[0], path[2]]} ({path[1]})"
    return ""


def _describe(file: Path, root: Path, *, to_model: bool) -> str:
    real = Path(os.path.realpath(file))
    notes = []
    if not real.is_relative_to(os.path.realpath(root)):
        notes.append("outside the project")
    try:
        notes.append(f"{real.stat().st_size:,} bytes")
    except OSError:
        notes.append("unreadable now")
    if is_secret_file(str(real)):
        notes.append("a file that holds secrets" + (": the model reads its values as [redacted: ...]" if to_model
                                                    else ""))
    elif to_model:
        notes.append("its text is sent as it is")
    shown = str(file) if str(file) == str(real) else f"{file} (a link to {real})"
    return f"{shown} ({'; '.join(notes)})"
