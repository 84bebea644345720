"""The configuration schema: every key a config file may hold.

Files are merged as plain mappings first (later files win, key by key) and validated once, here; the
loader turns a validation error into a `ConfigError` that names the file and line the bad value came
from. Key order inside `permission` mappings is meaningful (last match wins), and pydantic keeps it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self, get_args

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from ..people import ApprovalsMode

Action = Literal["allow", "ask", "deny"]
"""What a permission rule does. Defined here, below the permission engine, so that reading a config file
never needs the engine; `permission.rules` takes it from here."""
ACTIONS: tuple[Action, ...] = get_args(Action)

ModelId = Annotated[str, StringConstraints(pattern=r"^[^/\s]+/.+$")]
"""`provider/model`, e.g. `anthropic/claude-sonnet-4-5`; the loader's message for a mismatch says so."""

SandboxMode = Literal["off", "auto", "required"]
"""See `Config.sandbox`."""

ReviewMode = Literal["cells", "off"]
"""See `Config.review`."""

PermissionConfig = Action | dict[str, Action | dict[str, Action]]
"""`permission: deny`, `{edit: deny}` or `{bash: {"ls *": allow, "rm *": ask}}`, in the order written."""


class Section(BaseModel):
    """Unknown keys are collected by the loader (warned about, with a hint) before validation."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ModelCost(Section):
    """US dollars per million tokens."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0


class ModelConfig(Section):
    name: str | None = None
    context: int | None = Field(None, gt=0)
    """Context window in tokens."""
    output: int | None = Field(None, gt=0)
    """Maximum output tokens per request."""
    cost: ModelCost | None = None
    reasoning: bool | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    """Passed through to the provider request (e.g. `thinking`, `reasoning_effort`)."""


class ProviderConfig(Section):
    type: Literal["anthropic", "openai", "openai-compatible", "scripted"] | None = None
    """Defaults to the provider id when that is a known type; required for any other id."""
    api_key: str | None = None
    base_url: str | None = None
    models: dict[str, ModelConfig] = Field(default_factory=dict)
    options: dict[str, Any] = Field(default_factory=dict)
    script: list[dict[str, Any]] | str | None = None
    """Scripted provider only: the turns to replay, or a path to a YAML/JSON file of them."""
    idle_timeout_s: float | None = Field(None, gt=0)
    """Seconds the model may send nothing, mid-answer or before it, before the response is given up as a
    retryable error; 120 when unset (the SDKs alone would wait 600)."""


V2_ACTIONS = {"shell": "bash", "subagent": "task"}
"""OpenCode V2's action names that differ from the permission names here (and V1's); the others are the same
(`read`, `edit`, `glob`, `grep`, `skill`, `webfetch`, `external_directory`, ...)."""


class PermissionRule(Section):
    """One rule of OpenCode V2's `permissions:` list: `{action: shell, resource: "git push *", effect: deny}`.

    The list form says what the mapping form of `permission:` says, one rule per entry, in the order written
    (last match wins); it is read after `permission:` wherever both are given, so the newer form has the last
    word."""

    action: str = Field(min_length=1)
    """The permission, with wildcards: V2's `shell` and `subagent` are `bash` and `task` here."""
    resource: str = Field(min_length=1)
    """The pattern the tool's input is matched against: a path, a command, a URL, an agent's or skill's name."""
    effect: Action

    @property
    def permission(self) -> str:
        return V2_ACTIONS.get(self.action, self.action)


class AgentConfig(Section):
    name: str | None = None
    """The name listings show; the key under `agent:` stays the name that selects the agent."""
    mode: Literal["primary", "subagent", "all"] | None = None
    description: str | None = None
    prompt: str | None = None
    model: ModelId | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    steps: int | None = Field(None, gt=0)
    max_steps: int | None = Field(None, gt=0, alias="maxSteps")
    """The older spelling of `steps`, still read so existing files keep working; `steps` wins when both are set."""
    permission: PermissionConfig | None = None
    permissions: list[PermissionRule] | None = None
    """OpenCode V2's list form of the agent's rules, read after `permission` (see `PermissionRule`)."""
    tools: dict[str, bool] | None = None
    hidden: bool | None = None
    disable: bool | None = None
    disabled: bool | None = None
    """OpenCode V2's spelling of `disable`; either one set true removes the agent."""
    color: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    review: ReviewMode | None = None
    """This agent's cell changes are reviewed one by one (`cells`) or not (`off`); unset: the global `review`."""

    @field_validator("review", mode="before")
    @classmethod
    def _review_off(cls, value: Any) -> Any:
        return _off(value)

    @model_validator(mode="after")
    def _read_legacy_steps(self) -> Self:
        if self.steps is None and self.max_steps is not None:
            self.steps = self.max_steps
        if self.disabled and not self.disable:
            self.disable = True
        return self


