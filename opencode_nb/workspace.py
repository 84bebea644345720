"""One project directory, with everything an agent needs to work in it.

A `Workspace` is where things are built: it reads the configuration once, builds the agent registry,
opens the session store and wires the services (sessions, permissions, questions) to one bus. The loop
and the command runner receive a `LoopDeps` record of those services, never the workspace itself.
Nothing in the package keeps ambient global state; notebooks, the CLI and tests each hold their own.

Asks nobody can answer never hang a script: outside a kernel, an ask with no `on_ask` callback and no
subscriber to `permission.asked` is decided by the unattended policy (`OPENCODE_NB_PERMISSION`, default
deny), and the prompt's result lists what was decided. Questions likewise (`on_question`,
`question.asked`). In a kernel, the extension installs its own policy, which waits for a person when one
is present.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from . import secrets
from .agent.registry import AgentRegistry
from .bus import Bus
from .checkpoint.records import Confirm, UndoReport
from .checkpoint.service import Checkpoints
from .checkpoint.undo import redo as redo_turns
from .checkpoint.undo import undo as undo_turns
from .command.runner import CommandRunner
from .config.guard import Held, settle_config
from .config.load import ConfigWarning, LoadedConfig
from .config.loosen import Effective
from .config.schema import FormatterConfig
from .config.skills import Skills
from .diagnostics.service import Diagnostics
from .errors import NotFoundError, OpencodeNbError
from .mcp.entries import secret_values
from .mcp.servers import McpServers
from .people import Approvers, approvers
from .permission.events import PermissionAsked, PermissionReplied, PermissionRequest, Reply
from .permission.managed import ManagedRules
from .permission.service import PermissionService
from .permission.unattended import decide, policy_from_env
from .provider.registry import ProviderRegistry
from .question.events import QuestionAsked, QuestionReplied, QuestionRequest
from .question.service import Answers, QuestionService, unattended_answers
from .sandbox import caches, private
from .sandbox.policy import BWRAP_ENV, ShellSandbox, caller_network_rules
from .sandbox.protected import QUARANTINE, Protected
from .sandbox.treatment import read_rules
from .session.deps import LoopDeps
from .session.loop import Exchange, SessionLoop
from .session.models import AssistantMessage, Part, TextPart
from .session.result import PromptResult, UnattendedDecision
from .session.service import SessionService
from .session.store.database import SessionStore
from .session.store.journaling import Journaling
from .tool.base import OUTPUT_FOLDER
from .tool.context import CellReview, KernelBridge, NotebookAccess
from .tool.registry import ToolRegistry, default_registry

if TYPE_CHECKING:
    from .hook.layer import Hooks

OnAsk = Callable[[PermissionRequest], Reply | Awaitable[Reply]]
"""A script's own answer to a permission ask: "once", "always" or "reject"."""

OnQuestion = Callable[[QuestionRequest], Answers | Awaitable[Answers | None] | None]
"""A script's own answers to a question (one list of labels or free text per question); None dismisses it."""

DATA_DIR_ENV = "OPENCODE_NB_DATA_DIR"


