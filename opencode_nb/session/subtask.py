"""Running a subagent in a child session: for the task tool, for `@agent` mentions and for subtask parts.

A child session's own rules: the parent session's denies (and its `external_directory` rules) carry
down; todos are denied (they belong to the primary's conversation); `task` is denied unless the
subagent's own rules mention it, so delegation cannot recurse without someone deciding it should.
"always" grants are kept per agent, so what a person grants the child never reaches the parent.

While the child runs, the parent's task call shows a live summary of the child's tool calls, built
from the bus. Aborting the parent cancels the task call, which cancels the child's run in turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from .. import id as ids
from ..agent.info import AgentInfo
from ..errors import NotFoundError, OpencodeNbError, ToolError
from ..permission.rules import Rule, Ruleset
from ..tool.task import with_task_metadata
from .background import BackgroundTasks
from .deps import LoopDeps
from .events import MessagePartUpdated
from .model_choice import model_for
from .models import (
    AgentPart,
    AssistantMessage,
    Session,
    StepFinishPart,
    SubtaskPart,
    TextPart,
    ToolCompleted,
    ToolErrored,
    ToolPart,
    ToolRunning,
    UserMessage,
    now,
)

if TYPE_CHECKING:
    from .run_state import RunState


class Prompting(Protocol):
    """The loop as a child session needs it: run a prompt to its end (`SessionLoop.prompt`)."""

    async def prompt(self, session_id: str, text: str, **options: Any) -> AssistantMessage | None: ...

log = logging.getLogger(__name__)

TASK_DESCRIPTION_WORDS = 5
BRIEF_INPUT_CHARS = 200
"""A child's tool inputs are summarised on the parent's task card; longer values are cut to this."""


def child_rules(parent: Session, agent: AgentInfo) -> Ruleset:
    inherited = [r for r in parent.permission if r.action == "deny" or r.permission == "external_directory"]
    own = [Rule(permission="todowrite", pattern="*", action="deny"),
           Rule(permission="todoread", pattern="*", action="deny")]
    if not any(r.permission == "task" for r in agent.permission):
        own.append(Rule(permission="task", pattern="*", action="deny"))
    return Ruleset([*inherited, *own])


class SubtaskRunner:
    """Runs subagents in child sessions, on the same loop as their parent (`ctx.tasks` for the task tool)."""

    def __init__(self, deps: LoopDeps, loop: Prompting) -> None:
        self.deps = deps
        self.loop = loop
        self.background = BackgroundTasks(lambda: deps.config.background_tasks)
        """The subagents the model started with `background: true`, by parent session."""

    # ------------------------------------------------------------------------------------------ background

    async def start_background(self, *, parent_id: str, caller: str, description: str, prompt: str, agent: str,
                               model: str | None = None) -> str:
        """Start `agent` on `prompt` in a new child of `parent_id` and return its id at once.

        Raises:
            ToolError: an unknown or primary agent, or the session has as many running as it may.
        """
        info = self._subagent(agent)
        self.background.room(parent_id)  # before a child session is made for nothing
        parent = self.deps.sessions.get(parent_id)
        child = self.deps.sessions.create(parent.directory, title=f"{description} (@{agent} subagent, background)",
                                          parent_id=parent_id, permission=child_rules(parent, info))
        run = self.run(parent_id=parent_id, caller=caller, description=description, prompt=prompt, agent=agent,
                       task_id=child.id, model=model)
        self.background.start(parent_id, child.id, agent, description, run)
        return child.id

    async def status(self, parent_id: str, task_id: str | None, wait_s: float) -> str:
        """The state of one background task or all of this session's, after waiting up to `wait_s` for them."""
        tasks = [self.background.get(parent_id, task_id)] if task_id else self.background.of(parent_id)
        if not tasks:
            return "This session has started no background tasks."
        if wait_s > 0:
            await self.background.wait(tasks, wait_s)
        for task in tasks:
            if task.state != "running":
                task.told = True
        return "\n\n".join(task.report() for task in tasks)

    def cancel(self, parent_id: str, task_id: str) -> str:
        task = self.background.get(parent_id, task_id)
        if not self.background.cancel(task):
            return f"Background task {task.line()}: it had ended already, nothing was stopped."
        return f"Background task {task.id} (@{task.agent}: {task.description}) is being stopped."

    def _subagent(self, agent: str) -> AgentInfo:
        try:
            info = self.deps.agents.get(agent)
        except NotFoundError:
            names = ", ".join(a.name for a in self.deps.agents.subagents())
            raise ToolError(f"Unknown agent type: {agent} is not a valid agent type. Use one of: {names}.") from None
        if not info.is_subagent:
            raise ToolError(f"{agent} is a primary agent and cannot run as a subagent.")
        return info

    # ------------------------------------------------------------------------------------------ foreground

    async def run(self, *, parent_id: str, caller: str, description: str, prompt: str, agent: str,
                  task_id: str | None = None, model: str | None = None,
                  update: Callable[[str | None, dict[str, Any] | None], None] | None = None) -> tuple[str, str]:
        """Run `agent` on `prompt` in a child of `parent_id`; returns (child session id, final text)."""
        deps = self.deps
        info = self._subagent(agent)
        parent = deps.sessions.get(parent_id)
        child = self._existing(task_id, parent_id) or deps.sessions.create(
            parent.directory, title=f"{description} (@{agent} subagent)", parent_id=parent_id,
            permission=child_rules(parent, info))
        tools: dict[str, dict[str, Any]] = {}

        def follow(event: MessagePartUpdated) -> None:
            part = event.part
            if part.session_id != child.id or not isinstance(part, ToolPart):
                return
            state = part.state
            tools[part.call_id] = {"tool": part.tool, "status": state.status,
                                   "title": getattr(state, "title", "") or "", "input": brief(state.input)}
            if update is not None:
                update(None, {"session_id": child.id, "agent": agent, "tools": list(tools.values())})

        if update is not None:
            update(description, {"session_id": child.id, "agent": agent, "tools": []})
        off = deps.bus.subscribe(MessagePartUpdated, follow)
        try:
            final = await self.loop.prompt(child.id, prompt, agent=agent, model=None if info.model else model,
                                              mention_agents=False)
        except ToolError:
            raise
        except OpencodeNbError as exc:  # the child could not run at all (no API key, an unknown model)
            raise ToolError(f"Task failed: {exc} (session_id: {child.id})", summary=f"Task failed: {exc}") from None
        finally:
            off()
        if final is None:
            raise ToolError(f"Task failed: the {agent} subagent gave no answer.")
        if final.error is not None:
            word = "cancelled" if final.error.kind == "aborted" else "failed"
            # The id lets the model continue the task; the person's card says only what happened.
            raise ToolError(f"Task {word}: {final.error.message} (session_id: {child.id})",
                            summary=f"Task {word}: {final.error.message}")
        texts = [p.text for m in deps.sessions.messages(child.id) if m.message.id == final.id
                 for p in m.parts if isinstance(p, TextPart) and p.text.strip()]
        return child.id, (texts[-1] if texts else "(The subagent finished without a text answer.)")

    def _existing(self, task_id: str | None, parent_id: str) -> Session | None:
        if not task_id:
            return None
        try:
            session = self.deps.sessions.get(task_id)
        except NotFoundError:
            return None
        return session if session.parent_id == parent_id else None

    async def run_part(self, state: RunState, user: UserMessage, part: SubtaskPart | AgentPart) -> AssistantMessage:
        """Run a subtask the person asked for (a command or an @mention): no task permission is asked.

        The result is recorded as a task call of the primary agent, so the primary reads it next step.
        """
        log = state.log
        if isinstance(part, AgentPart):
            prompt = "\n".join(p.text for p in state.history.parts(user.id) if isinstance(p, TextPart))
            agent, description = part.name, " ".join(prompt.split()[:TASK_DESCRIPTION_WORDS]) or part.name
        else:
            prompt, agent, description = part.prompt, part.agent, part.description
        caller = self.deps.agents.get(user.agent)
        model_id = model_for(user, caller, self.deps.config)
        message = AssistantMessage(session_id=state.session_id, parent_id=user.id, agent=user.agent, model=model_id)
        log.add_message(message)
        tool_input = {"description": description, "prompt": prompt, "subagent_type": agent}
        started = now()
        call = ToolPart(session_id=state.session_id, message_id=message.id, call_id=ids.ascending("tool"),
                        tool="task", state=ToolRunning(input=tool_input, title=description, started_at=started))
        log.add_part(call)

        def update(title: str | None, metadata: dict[str, Any] | None) -> None:
            nonlocal call
            running = call.state
            if isinstance(running, ToolRunning):
                changes: dict[str, Any] = {"metadata": {**running.metadata, **(metadata or {})}}
                if title:
                    changes["title"] = title
                call = call.model_copy(update={"state": running.model_copy(update=changes)})
                log.update_part(call)

        try:
            child_id, text = await self.run(parent_id=state.session_id, caller=user.agent, description=description,
                                            prompt=prompt, agent=agent, model=model_id, update=update)
            call = call.model_copy(update={"state": ToolCompleted(
                input=tool_input, output=with_task_metadata(text, child_id), title=description,
                metadata=_progress(call), started_at=started)})
        except ToolError as exc:
            call = call.model_copy(update={"state": ToolErrored(input=tool_input, error=str(exc),
                                                                metadata=_progress(call), started_at=started)})
        except Exception as exc:  # a bug must not leave the call running for ever; the primary reads it
            logging.getLogger(__name__).exception("the %s subtask failed", agent)
            call = call.model_copy(update={"state": ToolErrored(
                input=tool_input, error=f"Task failed: {type(exc).__name__}: {exc}", metadata=_progress(call),
                started_at=started)})
        except asyncio.CancelledError:
            call = call.model_copy(update={"state": ToolErrored(input=tool_input, error="Tool execution aborted",
                                                                metadata={"interrupted": True}, started_at=started)})
            log.update_part(call)
            log.update_message(message.model_copy(update={"finish": "aborted", "completed_at": now()}))
            raise
        log.update_part(call)
        log.add_part(StepFinishPart(session_id=state.session_id, message_id=message.id, reason="tool-calls"))
        message = message.model_copy(update={"finish": "tool-calls", "completed_at": now()})
        log.update_message(message)
        return message


def _progress(call: ToolPart) -> dict[str, Any]:
    """What a running task call reported (the child's session id and tools): kept when it ends."""
    return dict(call.state.metadata) if isinstance(call.state, ToolRunning) else {}


def brief(tool_input: dict[str, Any]) -> dict[str, Any]:
    """The short scalar fields of a tool input, for a summary that must not copy a whole file's content."""
    out: dict[str, Any] = {}
    for key, value in tool_input.items():
        if isinstance(value, bool | int | float) or value is None:
            out[key] = value
        elif isinstance(value, str):
            out[key] = value if len(value) <= BRIEF_INPUT_CHARS else value[:BRIEF_INPUT_CHARS] + "…"
    return out