class CommandConfig(Section):
    template: str
    description: str | None = None
    agent: str | None = None
    model: ModelId | None = None
    subtask: bool | None = None


class CompactionConfig(Section):
    auto: bool = True
    """Compact automatically when the context fills up."""
    prune: bool = True
    """Replace old tool outputs with a placeholder before summarizing."""
    reserved: int | None = Field(None, ge=0)
    """Tokens kept free for the answer; defaults to the model's output limit (capped)."""


EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_*][A-Za-z0-9_*]*$")]
"""An environment variable's name, or a pattern of them with `*` (`AWS_*`)."""


class SecretsConfig(Section):
    """What counts as a secret besides what is one anyway.

    Tools' processes (bash, command templates, the python worker) never see a variable named `*_API_KEY`,
    `*_TOKEN`, `*SECRET*` or `*PASSWORD*` (any case), nor one holding a configured API key (the variable a
    `{env:NAME}` reference reads). The values of all of them, and every `provider.<id>.api_key`, are
    replaced by `[redacted: NAME]` in tool output, errors, the session store and transcripts.
    """

    env: list[EnvName] = Field(default_factory=list)
    """More variables to treat so: names or `*` patterns, e.g. `secrets: {env: [DATABASE_URL, AWS_*]}`."""


class CheckpointsConfig(Section):
    """The project's file state recorded around each turn, so `undo` can take a turn's file changes back."""

    enabled: bool = True
    """Off: nothing is recorded and undo takes back the history (and cells) but no files."""
    max_file_mb: float = Field(20, gt=0, le=4096)
    """Files bigger than this many megabytes are not recorded (listed as skipped) and never restored."""
    keep_turns: int = Field(100, ge=1)
    """How many turns of the project keep their checkpoints; the oldest are pruned first."""


class StoreConfig(Section):
    """Where sessions are kept and how: `store: {journal: auto, url: null}`."""

    journal: Literal["auto", "wal", "rollback"] = "auto"
    """The SQLite file's journal: `auto` uses WAL on local disk and a rollback journal with one writer at a time
    on network and FUSE filesystems (NFS, CIFS/SMB, Lustre, GPFS, CephFS, FUSE), where WAL is unsafe; `wal` or
    `rollback` force one. `$OPENCODE_NB_STORE_JOURNAL` overrides it."""
    url: str | None = None
    """A PostgreSQL server to keep sessions in instead of the SQLite file, `postgresql://user@host/db` (put a
    password in `{env:NAME}`, or in the environment as `$OPENCODE_NB_STORE_URL`); null: the SQLite file."""


