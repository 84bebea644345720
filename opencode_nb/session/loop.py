"""The agentic loop: one loop serves every agent.

`prompt` appends a user message naming the agent that should answer it and runs steps until an
assistant message finishes without tool calls. Each step resolves the agent from the newest user message
(so a plan ↔ build switch is just a new user message and survives restarts), resolves its tools,
assembles the system prompt, streams one response through the `Processor` and decides what comes next:
another step, a retry after a provider failure, a compaction when the context is full, or the end.

Only one run per session is active at a time; a prompt for a busy session waits for the running one to
finish, then gets its own run. `abort` cancels the run; the processor's teardown leaves the session
consistent and the next prompt works as usual.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from ..agent.info import AgentInfo
from ..errors import HookBlockedError, OpencodeNbError, ProviderError
from ..permission.events import ToolRef
from ..permission.named import with_named_paths
from ..permission.rules import Rule, as_ruleset, disabled, evaluate, merge, wildcard_match
from ..provider.request import LLMMessage, LLMRequest, TextBlock
from ..provider.retry import RetryPolicy
from ..sandbox.policy import SandboxCall, caller_network_rules
from ..tool.base import Tool, ToolContext
from . import system
from .compaction import Compactor
from .deps import LoopDeps
from .events import SessionError, SessionIdle, SessionStatus
from .history import History
from .hooks import CallHooks, report
from .mentions import mention_parts
from .model_choice import DEFAULT_MODEL, model_for
from .models import AssistantMessage, CompactionPart, MessageWithParts, Part, TextPart, ToolPart, UserMessage, now
from .processor import Processor, StepResult
from .reminders import plan_path, reminders
from .run_state import RunState, StepSetup
from .runlog import RunLog
from .subtask import SubtaskRunner
from .title import TitleWriter

__all__ = ["DEFAULT_MODEL", "Exchange", "RunState", "SessionLoop"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Exchange:
    """A prompt and what answered it."""

    user: UserMessage
    final: AssistantMessage | None
    """The run's last assistant message (None if nothing was generated)."""
    answers: list[MessageWithParts]
    """Every message the run wrote after `user`, with its parts, oldest first."""


STOP_HOOK_ROUNDS = 8
"""How many times `Stop` hooks may keep one run going: a hook that blocks every stop cannot loop forever."""


