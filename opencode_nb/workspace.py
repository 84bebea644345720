"""One project directory, with everything an agent needs to work in it.

A `Workspace` is the explicit root object: it reads the configuration once, builds the agent registry,
opens the session store and wires the services (sessions, permissions) to one bus. Nothing in the
package keeps ambient global state; notebooks, the CLI and tests each hold their own workspace.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .agent import AgentRegistry
from .bus import Bus
from .command import CommandRunner
from .config import LoadedConfig, load_config
from .permission import PermissionService
from .provider.registry import ProviderRegistry
from .question import QuestionService
from .session.loop import SessionLoop
from .session.models import AssistantMessage, Part
from .session.service import SessionService
from .session.store import SessionStore
from .session.subtask import SubtaskRunner
from .tool.base import Ask, ToolContext
from .tool.registry import ToolRegistry, default_registry

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
        env: the environment to read (`OPENCODE_NB_CONFIG`, `XDG_CONFIG_HOME`, API keys); tests pass
            their own so they never read the person's real configuration.
    """

    def __init__(
        self,
        directory: str | Path = ".",
        config: Mapping[str, Any] | None = None,
        *,
        data_dir: str | Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.directory = Path(directory).expanduser().resolve()
        self.env: Mapping[str, str] = dict(os.environ if env is None else env)
        self.loaded: LoadedConfig = load_config(self.directory, config, env=self.env)
        self.config = self.loaded.config
        self.data_dir = Path(data_dir).expanduser() if data_dir else default_data_dir(self.env)
        self.data_dir.mkdir(parents=True, exist_ok=True)

        self.bus = Bus()
        self.agents = AgentRegistry(
            self.config,
            self.loaded.agents,
            data_dir=self.data_dir,
            tmp_dir=Path(tempfile.gettempdir()),
            where=self.loaded.where,
        )
        self.store = SessionStore(self.store_path)
        self.sessions = SessionService(self.store, self.bus)
        self.permissions = PermissionService(self.bus, tree=self.sessions)
        self.questions = QuestionService(self.bus)
        self.providers = ProviderRegistry(self.config, self.env, base_dir=self.root)
        self.tools: ToolRegistry = default_registry()
        self.loop = SessionLoop(self)
        self.subtasks = SubtaskRunner(self)
        self.commands = CommandRunner(self)

    async def prompt(
        self,
        session_id: str,
        text: str,
        agent: str | None = None,
        model: str | None = None,
        parts: list[Part] | None = None,
        **options: Any,
    ) -> AssistantMessage | None:
        """Send `text` to the session and run the agents until the answer is complete.

        Returns:
            The final assistant message (its `error` says why, if the run ended badly).
        """
        return await self.loop.prompt(session_id, text, agent=agent, model=model, parts=parts or (), **options)

    async def command(
        self, session_id: str, name: str, arguments: str = "", agent: str | None = None, model: str | None = None
    ) -> AssistantMessage | str | None:
        """Run the slash command `/name arguments`; `/help` and `/agents` return text without a model call."""
        return await self.commands.run(session_id, name, arguments, agent=agent, model=model)

    def abort(self, session_id: str) -> bool:
        """Stop the session's run; what was produced so far stays. Returns whether anything was running."""
        return self.loop.abort(session_id)

    def tool_context(
        self, *, session_id: str, message_id: str, call_id: str, agent: str, ask: Ask,
        update: Any = None, extra: dict[str, Any] | None = None,
    ) -> ToolContext:
        """What a tool call may use: the loop supplies the bound `ask` and `update`."""
        return ToolContext(
            session_id=session_id, message_id=message_id, call_id=call_id, agent=agent, directory=self.root,
            data_dir=self.data_dir, ask=ask, update=update or (lambda title, metadata: None),
            todos=self.sessions, questions=self.questions, extra=dict(extra or {}),
        )

    @property
    def root(self) -> Path:
        """The git root (or the directory itself): the boundary of "inside the workspace"."""
        return self.loaded.root

    @property
    def warnings(self) -> list[str]:
        return [*self.loaded.warnings, *self.agents.warnings]

    @property
    def store_path(self) -> Path:
        """One SQLite file per project root, named so two checkouts never share one."""
        digest = hashlib.sha256(str(self.root).encode()).hexdigest()[:16]
        return self.data_dir / "sessions" / f"{self.root.name or 'root'}-{digest}.sqlite"

    def close(self) -> None:
        """Reject whatever still waits for a person, write buffered text and close the store."""
        self.permissions.close()
        self.questions.close()
        self.sessions.close()

    async def aclose(self) -> None:
        """Stop running sessions and background work, then close."""
        await self.loop.close()
        self.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Workspace({str(self.directory)!r})"
