"""A file the project's configuration reads (`{file:...}`, `instructions`) cannot be turned, after the person
confirmed it, into a link that reads a file outside the project into every system prompt. Tried by effect with
real bubblewrap.

The person writes `opencode.yaml` with an agent prompt `{file:prompt.md}` and `instructions: [notes.md]`, and
forbids reading outside the project (`external_directory: deny`). The config files never change afterwards, so the
config guard has nothing to judge; a sandboxed command (allowed, `python3 -c` so no rule sees the paths) replaces
the prompt file by a link to the person's private notes in `$HOME` (the instructions file is protected, so the
command cannot; the test plants that link itself, as a process outside the sandbox could). The next workspace
reads the configuration: without the check of where a read leads, the notes reach the model in the system prompt.
With it, the prompt's configuration does not load (naming the file, key and link) and the instructions file is
left out. The control takes that check away and sees the notes sent.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from opencode_nb import Workspace
from opencode_nb.config import inside
from opencode_nb.errors import ConfigError
from opencode_nb.provider import Scripted

pytestmark = pytest.mark.timeout(120)

NOTES = "the person's private notes: the launch moved to May"


@pytest.fixture
def base() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="opencode-nb-config-links-", dir="/var/tmp"))  # /tmp is the sandbox's own
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _workspace(base: Path) -> Workspace:
    env = {"XDG_CONFIG_HOME": str(base / "xdg"), "HOME": str(base / "home")}
    return Workspace(base / "proj", data_dir=base / "data", env=env)


async def _system_sent(ws: Workspace, calls: list[dict[str, object]] | None = None) -> str:
    model = Scripted([*([{"tool_calls": calls}] if calls else []), {"text": "done"}])
    ws.providers.register("scripted", model)
    await asyncio.wait_for(ws.prompt(ws.sessions.create().id, "go"), 60)
    return json.dumps([r.system for r in model.requests])


def _plain_read(path: Path, root: Path | None) -> str:
    return Path(path).read_text(encoding="utf-8")


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "control"])
@pytest.mark.parametrize("name", ["prompt.md", "notes.md"], ids=["file-ref", "instructions"])
async def test_a_link_made_after_the_config_was_confirmed_does_not_read_outside(bwrap, base, monkeypatch, name,
                                                                                weakened):
    if weakened:
        monkeypatch.setattr(inside, "read_text", _plain_read)  # the check of where the read leads, taken away
    root = base / "proj"
    root.mkdir()
    (base / "home").mkdir()
    (base / "home" / "notes.txt").write_text(NOTES + "\n")
    (root / "prompt.md").write_text("You review code.\n")
    (root / "notes.md").write_text("Use tabs.\n")
    (root / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "scripted/demo", "small_model": "scripted/demo", "sandbox": "required",
        "permission": {"*": "allow", "external_directory": "deny"}, "instructions": ["notes.md"],
        "agent": {"build": {"prompt": "{file:prompt.md}"}}}))
    with _workspace(base) as ws:  # the person's configuration, confirmed by use
        assert "You review code." in await _system_sent(ws)
        target = str(base / "home" / "notes.txt").encode().hex()
        script = f"import os; t = bytes.fromhex('{target}').decode(); os.remove('{name}'); os.symlink(t, '{name}')"
        await _system_sent(ws, [{"name": "bash", "input": {"command": f'python3 -c "{script}"'}}])
    if name == "notes.md":
        # a file `instructions` names is protected: the sandboxed command could not even replace it...
        assert not (root / name).is_symlink() and (root / name).read_text() == "Use tabs.\n"
        (root / name).unlink()  # ...so the test plants the link, as a process outside the sandbox could
        (root / name).symlink_to(base / "home" / "notes.txt")
    assert (root / name).is_symlink()  # the command (or the test) did its part

    if name == "prompt.md" and not weakened:  # the prompt cannot be read: the configuration says why, and where
        with pytest.raises(ConfigError, match=r"opencode.yaml:\d+ agent.build.prompt: .*leads it outside the project"):
            _workspace(base)
        return
    with _workspace(base) as ws:
        sent = await _system_sent(ws)
    if weakened:
        assert NOTES in sent  # the harm, seen
        return
    assert NOTES not in sent and "Use tabs." not in sent