class McpConfig(Section):
    """One MCP server, in OpenCode's shape: `{type: local, command: [...], environment: {...}}` runs a program
    (inside the OS sandbox, like a shell command); `{type: remote, url, headers: {...}}` connects over streamable
    HTTP, falling back to SSE. `{env:NAME}` works in every value; header and environment values are secrets."""

    type: Literal["local", "remote"]
    command: list[str] | None = None
    """local: the program and its arguments, e.g. `[npx, -y, "@modelcontextprotocol/server-github"]`."""
    environment: dict[str, str] = Field(default_factory=dict)
    """local: variables set for the server, over the kernel's environment without its secrets."""
    url: str | None = None
    """remote: the server's endpoint, `http://` or `https://`."""
    headers: dict[str, str] = Field(default_factory=dict)
    """remote: sent with every request, e.g. `Authorization: "Bearer {env:GITHUB_TOKEN}"`."""
    enabled: bool = True
    timeout: int = Field(5000, gt=0)
    """Milliseconds for starting the server and listing its tools, as in OpenCode (default 5000)."""
    call_timeout: int = Field(120_000, gt=0)
    """Milliseconds one tool call may take before the server is given up on and restarted (default 120000)."""

    @field_validator("timeout", "call_timeout")
    @classmethod
    def _in_milliseconds(cls, value: int) -> int:
        if value < 100:
            raise ValueError(f"is in milliseconds, as in OpenCode: {value} would be {value} ms; for {value} seconds "
                             f"write {value * 1000}")
        return value

    @model_validator(mode="after")
    def _shape(self) -> Self:
        if self.type == "local":
            if not self.command or not self.command[0].strip():
                raise ValueError("a local server needs `command`: the program and its arguments as a list, "
                                 "e.g. command: [python, server.py]")
            if self.url is not None or self.headers:
                raise ValueError("`url` and `headers` are for `type: remote`; a local server is a `command`")
        else:
            if not self.url or not self.url.startswith(("http://", "https://")):
                raise ValueError("a remote server needs `url`, starting with http:// or https://, "
                                 "e.g. url: https://mcp.example.com/mcp")
            if self.command is not None or self.environment:
                raise ValueError("`command` and `environment` are for `type: local`; a remote server is a `url`")
        return self


class Config(Section):
    model: ModelId | None = None
    """Default model, `provider/model`."""
    small_model: ModelId | None = None
    """Model for titles and other small jobs."""
    default_agent: str | None = None
    provider: dict[str, ProviderConfig] = Field(default_factory=dict)
    agent: dict[str, AgentConfig] = Field(default_factory=dict)
    permission: PermissionConfig | None = None
    permissions: list[PermissionRule] | None = None
    """OpenCode V2's list form of the rules for every agent, read after `permission` (see `PermissionRule`)."""
    command: dict[str, CommandConfig] = Field(default_factory=dict)
    instructions: list[str] = Field(default_factory=list)
    """Extra instruction files: paths or globs, relative to the file that names them."""
    compaction: CompactionConfig = Field(default_factory=CompactionConfig)
    secrets: SecretsConfig = Field(default_factory=SecretsConfig)
    """Environment variables kept from tools and redacted everywhere, beyond the ones whose names say so."""
    mcp: dict[str, McpConfig] = Field(default_factory=dict)
    """MCP servers whose tools agents may use, named `<server>_<tool>`; see `McpConfig`."""
    checkpoints: CheckpointsConfig = Field(default_factory=CheckpointsConfig)
    """Recording of file checkpoints for undo: `checkpoints: {enabled: true, max_file_mb: 20, keep_turns: 100}`."""
    store: StoreConfig = Field(default_factory=StoreConfig)
    """The session store: its SQLite journal mode, or a PostgreSQL URL (see `StoreConfig`)."""
    sandbox: SandboxMode = "auto"
    """The OS sandbox for shell commands and spawned workers: `auto` confines them where this machine can
    (bubblewrap on Linux, sandbox-exec on macOS) and says once per session where it cannot; `required`
    refuses to run them unconfined; `off` never confines them."""
    approvals: ApprovalsMode = "auto"
    """Who may answer approvals on a server several people use: `owner` (JupyterHub's JUPYTERHUB_USER, else the
    kernel's OS user), `anyone` who sees the prompt, or `auto`: `owner` on a hub, `anyone` elsewhere."""
    review: ReviewMode = "off"
    """`cells`: every cell change an agent makes (`notebook_edit`) lands as a pending change the person accepts or
    rejects; `off`: changes land at once, after the usual permission ask. An agent's own `review` comes first."""

    @field_validator("checkpoints", mode="before")
    @classmethod
    def _checkpoints_switch(cls, value: Any) -> Any:
        """`checkpoints: false` (or `true`) is the switch alone."""
        return {"enabled": value} if isinstance(value, bool) else value

    @field_validator("sandbox", mode="before")
    @classmethod
    def _sandbox_off(cls, value: Any) -> Any:
        """YAML 1.1 reads a bare `off` (and `no`) as false: that is what the person wrote."""
        return "off" if value is False else value

    @field_validator("review", mode="before")
    @classmethod
    def _review_off(cls, value: Any) -> Any:
        return _off(value)


def _off(value: Any) -> Any:
    """YAML 1.1 reads a bare `off` (and `no`) as false: that is what the person wrote."""
    return "off" if value is False else value
