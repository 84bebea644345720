"""Subagents the model starts in the background: `task` with `background: true` returns at once with the task's
id, and the parent goes on while the child works in its own child session.

A background task is a child session like any other (resume, show, undo); what is kept here is only what runs
now and how each one ended. The parent learns of an ending at its next step, or with its next prompt when it
was idle: a synthetic note with the child's answer, or with why it failed or was stopped, each told once. A
task that finished is reported as finished, never as cancelled: the state is taken from how the child's run
ended, not from whether somebody is still waiting for it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import ToolError

log = logging.getLogger(__name__)

TaskState = Literal["running", "completed", "failed", "cancelled"]

DEFAULT_LIMIT = 4
"""Background tasks one session may have running at once (`background_tasks`)."""


@dataclass
class BackgroundTask:
    id: str
    """The child session's id: what `task_status` and `task_cancel` take, and `task_id` continues."""
    parent_id: str
    agent: str
    description: str
    started_at: float = field(default_factory=time.time)
    ended_at: float | None = None
    state: TaskState = "running"
    answer: str | None = None
    error: str | None = None
    told: bool = False
    """The parent has been told how it ended."""
    job: asyncio.Task[tuple[str, str]] | None = field(default=None, repr=False)
    done: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    def line(self) -> str:
        """One line of `task_status`: which task, its state, for how long."""
        took = (self.ended_at or time.time()) - self.started_at
        return f"{self.id} (@{self.agent}: {self.description}) — {self.state} after {took:.0f} s"

    def report(self) -> str:
        """How it ended, for the model: the answer, or why there is none."""
        if self.state == "completed":
            return f"Background task {self.line()}. Its answer:\n{self.answer or '(no text)'}"
        if self.state == "failed":
            return f"Background task {self.line()}: {self.error}"
        if self.state == "cancelled":
            return f"Background task {self.line()}: it was stopped before it finished ({self.error or 'cancelled'})."
        return f"Background task {self.line()}: still running."


class BackgroundTasks:
    """The background tasks of one workspace, by parent session."""

    def __init__(self, limit: Callable[[], int] = lambda: DEFAULT_LIMIT) -> None:
        self.limit = limit
        self._tasks: dict[str, BackgroundTask] = {}

    def room(self, parent_id: str) -> None:
        """Raises `ToolError` when `parent_id` has as many tasks running as it may."""
        running = [t for t in self.of(parent_id) if t.state == "running"]
        if len(running) >= self.limit():
            raise ToolError(f"This session already has {len(running)} background tasks running, the most it may "
                            f"({', '.join(t.id for t in running)}). Wait for one with task_status (wait: true), "
                            "stop one with task_cancel, or run this task in the foreground.")

    def start(self, parent_id: str, child_id: str, agent: str, description: str,
              run: Coroutine[Any, Any, tuple[str, str]]) -> BackgroundTask:
        """Start `run` (the child's whole run) beside the parent.

        Raises:
            ToolError: the session has as many running as it may.
        """
        try:
            self.room(parent_id)
        except ToolError:
            run.close()
            raise
        task = BackgroundTask(child_id, parent_id, agent, description)
        task.job = asyncio.get_running_loop().create_task(run, name=f"background task {child_id}")
        task.job.add_done_callback(lambda job: self._ended(task, job))
        self._tasks[child_id] = task
        return task

    def of(self, parent_id: str) -> list[BackgroundTask]:
        return [t for t in self._tasks.values() if t.parent_id == parent_id]

    def get(self, parent_id: str, task_id: str) -> BackgroundTask:
        task = self._tasks.get(task_id)
        if task is None or task.parent_id != parent_id:
            known = ", ".join(t.id for t in self.of(parent_id)) or "none"
            raise ToolError(f"No background task {task_id!r} of this session; its background tasks: {known}.")
        return task

    def running(self) -> list[BackgroundTask]:
        return [t for t in self._tasks.values() if t.state == "running"]

    async def wait(self, tasks: list[BackgroundTask], timeout_s: float) -> None:
        """Until every one of `tasks` ended, or `timeout_s` passed."""
        waiting = [t.done.wait() for t in tasks if t.state == "running"]
        if not waiting:
            return
        try:
            async with asyncio.timeout(timeout_s):
                await asyncio.gather(*waiting)
        except TimeoutError:
            pass

    def cancel(self, task: BackgroundTask) -> bool:
        """Stop it; False when it had ended already."""
        if task.state != "running" or task.job is None:
            return False
        task.error = "stopped with task_cancel"
        task.job.cancel()
        return True

    def untold(self, parent_id: str) -> list[BackgroundTask]:
        """The tasks of `parent_id` that ended since it was last told; told now."""
        ended = [t for t in self.of(parent_id) if t.state != "running" and not t.told]
        for task in ended:
            task.told = True
        return ended

    async def cancel_all(self, why: str) -> list[BackgroundTask]:
        """Stop every running task and wait for each to end (a workspace closing)."""
        running = self.running()
        for task in running:
            task.error = why
            if task.job is not None:
                task.job.cancel()
        await asyncio.gather(*(t.done.wait() for t in running))
        return running

    def _ended(self, task: BackgroundTask, job: asyncio.Task[tuple[str, str]]) -> None:
        task.ended_at = time.time()
        if job.cancelled():
            task.state = "cancelled"
        elif (exc := job.exception()) is not None:
            task.state = "failed"
            task.error = str(exc) if isinstance(exc, ToolError) else f"{type(exc).__name__}: {exc}"
            if not isinstance(exc, ToolError):
                log.error("background task %s failed", task.id, exc_info=exc)
        else:
            task.state = "completed"
            task.answer = job.result()[1]
        task.done.set()
