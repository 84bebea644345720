"""Recording runs beside the session, never in its way: off the event loop, and even for a stopped tool."""

from __future__ import annotations

import asyncio
import time

from .conftest import bash, open_workspace


async def test_a_snapshot_never_blocks_the_event_loop(project, tmp_path):
    for i in range(3000):  # the first snapshot hashes them all: hundreds of milliseconds of git
        (project / f"f{i // 100}").mkdir(exist_ok=True)
        (project / f"f{i // 100}" / f"{i}.txt").write_text(f"{i}\n" * 20)
    ws, _ = open_workspace(project, tmp_path / "data", [])
    session = ws.sessions.create()
    await ws.prompt(session.id, "hello")  # a turn for the recording to belong to
    gaps, done = [], asyncio.Event()

    async def ticker():
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticking = asyncio.create_task(ticker())
    started = time.perf_counter()
    await ws.checkpoints.before_tool(session.id, "bash")
    took = time.perf_counter() - started
    done.set()
    await ticking
    assert ws.store.checkpoint_turns(session.id)[0].before_tree
    assert took > 0.05 and max(gaps) < 0.05, (took, max(gaps))
    ws.close()


async def test_what_a_stopped_command_wrote_is_recorded_and_taken_back(project, tmp_path):
    ws, _ = open_workspace(project, tmp_path / "data", [bash("echo partial > half.txt && sleep 30"), {"text": "x"}])
    session = ws.sessions.create()
    running = asyncio.create_task(ws.prompt(session.id, "long job"))
    for _ in range(200):
        if (project / "half.txt").exists():
            break
        await asyncio.sleep(0.05)
    assert ws.abort(session.id)
    await asyncio.wait_for(running, 30)
    [turn] = ws.checkpoints.turns(session.id)
    assert [f.path for f in turn.files] == ["half.txt"]
    report = await ws.undo(session.id)
    assert report.removed == ["half.txt"] and not (project / "half.txt").exists()
    ws.close()
