"""Assembly of the system prompt: base prompt, agent prompt, environment and instruction files.

The environment block and the instruction files are read once per loop run, not once per step: they
cost file-system walks, and a step must not grow slower as a session grows longer.

What is sent passes redaction like everything else we write (`outgoing`): every system block (base and
agent prompt, environment, instruction files, the person's `system`) and every tool's description and schema
(the skills listing, an MCP server's own words). An agent prompt may read a variable or a file through
`{env:...}`/`{file:...}`, and an instruction file may be a `.env`: a secret's value reaches the model only as
`[redacted: NAME]`, whatever the configuration confirmed. Messages are not walked here: the run log redacted
them as they were written (runlog.py), and walking the history at every step would make steps grow with it.
Redacting a request costs about half a millisecond (measured: the build agent's 19 tools, 20 kB of
descriptions and schemas, and its system prompt, nothing found), as much as the rest of a step
(`bench/bench_loop.py`), so the result is kept and a later step with the same blocks, tools and known secrets
reuses it (a few microseconds); a secret learnt during a run (a `.env` a command read) makes a new redactor, and
the next step is redacted again.
"""

from __future__ import annotations

import datetime as dt
import glob
import logging
import os
import platform
import threading
from collections import OrderedDict
from collections.abc import Collection, Iterable, Sequence
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from .. import secrets
from ..config import inside
from ..provider.request import LLMRequest, ToolSpec
from ..tool.context import KernelBridge
from ..tool.files.ignore import ignore_spec
from ..tool.support.describe.listing import list_namespace

log = logging.getLogger(__name__)

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


def notebook_block(kernel: KernelBridge, *, variables: bool = True) -> str:
    """Tells the model it works inside a live notebook kernel, and what is in it, so it reaches for the
    variables and python tools instead of guessing from files. Without `variables` (a Fix or Explain run, whose
    prompt describes what the failing cell reads) the namespace is not listed, nor any name of it."""
    where = f" for the notebook {kernel.notebook_path}" if kernel.notebook_path else ""
    head = (f"<notebook>\nThis session runs in a live Jupyter kernel ({kernel.language}){where}. The person's "
            "variables are in memory: inspect them with the variables tool and compute on them with the python "
            "tool rather than re-reading files they came from.\n")
    if not variables:
        return head + "The variables are not listed here; the variables tool lists them.\n</notebook>"
    listing = list_namespace(kernel.user_ns, limit=NOTEBOOK_VARIABLES)
    return head + f"Variables ({listing.total} in all):\n{listing.text}\n</notebook>"


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


def instruction_blocks(paths: Iterable[Path], *, root: Path | None = None,
                       linked: Collection[Path] = ()) -> list[str]:
    """Each file's text under its path. A file that holds secrets (an `instructions: [.env]` entry, or a link
    to a key) has its values learnt first, so `outgoing` hides them wherever the file sits.

    A file inside the project `root` that a link leads out of is left out (`config/inside.py`: a command could
    have swapped a configured `instructions` file for a link to `~`), except the instruction files found by
    name (`linked`, `AGENTS.md` at the project's levels): those are protected paths, whose links only the
    person makes."""
    blocks = []
    for path in paths:
        try:
            text = inside.read_text(path, None if path in linked else root).strip()
        except UnicodeDecodeError:
            text = path.read_bytes().decode("utf-8", errors="replace").strip()
        except OSError as exc:  # a link out, a FIFO, a file gone since it was found: not read, the run goes on
            log.warning("instructions file %s left out: %s", path, exc.strerror)
            continue
        real = os.path.realpath(path)
        if secrets.is_secret_file(real) or secrets.is_secret_file(str(path)):
            secrets.learn_file(real, text)
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


SENT_KEPT = 32
"""Requests' redacted system blocks and tools kept for the next step: a few sessions' worth, running at once."""
_sent: OrderedDict[tuple[int, tuple[str, ...], tuple[int, ...]], tuple[object, list[ToolSpec], Any]] = OrderedDict()
_sent_lock = threading.Lock()


def outgoing(request: LLMRequest) -> LLMRequest:
    """`request` with its system blocks and tools redacted; the very same request when nothing is secret.

    The steps of a run send the same blocks and tools again and again, so the result is kept, keyed by the
    redactor (a new one as soon as a secret is learnt), the blocks and the tools: a step costs a lookup.
    """
    redactor = secrets.active()
    if not redactor:
        return request
    key = (id(redactor), tuple(request.system), tuple(map(id, request.tools)))
    with _sent_lock:  # workspaces in other threads (a script's) share the cache
        kept = _sent.get(key)  # it holds the redactor and the tools, so no other object takes their ids meanwhile
        if kept is not None:
            _sent.move_to_end(key)
    if kept is None:
        system = redactor.redact_value(request.system)
        tools = [_redacted_spec(redactor, spec) for spec in request.tools]
        same = system is request.system and all(a is b for a, b in zip(tools, request.tools, strict=True))
        kept = (redactor, list(request.tools), None if same else (system, tools))
        with _sent_lock:
            _sent[key] = kept
            while len(_sent) > SENT_KEPT:
                _sent.popitem(last=False)
    if kept[2] is None:
        return request
    system, tools = kept[2]
    return request.model_copy(update={"system": system, "tools": tools})


def _redacted_spec(redactor: secrets.Redactor, spec: ToolSpec) -> ToolSpec:
    """The description and schema redacted; the name stays, as it is what the model calls the tool by."""
    description, parameters = redactor.redact_value(spec.description), redactor.redact_value(spec.parameters)
    if description is spec.description and parameters is spec.parameters:
        return spec
    return spec.model_copy(update={"description": description, "parameters": parameters})


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
