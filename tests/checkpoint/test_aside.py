"""The copies of big files kept aside before a file tool writes them: in the data dir, bounded all together,
and gone with their turns."""

from __future__ import annotations

import asyncio

import pytest

from opencode_nb.checkpoint import aside

from .conftest import open_workspace, write


def _copies(ws) -> list[str]:
    folder = ws.checkpoints.aside.folder
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.name != "manifest.json"
                  and p.is_file())


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "weakened"])
async def test_copies_are_bounded_all_together_the_oldest_going_first(project, tmp_path, monkeypatch, weakened):
    big = b"x" * (3 * 2**20)
    (project / "a.bin").write_bytes(big)
    (project / "b.bin").write_bytes(big)
    monkeypatch.setattr(aside, "ASIDE_TOTAL_BYTES", 10 * 2**30 if weakened else 4 * 2**20)
    ws, _ = open_workspace(project, tmp_path / "data", [write("a.bin", "one\n"), {"text": "ok"},
                                                        write("b.bin", "two\n"), {"text": "ok"}],
                           {"checkpoints": {"max_file_mb": 1}})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "one"), 30)
    await asyncio.wait_for(ws.prompt(session.id, "two"), 30)
    copies = _copies(ws)
    assert ws.checkpoints.aside.folder.is_relative_to(tmp_path / "data")
    assert not any(p.name.startswith(".ocnb") or p.suffix == ".tmp" for p in project.rglob("*"))
    if weakened:
        assert len(copies) == 2, copies
        ws.close()
        return
    assert len(copies) == 1, copies  # the first turn's copy made room for the second's
    report = await ws.undo(session.id, to=1)
    ws.close()
    assert (project / "b.bin").read_bytes() == big
    assert "a.bin" in report.not_undone and (project / "a.bin").read_text() == "one\n", report.text()


async def test_copies_go_with_their_turns(project, tmp_path):
    (project / "a.bin").write_bytes(b"x" * (2 * 2**20))
    ws, _ = open_workspace(project, tmp_path / "data", [write("a.bin", "one\n"), {"text": "ok"},
                                                        {"text": "ok"}], {"checkpoints": {"max_file_mb": 1}})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "one"), 30)
    assert len(_copies(ws)) == 1
    await ws.undo(session.id)
    await asyncio.wait_for(ws.prompt(session.id, "instead"), 30)  # the undone turn is discarded
    await ws.checkpoints.before_tool(session.id, "bash")  # the next turn's start prunes
    await ws.checkpoints.after_tool(session.id, "bash")
    copies = _copies(ws)
    ws.close()
    assert copies == []