class SessionLoop:
    def __init__(self, deps: LoopDeps, *, retry: RetryPolicy | None = None) -> None:
        self.deps = deps
        self.retry = retry or RetryPolicy()
        self.compactor = Compactor(deps)
        self.titles = TitleWriter(deps)
        self.subtasks = SubtaskRunner(deps, self)
        """Runs subagents in child sessions: the task tool's runner and the one for `@agent` and commands."""
        self._locks: dict[str, asyncio.Lock] = {}
        self._runs: dict[str, asyncio.Task[tuple[AssistantMessage | None, History]]] = {}
        self._processors: dict[tuple[str, str], Processor] = {}
        """The step in flight per (session, assistant message), so tools can report progress to it."""
        self.prompted: list[str] = []
        """The sessions prompted through this loop, oldest first: where `SessionEnd` hooks are told the end."""

    # ------------------------------------------------------------------------------------------ API

    async def prompt(self, session_id: str, text: str, **options: Any) -> AssistantMessage | None:
        """Append a user message and run the session until the answer is complete (options as `exchange`).

        Returns:
            The last assistant message of the run (None if nothing was generated).
        """
        return (await self.exchange(session_id, text, **options)).final

    async def exchange(
        self,
        session_id: str,
        text: str,
        *,
        agent: str | None = None,
        model: str | None = None,
        parts: Sequence[Part] = (),
        tools: dict[str, bool] | None = None,
        permission: Sequence[Rule] = (),
        list_variables: bool = True,
        system_prompt: str | None = None,
        synthetic: bool = False,
        mention_agents: bool = True,
    ) -> Exchange:
        """Append a user message and run the session until the answer is complete.

        `@agent` mentions run that subagent first; a subagent's own prompt is run with `mention_agents`
        off, so a task prompt that names an agent cannot start a chain of children. `permission`: rules for
        this answer only, checked after the agent's and the session's; `list_variables=False` leaves the
        notebook's variables out of the system prompt.

        Returns:
            The user message written, the last assistant message of its run and every message the run wrote.
        """
        deps = self.deps
        deps.sessions.get(session_id)  # NotFoundError before anything is written
        if agent is not None:
            deps.agents.get(agent)
        if model is not None:
            deps.providers.check_model_id(model)
        async with self._lock(session_id):
            deps.sessions.discard_undone(session_id)  # no redo past a new prompt
            user = UserMessage(
                session_id=session_id,
                agent=agent or deps.sessions.current_agent(session_id) or deps.agents.default.name,
                model=model,
                tools=dict(tools or {}),
                permission=list(permission),
                list_variables=list_variables,
                system=system_prompt,
                synthetic=synthetic,
            )
            if session_id not in self.prompted:
                self.prompted.append(session_id)
            context = await self._prompt_hooks(session_id, user, text, synthetic)
            context += [task.report() for task in self.subtasks.background.untold(session_id)]
            deps.sessions.add_message(user)
            if text:
                deps.sessions.add_part(TextPart(session_id=session_id, message_id=user.id, text=text,
                                                synthetic=synthetic))
                if not synthetic:
                    for mention in mention_parts(deps.agents, deps.directory, session_id, user.id, text,
                                                 agents=mention_agents, kernel=deps.kernel):
                        deps.sessions.add_part(mention)
            for said in context:  # what the prompt's hooks added for the model
                deps.sessions.add_part(TextPart(session_id=session_id, message_id=user.id, text=said,
                                                synthetic=True))
            for part in parts:
                deps.sessions.add_part(part.model_copy(update={"session_id": session_id, "message_id": user.id}))
            final, history = await self._start(session_id)
        if history is not None:
            answers = [MessageWithParts.model_construct(message=e.message, parts=list(e.parts.values()))
                       for e in history.after(user.id)]
        else:  # stopped: read what the run left behind
            answers = [m for m in deps.sessions.messages(session_id) if m.message.id > user.id]
        return Exchange(user, final, answers)

    def abort(self, session_id: str) -> bool:
        """Stop the session's run, if any. Returns whether something was running."""
        task = self._runs.get(session_id)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    def busy(self, session_id: str) -> bool:
        task = self._runs.get(session_id)
        return task is not None and not task.done()

    async def close(self) -> None:
        for task in list(self._runs.values()):
            task.cancel()
        await self.subtasks.background.cancel_all("the workspace closed")  # never a child left running
        await self.titles.close()

    # ------------------------------------------------------------------------------------------ run

    def _lock(self, session_id: str) -> asyncio.Lock:
        return self._locks.setdefault(session_id, asyncio.Lock())

    async def _start(self, session_id: str) -> tuple[AssistantMessage | None, History | None]:
        """Run the session as a task of its own (so `abort` can cancel it): its last answer, and the run's
        history, or none when the run was stopped."""
        task = asyncio.get_running_loop().create_task(self._run(session_id))
        self._runs[session_id] = task
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # our caller is being cancelled: pass it on
            return self._latest_assistant(session_id), None  # the run was aborted on its own
        finally:
            if self._runs.get(session_id) is task:
                del self._runs[session_id]

    def _latest_assistant(self, session_id: str) -> AssistantMessage | None:
        for item in reversed(self.deps.sessions.messages(session_id)):
            if isinstance(item.message, AssistantMessage):
                return item.message
        return None

    async def _run(self, session_id: str) -> tuple[AssistantMessage | None, History]:
        deps = self.deps
        state = RunState(session_id, RunLog(deps.sessions, session_id))
        bus = deps.bus
        bus.publish(SessionStatus(session_id=session_id, status="busy"))
        last: AssistantMessage | None = None
        step = 0
        try:
            while True:
                user = state.history.last_user()
                if user is None or state.history.answered(user):
                    break
                task = state.history.pending_task()
                if task is not None:
                    last = await self._run_task(state, user, task[1]) or last
                    continue
                if step > 0 and self._tell_endings(state, user):
                    continue
                step += 1
                agent = deps.agents.get(user.agent)
                if step > 1 or last is None:
                    compacted = await self.compactor.maybe_compact(state, user, agent)
                    if compacted:
                        continue
                result = await self._step(state, user, agent, step)
                last = result.message
                if step == 1:
                    self.titles.maybe_start(session_id, state.history)
                if result.outcome == "compact":
                    await self.compactor.compact(state, user, agent, auto=True, overflow=True)
                    continue
                if result.outcome == "stop" or (agent.steps is not None and step >= agent.steps):
                    if result.outcome == "stop" and await self._kept_going(state, user, agent):
                        continue
                    break
        except asyncio.CancelledError:
            self.titles.after_stop(session_id, state.history)
            raise
        except OpencodeNbError as exc:
            bus.publish(SessionError(session_id=session_id, error=str(exc), kind=type(exc).__name__))
            raise
        finally:
            if state.cost:
                session = deps.sessions.get(session_id)
                deps.sessions.update(session, cost=session.cost + state.cost)
            deps.sessions.flush()
            bus.publish(SessionStatus(session_id=session_id, status="idle"))
            bus.publish(SessionIdle(session_id=session_id))
        return last, state.history

    async def _run_task(self, state: RunState, user: UserMessage, task: Any) -> AssistantMessage | None:
        """Compaction, subtask and @agent requests on a user message run before any model turn."""
        if isinstance(task, CompactionPart):
            return await self.compactor.compact(state, user, self.deps.agents.get(user.agent), auto=task.auto)
        return await self.subtasks.run_part(state, user, task)

    async def _step(self, state: RunState, user: UserMessage, agent: AgentInfo, step: int) -> StepResult:
        deps = self.deps
        model_id = model_for(user, agent, deps.config)
        provider, model = deps.providers.resolve(model_id)
        last_step = agent.steps is not None and step >= agent.steps
        key = (agent.name, user.id, deps.tools.version)
        setup = state.setup.get(key)
        if setup is None:
            ruleset = merge(agent.permission, deps.sessions.get(state.session_id).permission, user.permission)
            if deps.permissions.managed is not None:  # its deny and ask last: tools it turns off are not offered
                ruleset = merge(ruleset, deps.permissions.managed.strict)
            tools_now = self.tools_for(agent, ruleset, user)
            specs = [t.spec_for(agent, deps.agents) for t in tools_now.values()]
            setup = StepSetup(ruleset, tools_now, self._system(state, agent, model_id, user),
                              reminders(deps.sessions, state, agent, root=deps.root, directory=deps.directory), specs)
            state.setup[key] = setup
        ruleset, tools, system_blocks, notes, specs = setup
        attempt = 0
        while True:
            messages = state.history.llm_messages()
            extra = list(notes)
            if last_step:
                extra.append(system.prompt_text("max_steps"))
            if extra:
                messages = [*messages, LLMMessage(role="user", content=[TextBlock(text=t) for t in extra])]
            assistant = AssistantMessage(
                session_id=state.session_id, parent_id=user.id, agent=agent.name, model=model_id
            )
            state.log.add_message(assistant)
            request = system.outgoing(LLMRequest(
                model=model,
                system=system_blocks,
                messages=messages,
                tools=specs,
                temperature=agent.temperature,
                top_p=agent.top_p,
                max_tokens=model.output,
                options={**model.options, **agent.options},
                tool_choice="none" if last_step else "auto",
            ))
            processor = Processor(
                log=state.log,
                message=assistant,
                model=model,
                tools=tools,
                make_context=partial(self._context, state, user, agent=agent, ruleset=ruleset, model_id=model_id),
                ask_doom_loop=partial(self._ask_doom_loop, state.session_id, agent),
                tools_allowed=not last_step,
                recent_calls=state.recent_calls,
                recorder=self.deps.checkpoints,
                missing=self.deps.tools.why_missing,
                around=self._call_hooks(state, user, agent, ruleset, model_id),
            )
            self._processors[state.session_id, assistant.id] = processor
            try:
                result = await processor.run(provider.stream(request))
            finally:
                self._processors.pop((state.session_id, assistant.id), None)
            if processor.around is not None and processor.around.stopped is not None:
                return StepResult("stop", result.message)
            state.cost += result.message.cost
            if result.outcome != "retry":
                return result
            attempt += 1
            error = result.error or ProviderError("provider failed")
            if attempt >= self.retry.max_attempts:
                deps.bus.publish(SessionError(session_id=state.session_id, error=str(error), kind="provider"))
                return StepResult("stop", result.message, error=error)
            delay = self.retry.delay(attempt, error)
            deps.bus.publish(
                SessionStatus(session_id=state.session_id, status="retry", attempt=attempt,
                              message=str(error), next_at=now() + delay)
            )
            await asyncio.sleep(delay)
            deps.bus.publish(SessionStatus(session_id=state.session_id, status="busy"))

    # ------------------------------------------------------------------------------------------ pieces

    def tools_for(self, agent: AgentInfo, ruleset: list[Any], user: UserMessage) -> dict[str, Tool[Any]]:
        """Registry ∩ the agent's tool switches ∩ not denied outright by its rules ∩ this prompt's switches."""
        tools = self.deps.tools
        ids = [i for i in tools.ids() if _switched_on(i, agent.tools) and user.tools.get(i, True)]
        off = disabled(ids, ruleset)
        return {i: tools.get(i) for i in sorted(ids) if i not in off}

    def _system(self, state: RunState, agent: AgentInfo, model_id: str, user: UserMessage) -> list[str]:
        deps = self.deps
        key = model_id if user.list_variables else f"{model_id} without variables"
        env = state.environment.get(key)
        if env is None:
            env = system.environment_block(deps.directory, deps.root, model_id, tree=system.file_tree(deps.directory))
            if deps.kernel is not None:
                env += "\n" + system.notebook_block(deps.kernel, variables=user.list_variables)
            state.environment[key] = env
        if state.instructions is None:
            paths = system.find_instruction_files(
                deps.directory, deps.root, global_dir=deps.loaded.global_dir,
                extra=[str(p) for p in deps.loaded.instruction_files],  # resolved where they were written
            )
            found = system.find_instruction_files(deps.directory, deps.root, global_dir=deps.loaded.global_dir)
            state.instructions = system.instruction_blocks(paths, root=deps.root, linked=found)
        return system.assemble(model_id=model_id, agent_prompt=agent.prompt, environment=env,
                               instructions=state.instructions, user_system=user.system)

    # ------------------------------------------------------------------------------------------ hooks

    def _hook_fields(self, session_id: str, agent: str) -> dict[str, Any]:
        """What every hook's JSON says of where it runs (Claude Code's common fields, and the agent)."""
        return {"session_id": session_id, "transcript_path": None, "cwd": str(self.deps.directory),
                "permission_mode": "default", "agent": agent}

    def _call_hooks(self, state: RunState, user: UserMessage, agent: AgentInfo, ruleset: list[Any],
                    model_id: str) -> CallHooks | None:
        hooks = self.deps.hooks
        if hooks is None or not (hooks.wants("PreToolUse") or hooks.wants("PostToolUse")):
            return None

        def ask_for(part: ToolPart) -> Any:
            return self._context(state, user, part, agent, ruleset, model_id).ask

        return CallHooks(hooks, self.deps.bus, state.session_id,
                         lambda: self._hook_fields(state.session_id, agent.name), ask_for, approved=state.preapproved)

    async def _prompt_hooks(self, session_id: str, user: UserMessage, text: str, synthetic: bool) -> list[str]:
        """`SessionStart` (a session's first prompt) and `UserPromptSubmit` (a person's prompt): the context they
        add to the prompt.

        Raises:
            HookBlockedError: a `UserPromptSubmit` hook blocked the prompt; nothing was written.
        """
        hooks = self.deps.hooks
        if hooks is None or synthetic:
            return []
        added: list[str] = []
        fields = self._hook_fields(session_id, user.agent)
        if hooks.wants("SessionStart") and not self.deps.sessions.messages(session_id):
            started = await hooks.fire("SessionStart", {**fields, "hook_event_name": "SessionStart",
                                                        "source": "startup"})
            report(self.deps.bus, session_id, "SessionStart", started)
            added += started.additional_context
        if hooks.wants("UserPromptSubmit"):
            said = await hooks.fire("UserPromptSubmit", {**fields, "hook_event_name": "UserPromptSubmit",
                                                         "prompt": text})
            report(self.deps.bus, session_id, "UserPromptSubmit", said)
            if said.blocked or said.stop is not None:
                raise HookBlockedError(said.reason or said.stop or "it gave no reason")
            added += said.additional_context
        return added

    def _tell_endings(self, state: RunState, user: UserMessage) -> bool:
        """Background tasks that ended while this run went on: the agent reads how, before its next step."""
        ended = self.subtasks.background.untold(state.session_id)
        if not ended:
            return False
        note = UserMessage(session_id=state.session_id, agent=user.agent, model=user.model, synthetic=True,
                           permission=user.permission, list_variables=user.list_variables)
        state.log.add_message(note)
        for task in ended:
            state.log.add_part(TextPart(session_id=state.session_id, message_id=note.id, text=task.report(),
                                        synthetic=True))
        return True

    async def _kept_going(self, state: RunState, user: UserMessage, agent: AgentInfo) -> bool:
        """Whether a `Stop` hook (`SubagentStop` in a child session) keeps the agent going: then its reason is the
        agent's next instruction. At most `STOP_HOOK_ROUNDS` times a run, so a hook that always blocks ends."""
        hooks = self.deps.hooks
        child = self.deps.sessions.get(state.session_id).parent_id is not None
        event = "SubagentStop" if child else "Stop"
        if hooks is None or not hooks.wants(event):
            return False
        said = await hooks.fire(event, {**self._hook_fields(state.session_id, agent.name), "hook_event_name": event,
                                        "stop_hook_active": state.stop_hooks > 0})
        report(self.deps.bus, state.session_id, event, said)
        if not said.blocked or said.stop is not None or state.stop_hooks >= STOP_HOOK_ROUNDS:
            return False
        state.stop_hooks += 1
        again = UserMessage(session_id=state.session_id, agent=agent.name, model=user.model, synthetic=True,
                            permission=user.permission, list_variables=user.list_variables)
        state.log.add_message(again)
        state.log.add_part(TextPart(session_id=state.session_id, message_id=again.id, synthetic=True,
                                    text=f"A {event} hook asks you to go on: {said.reason or 'keep working.'}"))
        return True

    def _context(self, state: RunState, user: UserMessage, part: ToolPart, agent: AgentInfo, ruleset: list[Any],
                 model_id: str) -> ToolContext:
        session_id = state.session_id
        approvals: list[dict[str, Any]] = []

        async def ask(permission: str, patterns: list[str], always: list[str] | None = None,
                      metadata: dict[str, Any] | None = None, *, always_ask: bool = False) -> None:
            here, root = self.deps.directory, self.deps.root  # shown from the notebook, matched from the root
            shown = with_named_paths(permission, patterns, always or [], metadata or {}, here, root)
            by = await self.deps.permissions.ask(
                session_id, agent.name, permission, patterns, always=always or [], metadata=shown,
                ruleset=ruleset, tool=ToolRef(message_id=part.message_id, call_id=part.call_id),
                always_ask=always_ask, preapproved=state.preapproved.get(part.call_id),
            )
            if by is not None:  # on a shared server the call's record says who let it run
                approvals.append({"permission": permission, "patterns": patterns, "by": by})
                update(metadata={"approved_by": list(approvals)})

        def update(title: str | None = None, metadata: dict[str, Any] | None = None) -> None:
            processor = self._processors.get((session_id, part.message_id))
            if processor is not None:
                processor.update_running(part.call_id, title, metadata)

        def switch_agent(name: str, text: str) -> None:
            """A mode switch is a synthetic user message naming the agent that answers from now on."""
            switch = UserMessage(session_id=session_id, agent=name, model=user.model, synthetic=True,
                                 permission=user.permission, list_variables=user.list_variables)  # as the run began
            state.log.add_message(switch)
            state.log.add_part(TextPart(session_id=session_id, message_id=switch.id, text=text, synthetic=True))

        deps = self.deps
        sandbox = None if deps.sandbox is None else SandboxCall(deps.sandbox, session_id, lambda: caller_network_rules(
            ruleset, deps.permissions.grants(session_id), agent.name))
        return ToolContext(
            session_id=session_id, message_id=part.message_id, call_id=part.call_id, agent=agent.name,
            directory=deps.directory, root=deps.root, data_dir=deps.data_dir, ask=ask, update=update,
            todos=deps.sessions,
            questions=deps.questions, tasks=self.subtasks, switch_agent=switch_agent,
            plan_path=plan_path(deps.sessions, session_id), model=model_id, kernel=deps.kernel,
            notebook=deps.notebook, review=deps.review, sandbox=sandbox,
            permitted=lambda permission, pattern: evaluate(permission, pattern, ruleset).action,
            rules=lambda permission: [*as_ruleset(ruleset).rules_for(permission),
                                      *(g.rule() for g in deps.permissions.grants(session_id)
                                        if g.agent == agent.name and g.permission == permission)],
        )

    async def _ask_doom_loop(self, session_id: str, agent: AgentInfo, tool: str, tool_input: dict[str, Any]) -> None:
        await self.deps.permissions.ask(
            session_id, agent.name, "doom_loop", [tool], always=[tool],
            metadata={"tool": tool, "input": tool_input}, ruleset=agent.permission,
        )


def _switched_on(tool_id: str, switches: dict[str, bool]) -> bool:
    on = True
    for pattern, value in switches.items():
        if wildcard_match(tool_id, pattern):
            on = value
    return on


