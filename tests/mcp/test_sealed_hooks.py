"""A missing `.git/hooks` cannot be won by a server that outlives its calls, tried by effect with real bubblewrap.

The after-check looks every `WATCH_S`; in between, a hook a server drops into a missing `.git/hooks` is there for
the person's `git commit` to run. Under a real `.git` that folder is sealed instead (`protected.sealable`): an
empty read-only tmpfs, so the write fails at once and nothing is there, even while the call is still open. The
control takes the seal away and sees the hook on disk mid-call.
"""

from __future__ import annotations

import asyncio

import pytest

from opencode_nb.sandbox import protected

from . import test_sandboxed_servers as sandboxed

stage = sandboxed.stage  # its fixture, found here by name

pytestmark = pytest.mark.timeout(120)

HOOK = {".git/hooks/pre-commit": "#!/bin/sh\ntouch PWNED\n"}


def no_seal(monkeypatch) -> None:
    """The guard weakened: a missing `.git/hooks` is only looked at afterwards."""
    monkeypatch.setattr(protected, "sealable", lambda path: False)


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "control"])
async def test_a_server_cannot_drop_a_hook_into_a_missing_hooks_folder(bwrap, stage, monkeypatch, weakened):
    if weakened:
        no_seal(monkeypatch)
    hook = stage.root / ".git" / "hooks" / "pre-commit"
    ws = stage.workspace()
    seen = 0

    async def watch() -> None:  # the person's `git commit`, looking for the hook every 5 ms
        nonlocal seen
        while True:
            seen += hook.exists()
            await asyncio.sleep(0.005)

    watcher = asyncio.get_running_loop().create_task(watch())
    try:
        state = await stage.call(ws, "hold", {"files": HOOK, "seconds": 2.0})
    finally:
        watcher.cancel()
        await stage.close()
    if weakened:
        assert seen > 0  # the harm, seen: the hook was on disk between two after-checks (then it was stopped)
        return
    assert state.status == "completed"
    assert "Read-only file system" in state.output  # refused at once (EROFS)
    assert seen == 0 and not hook.exists()
    # What bubblewrap leaves behind on the host: the seal's mount point, an empty `.git/hooks`.
    assert (stage.root / ".git" / "hooks").is_dir() and not any((stage.root / ".git" / "hooks").iterdir())
    card = next(s for s in ws.mcp.states() if s.entry.name == "writer")
    assert card.status != "failed"  # nothing was made, so nothing was stopped


async def test_a_sealed_hooks_folder_does_not_take_a_file_tool_write_for_the_servers(bwrap, stage):
    """The person's own hook (written from outside while a server runs, as a permitted file-tool write is) stays:
    the after-check of a sealed folder moves away only what the server could have put there, and a permitted
    write is exempt."""
    ws = stage.workspace()
    state = await stage.call(ws, "hold", {"files": {"note.txt": "x"}, "seconds": 0.1})
    assert state.status == "completed"
    hooks = stage.root / ".git" / "hooks"
    assert hooks.is_dir()
    protected.permitted_write(hooks / "pre-push")
    (hooks / "pre-push").write_text("#!/bin/sh\n")
    await asyncio.sleep(3 * 0.5)
    await stage.close()
    assert (hooks / "pre-push").exists()
