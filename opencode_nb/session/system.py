"""Assembly of the system prompt: base prompt, agent prompt, environment and instruction files.

The environment block and the instruction files are read once per loop run, not once per step: they
cost file-system walks, and a step must not grow slower as a session grows longer.
"""

from __future__ import annotations

import datetime as dt
import glob
import os
import platform
from collections.abc import Iterable, Sequence
from functools import cache
from importlib.resources import files
from pathlib import Path

from ..tool.context import KernelBridge
from ..tool.files.ignore import ignore_spec
from ..tool.support.describe import list_namespace

INSTRUCTION_NAMES = ("AGENTS.md", "CLAUDE.md")
"""Project instruction files, looked for from the working directory up to the project root. The first name
with any match wins; every match of that name is used."""

TREE_LIMIT = 200
"""At most this many entries of the file tree go into the environment block."""



@cache
def prompt_text(name: str) -> str:
    """A prompt file shipped beside this module (`prompts/<name>.txt`)."""
    return files(__package__).joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8").strip()


def base_prompt(model_id: str) -> str:
    """The provider-family prompt: models follow instructions best in the voice they were tuned on."""
    name = model_id.split("/", 1)[-1].lower()
    if "claude" in name:
        return prompt_text("anthropic")
    if name.startswith(("gpt", "o1", "o3", "o4")):
        return prompt_text("openai")
    return prompt_text("default")


def is_git_repo(directory: Path) -> bool:
    return any((p / ".git").exists() for p in (directory, *directory.parents))


def environment_block(
    directory: Path, root: Path, model_id: str, *, today: dt.date | None = None, tree: str | None = None
) -> str:
    today = today or dt.date.today()
    lines = [
        f"You are powered by the model {model_id}.",
        "Here is some useful information about the environment you are running in:",
        "<env>",
        f"  Working directory: {directory}",
        f"  Workspace root folder: {root}",
        f"  Is directory a git repo: {'yes' if is_git_repo(directory) else 'no'}",
        f"  Platform: {platform.system().lower()}",
        f"  Today's date: {today:%a %b %d %Y}",
        "</env>",
    ]
    if tree:
        lines += ["<files>", tree, "</files>"]
    return "\n".join(lines)


NOTEBOOK_VARIABLES = 30
"""How many of the person's variables the system prompt names; the variables tool lists the rest."""


def notebook_block(kernel: KernelBridge) -> str:
    """Tells the model it works inside a live notebook kernel, and what is in it, so it reaches for the
    variables and python tools instead of guessing from files."""
    listing = list_namespace(kernel.user_ns, limit=NOTEBOOK_VARIABLES)
    where = f" for the notebook {kernel.notebook_path}" if kernel.notebook_path else ""
    return (f"<notebook>\nThis session runs in a live Jupyter kernel ({kernel.language}){where}. The person's "
            "variables are in memory: inspect them with the variables tool and compute on them with the python "
            "tool rather than re-reading files they came from.\n"
            f"Variables ({listing.total} in all):\n{listing.text}\n</notebook>")


def file_tree(root: Path, limit: int = TREE_LIMIT) -> str:
    """An indented listing of `root`, honouring .gitignore, cut after `limit` entries with a note."""
    spec = ignore_spec(root)
    out: list[str] = []
    total = 0
    for current, dirs, names in os.walk(root):
        rel_dir = Path(current).relative_to(root)
        dirs[:] = sorted(d for d in dirs if not spec.match_file(f"{(rel_dir / d).as_posix()}/"))
        depth = len(rel_dir.parts)
        if depth:
            total += 1
            if len(out) < limit:
                out.append(f"{'  ' * (depth - 1)}{rel_dir.name}/")
        for name in sorted(names):
            if spec.match_file((rel_dir / name).as_posix()):
                continue
            total += 1
            if len(out) < limit:
                out.append(f"{'  ' * depth}{name}")
    if total > limit:
        out.append(f"... ({total - limit} more entries not shown; use the list or glob tools)")
    return "\n".join(out)


def find_instruction_files(
    directory: Path, root: Path, *, global_dir: Path | None = None, extra: Sequence[str] = ()
) -> list[Path]:
    """Instruction files in the order they are shown to the model.

    Global `AGENTS.md` in the config dir first; then, for the first of INSTRUCTION_NAMES found anywhere
    from `directory` up to `root`, every match of it (outermost first, so the nearest file reads last
    and wins where they disagree); then config `instructions` entries (paths or globs, relative to the
    project root, `~` expanded), in the order given.
    """
    found: list[Path] = []
    if global_dir and (global_dir / "AGENTS.md").is_file():
        found.append(global_dir / "AGENTS.md")
    chain = [directory, *(p for p in directory.parents if _within(p, root))]
    for name in INSTRUCTION_NAMES:
        matches = [d / name for d in chain if (d / name).is_file()]
        if matches:
            found.extend(reversed(matches))
            break
    for entry in extra:
        pattern = os.path.expanduser(entry)
        if not os.path.isabs(pattern):
            pattern = str(root / pattern)
        found.extend(Path(p) for p in sorted(glob.glob(pattern, recursive=True)) if Path(p).is_file())
    return _unique(found)


def instruction_blocks(paths: Iterable[Path]) -> list[str]:
    blocks = []
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
        if text:
            blocks.append(f"Instructions from: {path}\n{text}")
    return blocks


def assemble(
    *, model_id: str, agent_prompt: str | None, environment: str, instructions: Sequence[str],
    user_system: str | None = None,
) -> list[str]:
    """The system blocks of one request: base prompt, agent prompt, environment, instructions, extras.

    Kept as separate blocks so a provider can put its cache breakpoint after the stable ones.
    """
    blocks = [base_prompt(model_id)]
    if agent_prompt:
        blocks.append(agent_prompt.strip())
    blocks.append(environment)
    blocks.extend(instructions)
    if user_system:
        blocks.append(user_system)
    return blocks


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _unique(paths: Iterable[Path]) -> list[Path]:
    seen: set[Path] = set()
    out = []
    for p in paths:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out