def default_data_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where stores and truncated tool outputs live: `$OPENCODE_NB_DATA_DIR`, else the user data dir."""
    env = os.environ if env is None else env
    if env.get(DATA_DIR_ENV):
        return Path(env[DATA_DIR_ENV]).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("opencode_nb", appauthor=False))


class Workspace:
    """Config + agents + store + bus + services for one project directory.

    Args:
        directory: the working directory; project config is read from its git root down to it.
        config: a mapping merged last over every config file (highest precedence).
        data_dir: where the SQLite store lives; defaults to `default_data_dir()`.
        env: the environment to read (`OPENCODE_NB_CONFIG`, `OPENCODE_NB_PERMISSION`, `XDG_CONFIG_HOME`, API
            keys); tests pass their own so they never read the person's real configuration.
        on_ask: answers permission asks for a script (sync or async); without it, and with nobody subscribed
            to `permission.asked`, asks are decided by the unattended policy.
        on_question: answers the agents' questions for a script, likewise.
        accept_config: apply a configuration change that agents may have made and that loosens what they may
            do (`config_held` says what); by default it waits for the person and the previous one is used.
        notebook_defaults: put the notebook's defaults under every config file (file edits and shell commands
            ask first: `agent/builtin.py` NOTEBOOK_RULES); the kernel does, scripts and the CLI keep OpenCode's.
    """

    def __init__(
        self,
        directory: str | Path = ".",
        config: Mapping[str, Any] | None = None,
        *,
        data_dir: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        on_ask: OnAsk | None = None,
        on_question: OnQuestion | None = None,
        accept_config: bool = False,
        notebook_defaults: bool = False,
    ) -> None:
        self.directory = Path(directory).expanduser().resolve()
        """Where the person works (a notebook's folder): the agents' relative paths and commands start here, as the
        kernel's own do; the project around it is `root`."""
        self.env: Mapping[str, str] = dict(os.environ if env is None else env)
        self.data_dir = Path(data_dir).expanduser() if data_dir else default_data_dir(self.env)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._forget_data_dir = private.register(self.data_dir)
        """Out of sight of every sandboxed process while this workspace is open (`sandbox/private.py`)."""
        settled = settle_config(self.directory, config, env=self.env, data_dir=self.data_dir,
                                rules_of=lambda loaded: _effective_rules(loaded, self.data_dir, notebook_defaults),
                                accept=accept_config)
        self.loaded: LoadedConfig = settled.loaded
        self.config_held: Held | None = settled.held
        """A change of the configuration files, made while agents ran, that loosens what they may do: not applied
        (`loaded` is the configuration confirmed before) until the person accepts it; None when nothing waits."""
        self.config_guard = settled.guard
        if self.config_held is not None and not self.config_held.kept:
            import warnings

            warnings.warn(self.config_held.message(), ConfigWarning, stacklevel=2)
        self.config = self.loaded.config
        self.secrets = secrets.secret_set(
            self.env, names=self.config.secrets.env,
            keys={**{f"provider.{pid}.api_key": p.api_key for pid, p in self.config.provider.items() if p.api_key},
                  **secret_values(self.loaded)})
        """What this workspace makes secret: kept from tools' processes and redacted wherever text is shown or
        stored, in the whole process while the workspace is open (see `secrets`)."""
        self._forget_secrets = secrets.register(self.secrets)
        self.secret_files = secrets.SecretFiles(self.loaded.root, (self.directory,))
        """The project's `.env`, key and password files, whose values are redacted too; re-read when they change."""
        self._forget_secret_files = secrets.register(self.secret_files)
        self.unattended_policy = policy_from_env(self.env)
        """How asks nobody answers are decided (`OPENCODE_NB_PERMISSION`): deny, allow or allow-readonly."""

        self.bus = Bus()
        self.agents = AgentRegistry(
            self.config,
            self.loaded.agents,
            data_dir=self.data_dir,
            tmp_dir=Path(tempfile.gettempdir()),
            where=self.loaded.where,
            refused=self.loaded.refused,
            notebook=notebook_defaults,
        )
        self.store_journaling = Journaling.for_file(self.store_path, self.env, self.config.store.journal)
        """The SQLite store's journal mode, chosen from the filesystem its file is on; `.notice()` says which."""
        store_url = self.env.get("OPENCODE_NB_STORE_URL") or self.config.store.url
        """A PostgreSQL server to keep the store in (`store.url`, `$OPENCODE_NB_STORE_URL` first); None: the file."""
        self.store = SessionStore(self.store_path, self.store_journaling, url=store_url or None,
                                  url_source="$OPENCODE_NB_STORE_URL" if self.env.get("OPENCODE_NB_STORE_URL")
                                  else "store.url")
        self.sessions = SessionService(self.store, self.bus, directory=self.directory)
        self.permissions = PermissionService(
            self.bus, tree=self.sessions, policy=self._unattended_permission,
            managed=ManagedRules(self.loaded.managed) if self.loaded.managed is not None else None)
        """Asks and grants; the managed file's deny and ask are checked there above every other rule."""
        self.questions = QuestionService(self.bus, policy=self._unattended_question)
        self.providers = ProviderRegistry(self.config, self.env, base_dir=self.root, managed=self.loaded.managed)
        self.skills = Skills(self.directory, self.loaded.global_dir)
        """The skills of this directory (`SKILL.md` folders), read again when their files change."""
        self.formatter_warnings: list[str] = []
        self.diagnostics = Diagnostics(self.config.diagnostics, self._own_formatters())
        """Formatters and checkers of the Python agents write (`formatter`, `diagnostics`)."""
        self.tools: ToolRegistry = default_registry(self.skills, diagnostics=self.diagnostics)
        self.sandbox = ShellSandbox(self.config.sandbox, binary=self.env.get(BWRAP_ENV), writable=[
            self.root, self.data_dir / OUTPUT_FOLDER, Path(tempfile.gettempdir()) / "opencode_nb"],
            protected=Protected(self.root, self.directory, self.loaded.global_dir,
                                instructions=lambda: self.loaded.instruction_files,
                                managed=self.loaded.managed.path if self.loaded.managed else None),
            alive=self.config_guard.running,
            caches=caches.project_folder(self.data_dir, self.root))
        """The OS sandbox of shell commands: what they may write, and whether one exists here (`sandbox`). Every
        process it launches is a run in flight for the config guard while it lives (`sandbox/treatment.py`), and
        finds the package managers' caches in a folder of this project's (`sandbox/caches.py`)."""
        self.mcp = McpServers(self.loaded, tools=self.tools, sandbox=self.sandbox, permissions=self.permissions,
                              data_dir=self.data_dir, network_rules=lambda: caller_network_rules(
                                  self.agents.default.permission, (), self.agents.default.name),
                              read_rules=lambda: read_rules(self.agents.default.permission))
        """The configured MCP servers, started at the first prompt; their tools join `tools` (see `mcp/`)."""
        self.checkpoints = Checkpoints(self.sessions, self.root, self.data_dir, self.config.checkpoints)
        """The project's files recorded around each turn (`checkpoint/`): `.turns(session_id)`, `.diff(session_id,
        n)`, `.available`, `.why_not`; what `undo` and `redo` restore files from."""
        self.keep_background = False
        """Background tasks outlive the run that started them (a notebook shows them in their cards); False:
        a run ends only when they have ended (`background_on_exit`)."""
        self.plugin_warnings: list[str] = []
        self.hooks = self._hooks()
        """Command hooks (`hooks`) and Python plugins (`plugin`); None where neither is configured."""
        self.deps = LoopDeps(
            sessions=self.sessions, agents=self.agents, providers=self.providers, tools=self.tools,
            permissions=self.permissions, questions=self.questions, bus=self.bus, loaded=self.loaded,
            data_dir=self.data_dir, sandbox=self.sandbox, checkpoints=self.checkpoints, hooks=self.hooks,
        )
        self.loop = SessionLoop(self.deps)
        self.commands = CommandRunner(self.deps, self.loop)
        if on_ask is not None:
            self.bus.subscribe(PermissionAsked, _answering(on_ask, self.permissions.reply))
        if on_question is not None:
            self.bus.subscribe(QuestionAsked, _answering(on_question, self._reply_question))

    # ------------------------------------------------------------------------------------------ running

    async def prompt(
        self,
        session_id: str,
        text: str,
        agent: str | None = None,
        model: str | None = None,
        parts: Sequence[Part] | None = None,
        **options: Any,
    ) -> PromptResult:
        """Send `text` to the session and run the agents until the answer is complete.

        Returns:
            The answer: `.text`, `.parts`, `.message`, `.tokens` and `.cost` of the run, `.error` if it ended
            badly, and `.unattended`, the asks the unattended policy decided.
        """
        self.checkpoints.warm()
        with self.config_guard.running(session_id), _UnattendedLog(self, session_id) as decisions:
            notes: list[Part] = []
            if self.mcp:
                # A server that could not start says why with the prompt that needed it: on its card, and to the
                # model, which can then tell the person instead of looking for tools that are not there.
                notes = [TextPart(session_id=session_id, message_id="", text=note, synthetic=True)
                         for note in await self.mcp.prepare(session_id, agent or self.agents.default.name)]
            exchange = await self.loop.exchange(session_id, text, agent=agent, model=model,
                                                parts=[*(parts or ()), *notes], **options)
            final, answers = exchange.final, list(exchange.answers)
            if not self.keep_background:
                settled = await self._settle_background(session_id)
                if settled is not None:
                    final, answers = settled.final or final, [*answers, *settled.answers]
        return PromptResult.of_run(session_id, final, answers, decisions)

    async def _settle_background(self, session_id: str) -> Exchange | None:
        """The run is over, but background tasks it started still run: wait for them or stop them
        (`background_on_exit`), then let the agent answer with how they ended; None when none were running."""
        tasks = self.loop.subtasks.background
        running = [t for t in tasks.of(session_id) if t.state == "running"]
        if not running:
            return None
        policy = self.config.background_on_exit
        if policy == "wait":
            await tasks.wait(running, self.config.background_wait_s)
        late = [t for t in running if t.state == "running"]
        for task in late:
            tasks.cancel(task)
            task.error = (f"stopped when the run ended (background_on_exit: {policy}"
                          + (f", after waiting {self.config.background_wait_s:g} s)" if policy == "wait" else ")"))
        await tasks.wait(late, 30)
        what = ("they were waited for" if not late else
                f"{len(late)} {'was' if len(late) == 1 else 'were'} stopped")
        said = (f"The run ended with {len(running)} background task{'s' * (len(running) != 1)} still running; "
                f"{what} (background_on_exit: {policy}). Give your final answer with what they found.")
        return await self.loop.exchange(session_id, said, synthetic=True)

    async def command(
        self, session_id: str, name: str, arguments: str = "", agent: str | None = None, model: str | None = None
    ) -> AssistantMessage | str | None:
        """Run the slash command `/name arguments`; `/help` and `/agents` return text without a model call."""
        with self.config_guard.running(session_id):
            if self.mcp:
                await self.mcp.prepare(session_id, agent or self.agents.default.name)
            return await self.commands.run(session_id, name, arguments, agent=agent, model=model)

    async def undo(self, session_id: str, *, to: str | int | None = None,
                   confirm: Confirm | None = None) -> UndoReport:
        """Take back the session's latest turn (or turn `to`, a 1-based index or message id, and every later one).

        The files the turns changed go back to their state before the earliest of them; the turns leave the
        history the model sees (kept aside for `redo`; a new prompt deletes them). A file the person changed
        after the agent is a conflict: `confirm` decides, and without it the file is kept and reported.

        Raises:
            OpencodeNbError: the session is running (stop it first).
            ValueError: `to` names no standing turn.
        """
        self._not_running(session_id, "undo")
        return await undo_turns(self.checkpoints, session_id, to=to, confirm=confirm)

    async def redo(self, session_id: str, *, confirm: Confirm | None = None) -> UndoReport:
        """Put back what the session's last undo took: files as its turns left them, history shown again.

        Raises:
            OpencodeNbError: the session is running.
        """
        self._not_running(session_id, "redo")
        return await redo_turns(self.checkpoints, session_id, confirm=confirm)

    def _not_running(self, session_id: str, action: str) -> None:
        self.sessions.get(session_id)  # NotFoundError for an unknown id
        if self.loop.busy(session_id):
            raise OpencodeNbError(f"session {session_id} is running: stop it before {action}")

    def accept_config(self) -> None:
        """Confirm the held configuration change (`config_held`): workspaces built after this apply it.

        Raises:
            OpencodeNbError: the files changed again since this workspace read them; nothing was confirmed.
        """
        self.config_guard.accept(self.config_held.digest if self.config_held is not None else None)

    def abort(self, session_id: str) -> bool:
        """Stop the session's run; what was produced so far stays. Returns whether anything was running."""
        return self.loop.abort(session_id)

    @property
    def kernel(self) -> KernelBridge | None:
        """The live kernel this workspace serves, which tools see as `ctx.kernel`; None outside a kernel."""
        return self.deps.kernel

    @kernel.setter
    def kernel(self, bridge: KernelBridge | None) -> None:
        self.deps.kernel = bridge

    @property
    def notebook(self) -> NotebookAccess | None:
        """The notebook's cells, which tools see as `ctx.notebook`; None outside a kernel."""
        return self.deps.notebook

    @notebook.setter
    def notebook(self, cells: NotebookAccess | None) -> None:
        self.deps.notebook = cells

    @property
    def review(self) -> CellReview | None:
        """Where cell changes go when the person reviews each one (`ctx.review`); None outside a kernel."""
        return self.deps.review

    @review.setter
    def review(self, review: CellReview | None) -> None:
        self.deps.review = review

    @property
    def approvers(self) -> Approvers | None:
        """Who may answer approvals from a page (`approvals`); None: whoever sees the prompt."""
        return approvers(self.config.approvals, self.env)

    # ------------------------------------------------------------------------------------------ unattended

    def _unattended_permission(self, request: PermissionRequest) -> Literal["allow", "deny"] | None:
        if self.bus.subscribed(PermissionAsked):
            return None  # somebody listens and may answer: wait for them
        return decide(self.unattended_policy, request)

    def _unattended_question(self, request: QuestionRequest) -> Answers | Literal[False] | None:
        if self.bus.subscribed(QuestionAsked):
            return None
        return unattended_answers(self.unattended_policy, request)

    def _reply_question(self, request_id: str, answers: Any) -> None:
        if answers is None:
            self.questions.reject(request_id)
        else:
            self.questions.reply(request_id, answers)

    @property
    def root(self) -> Path:
        """The git root (or the directory itself), OpenCode's worktree: the boundary of "inside the project",
        what permission patterns and protected paths are judged from. Relative paths and commands start at
        `directory` (a notebook's folder) instead."""
        return self.loaded.root

    def _own_formatters(self) -> dict[str, FormatterConfig]:
        """The configured formatters but those a project's own files define: a formatter is a command run at
        every edit, and a cloned project's `opencode.yaml` must not run code the person never chose."""
        from .hook.config import from_project

        kept: dict[str, FormatterConfig] = {}
        for name, formatter in self.config.formatter.items():
            source, line = self.loaded.where("formatter", name)
            if from_project(source, self.loaded):
                self.formatter_warnings.append(
                    f"{source}{f':{line}' if line else ''} formatter.{name}: not run: a formatter runs a command at "
                    "every edit, and this one is defined by the project's files. Put it in your own configuration "
                    f"({self.loaded.global_dir / 'opencode.yaml'}) to use it.")
                continue
            kept[name] = formatter
        return kept

    def _project_plugins(self) -> dict[str, str]:
        """The plugins a project's own files name, which are never imported: importing one runs the project's
        code in this process, with nothing to confine it."""
        from .hook.config import from_project

        held: dict[str, str] = {}
        for i, spec in enumerate(self.config.plugin):
            source, line = self.loaded.where("plugin", str(i))
            if from_project(source, self.loaded):
                held[spec] = (f"{source}{f':{line}' if line else ''} names it, and a project's plugin is not loaded: "
                              "it would run the project's code unconfined. Name it in your own configuration "
                              f"({self.loaded.global_dir / 'opencode.yaml'}) to use it.")
        return held

    def _hooks(self) -> Hooks | None:
        """The hooks layer: command hooks run as the agents' shell commands do (`sandbox`), plugins loaded from
        `plugin` and the `opencode_nb.plugins` entry points; their tools join the registry, their
        `permission.ask` answers asks before a person does."""
        from .hook.command import CommandHooks, sandboxed
        from .hook.config import HookApprovals, hook_entries
        from .hook.layer import Hooks
        from .hook.plugins import Plugins

        commands = CommandHooks(hook_entries(self.loaded), run_command=sandboxed(
            self.sandbox, quarantine=self.data_dir / QUARANTINE), project_dir=self.root,
            approvals=HookApprovals(self.data_dir))
        plugins = Plugins.load(self.config.plugin, report=self.plugin_warnings.append,
                               withheld=self._project_plugins())
        hooks = Hooks(commands, plugins, self.bus, ask=self.permissions.ask)
        if not hooks:
            hooks.close()
            return None
        for tool in plugins.tools():
            self.tools.register(tool)
        if plugins.has("permission_ask"):
            self.permissions.deciders.append(hooks.decide)
        return hooks

    def approvals_notice(self) -> str:
        """Who may answer approvals from a page, for the config views."""
        rule = self.approvers
        if rule is None:
            return (f"approvals: {self.config.approvals} — anyone who sees a prompt may answer it (on JupyterHub, "
                    "`auto` lets only the server's owner answer)")
        return f"approvals: {self.config.approvals} — only {rule.owner} ({rule.source}) may answer prompts"

    def store_notice(self) -> str:
        """Where sessions are kept, for the config views: the PostgreSQL server, or the file with its journal mode
        and the filesystem that chose it."""
        if self.store.server is not None:
            server = self.store.server
            return (f"Session store: PostgreSQL at {server.where}, owned by role {server.user}: no other role "
                    "can read it.")
        return self.store_journaling.notice()

    def managed_notices(self) -> list[str]:
        """What the config views say of the administrator's managed file: that it is in force, and what of the
        other sources it overrides or refuses."""
        managed = self.loaded.managed
        if managed is None:
            return []
        return [f"managed configuration in force: {managed.path}; the values marked managed, and its deny and ask "
                "rules, cannot be loosened by any other file, %config, the environment or an approval",
                *self.loaded.managed_notes]

    @property
    def warnings(self) -> list[str]:
        held = [self.config_held.message()] if self.config_held is not None and not self.config_held.kept else []
        found = self.skills.current()
        skills = [*(str(problem) for problem in found.problems), *found.notes]
        off = [self.checkpoints.why_not] if self.checkpoints.why_not and self.config.checkpoints.enabled else []
        return [*self.loaded.warnings, *self.agents.warnings, *skills, *held, *off, *self.mcp.warnings,
                *self.plugin_warnings, *self.formatter_warnings]

    @property
    def store_path(self) -> Path:
        """One SQLite file per project root, named so two checkouts never share one."""
        digest = hashlib.sha256(str(self.root).encode()).hexdigest()[:16]
        return self.data_dir / "sessions" / f"{self.root.name or 'root'}-{digest}.sqlite"

    def close(self) -> None:
        """Reject whatever still waits for a person, write buffered text and close the store."""
        if self.hooks is not None:
            self.hooks.close()
        self.diagnostics.close()
        self.mcp.close()
        self.permissions.close()
        self.questions.close()
        self.sessions.close()
        self._forget_secrets()
        self._forget_secret_files()
        self._forget_data_dir()

    async def aclose(self) -> None:
        """Stop running sessions and background work, then close (after the `SessionEnd` hooks)."""
        await self.loop.close()
        if self.hooks is not None:
            await self.hooks.end(self.loop.prompted)
        await self.mcp.aclose()
        self.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Workspace({str(self.directory)!r})"


def _answering(callback: Callable[[Any], Any], reply: Callable[[str, Any], None]) -> Callable[[Any], Any]:
    """A bus handler that answers each ask with what `callback` returns (awaited if it is awaitable)."""

    async def handle(event: PermissionAsked | QuestionAsked) -> None:
        answer = callback(event.request)
        if inspect.isawaitable(answer):
            answer = await answer
        with contextlib.suppress(NotFoundError):  # answered meanwhile: the run was stopped, or the workspace closed
            reply(event.request.id, answer)

    return handle


class _UnattendedLog:
    """Collects, while a prompt runs, the asks of its session tree that the unattended policy decided.

    It subscribes as a watcher: a listener of the ask events counts as somebody who may answer, which
    would turn the policy off.
    """

    def __init__(self, ws: Workspace, session_id: str) -> None:
        self.ws = ws
        self.root = ws.sessions.root_of(session_id)
        self.asked: dict[str, PermissionRequest | QuestionRequest] = {}
        self.decisions: list[UnattendedDecision] = []
        self._offs: list[Callable[[], None]] = []

    def __enter__(self) -> list[UnattendedDecision]:
        self._offs = [self.ws.bus.subscribe(kind, self._on_event, watch_only=True)
                      for kind in (PermissionAsked, QuestionAsked, PermissionReplied, QuestionReplied)]
        return self.decisions

    def __exit__(self, *exc: object) -> None:
        for off in self._offs:
            off()

    def _on_event(self, event: PermissionAsked | QuestionAsked | PermissionReplied | QuestionReplied) -> None:
        if isinstance(event, PermissionAsked | QuestionAsked):
            self.asked[event.request.id] = event.request
            return
        request = self.asked.pop(event.request_id, None)
        if request is None or event.decided_by != "policy" or not self._in_tree(event.session_id):
            return
        if isinstance(request, PermissionRequest):
            subject = f"{request.permission} {', '.join(request.patterns)}".strip()
            outcome = "allowed" if isinstance(event, PermissionReplied) and event.reply != "reject" else "refused"
            kind: Literal["permission", "question"] = "permission"
        else:
            subject = " / ".join(q.question for q in request.questions)
            answered = isinstance(event, QuestionReplied) and event.answers is not None
            outcome = "answered" if answered else "dismissed"
            kind = "question"
        self.decisions.append(UnattendedDecision(kind, event.session_id, subject, outcome, event.reason or ""))

    def _in_tree(self, session_id: str) -> bool:
        try:
            return self.ws.sessions.root_of(session_id) == self.root
        except NotFoundError:
            return False


def _effective_rules(loaded: LoadedConfig, data_dir: Path, notebook: bool = False) -> Effective:
    """Every agent's ruleset as a workspace on `loaded` would build it, for judging a configuration change."""
    registry = AgentRegistry(loaded.config, loaded.agents, data_dir=data_dir, tmp_dir=Path(tempfile.gettempdir()),
                             where=loaded.where, notebook=notebook)
    return {a.name: a.permission for a in registry.list(include_hidden=True)}, registry.default.name
