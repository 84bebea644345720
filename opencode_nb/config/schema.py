"""The configuration schema: every key a config file may hold.

Files are merged as plain mappings first (later files win, key by key) and validated once, here; the
loader turns a validation error into a `ConfigError` that names the file and line the bad value came
from. Key order inside `permission` mappings is meaningful (last match wins), and pydantic keeps it.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Self, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator
from pydantic_core import PydanticCustomError

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


DiagnosticsTool = Literal["ruff", "pyright"]
"""A checker of Python after an agent's edit: `ruff check` (shipped), or pyright's language server (`pyright`
or `basedpyright`, whichever is installed)."""


def _ruff_only() -> list[DiagnosticsTool]:
    return ["ruff"]


class DiagnosticsConfig(Section):
    """What checks Python after an agent's `write`, `edit` or `notebook_edit`, so the model reads its own
    undefined names and syntax errors in the tool's result and fixes them before the person runs the code:
    `diagnostics: {enabled: true, python: [ruff, pyright]}`. Only error-level findings are reported."""

    enabled: bool = True
    python: list[DiagnosticsTool] = Field(default_factory=_ruff_only)
    """The checkers, in order; `pyright` is skipped where neither pyright nor basedpyright is installed."""
    max_per_file: int = Field(20, ge=1, le=200)
    """Findings the model is shown per file or cell; the rest are counted."""
    timeout_s: float = Field(5.0, gt=0, le=60)
    """Seconds a checker may take before the edit's result goes on without its findings."""


class FormatterConfig(Section):
    """A formatter run on each file an agent writes or edits, in OpenCode's shape:
    `formatter: {ruff: {command: [ruff, format, $FILE], extensions: [.py]}}`. None runs unless configured."""

    command: list[str] | None = None
    """The program and its arguments; `$FILE` stands for the changed file's path."""
    extensions: list[str] = Field(default_factory=list)
    """The files it formats, by how their names end: `[.py, .pyi]`."""
    environment: dict[str, str] = Field(default_factory=dict)
    """Variables set for the command."""
    disabled: bool = False

    @field_validator("extensions")
    @classmethod
    def _dotted(cls, value: list[str]) -> list[str]:
        wrong = [e for e in value if not e.startswith(".") or len(e) < 2]
        if wrong:
            raise ValueError(f"extensions start with a dot, e.g. [.py, .pyi]; not {', '.join(map(repr, wrong))}")
        return value

    @model_validator(mode="after")
    def _runs_something(self) -> Self:
        if not self.disabled and (not self.command or not self.command[0].strip()):
            raise ValueError("a formatter needs `command`: the program and its arguments as a list, with $FILE "
                             "for the file, e.g. command: [ruff, format, $FILE]")
        return self


HookEvent = Literal["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop", "SessionStart",
                    "SessionEnd", "PreCompact", "Notification", "CellExecuted", "PlanStepFinished", "AskWaiting",
                    "PermissionRequest", "PostToolUseFailure", "SubagentStart"]
"""The events `hooks` may name. The last three are Claude Code's and never fire here: a person's hook file copied
as it is still loads, and `%agent hooks` says those entries never run."""
HOOK_EVENTS: tuple[str, ...] = get_args(HookEvent)[:12]
"""The events that fire here (the others of `HookEvent` are accepted and never fire)."""
HOOK_KEYS_IGNORED = frozenset({"statusMessage", "once", "async", "asyncRewake", "shell", "if", "prompt", "model",
                               "url", "headers", "allowedEnvVars"})
"""Keys of a Claude Code hook that this project reads past: they load, and do nothing here."""


class HookCommandConfig(Section):
    """One hook of a matcher group, in Claude Code's shape: `{type: command, command: "...", timeout: 60}`."""

    type: Literal["command", "prompt", "http", "agent"] = "command"
    """Only `command` hooks run here; Claude Code's other kinds load and are listed as not run."""
    command: str | None = None
    """A shell line, run with the event as JSON on its standard input."""
    timeout: float | None = Field(None, gt=0)
    """Seconds before the hook's whole process group is killed and the call goes on; 60 when unset."""

    @model_validator(mode="before")
    @classmethod
    def _read_past_claude_keys(cls, value: Any) -> Any:
        if isinstance(value, dict) and HOOK_KEYS_IGNORED.intersection(value):
            return {key: item for key, item in value.items() if key not in HOOK_KEYS_IGNORED}
        return value

    @model_validator(mode="after")
    def _command_given(self) -> Self:
        if self.type == "command" and not (self.command or "").strip():
            raise ValueError("a command hook needs `command`: the shell line to run, e.g. "
                             "command: ./hooks/check.sh")
        return self


class HookMatcherConfig(Section):
    """`{matcher: "bash|write", hooks: [...]}`: the hooks run for the tools whose name the matcher matches."""

    matcher: str | None = None
    """A regular expression matched against the whole tool name (ours or Claude Code's: `Bash` is `bash`);
    `*`, empty or missing: every tool. Events without a tool ignore it."""
    hooks: list[HookCommandConfig] = Field(default_factory=list)

    @field_validator("matcher")
    @classmethod
    def _a_pattern(cls, value: str | None) -> str | None:
        if value is not None and value.strip() not in ("", "*"):
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"{value!r} is not a regular expression ({exc}); e.g. matcher: \"bash|write\"")\
                    from None
        return value


PLUGIN_SPEC = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?::[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)?")
"""`package.module` or `package.module:object.attribute`: what an entry point's value looks like."""


def _plugin_spec(value: str) -> str:
    if PLUGIN_SPEC.fullmatch(value.strip()) is None:
        hint = " (a file path is not one: put its folder on the import path and name the module)" \
            if "/" in value or value.endswith(".py") else ""
        raise PydanticCustomError("plugin_spec", "not an importable name{hint}: write the module, and after a colon "
                                  "the object in it, e.g. my_pkg.hooks:plugin", {"hint": hint})
    return value.strip()


PluginSpec = Annotated[str, AfterValidator(_plugin_spec)]
"""A Python plugin to load (see `Config.plugin`)."""


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
    plugin: list[PluginSpec] = Field(default_factory=list)
    """Python plugins, `module:object` or `module` (`plugin: [my_pkg.hooks:plugin]`), loaded in this order and
    before those installed under the entry point group `opencode_nb.plugins` (see `opencode_nb/hook/plugin_api.py`).
    A later file's list replaces an earlier one's, as lists do."""
    checkpoints: CheckpointsConfig = Field(default_factory=CheckpointsConfig)
    """Recording of file checkpoints for undo: `checkpoints: {enabled: true, max_file_mb: 20, keep_turns: 100}`."""
    store: StoreConfig = Field(default_factory=StoreConfig)
    """The session store: its SQLite journal mode, or a PostgreSQL URL (see `StoreConfig`)."""
    sandbox: SandboxMode = "auto"
    """The OS sandbox for shell commands and spawned workers: `auto` confines them where this machine can
    (bubblewrap on Linux, sandbox-exec on macOS) and says once per session where it cannot; `required`
    refuses to run them unconfined; `off` never confines them."""
    background_tasks: int = Field(default=4, ge=1, le=64)
    """How many subagents one session may run in the background at once (`task` with `background: true`)."""
    background_on_exit: Literal["wait", "cancel"] = "wait"
    """What a run that ends with background tasks still running does with them, where nobody stays to see them
    (a script, nbclient): `wait` for them (at most `background_wait_s`, then they are stopped) and let the agent
    answer with what they found, or `cancel` them at once."""
    background_wait_s: float = Field(default=600.0, gt=0)
    approvals: ApprovalsMode = "auto"
    """Who may answer approvals on a server several people use: `owner` (JupyterHub's JUPYTERHUB_USER, else the
    kernel's OS user), `anyone` who sees the prompt, or `auto`: `owner` on a hub, `anyone` elsewhere."""
    review: ReviewMode = "off"
    """`cells`: every cell change an agent makes (`notebook_edit`) lands as a pending change the person accepts or
    rejects; `off`: changes land at once, after the usual permission ask. An agent's own `review` comes first."""
    hooks: dict[HookEvent, list[HookMatcherConfig]] = Field(default_factory=dict)
    """Commands run at events, in Claude Code's shape: `hooks: {PreToolUse: [{matcher: bash, hooks: [{type:
    command, command: ./check.sh}]}]}` (see `opencode_nb/hook/`). The project's own hooks run once approved."""
    diagnostics: DiagnosticsConfig = Field(default_factory=DiagnosticsConfig)
    """Checks of Python after an agent's edits, whose findings the model reads (see `DiagnosticsConfig`)."""
    formatter: dict[str, FormatterConfig] = Field(default_factory=dict)
    """Formatters run after an agent writes or edits a file, by name (see `FormatterConfig`); `false`: none."""

    @field_validator("formatter", mode="before")
    @classmethod
    def _no_formatters(cls, value: Any) -> Any:
        """`formatter: false`, as in OpenCode: no formatter runs."""
        return {} if value is False else value

    @field_validator("hooks", mode="before")
    @classmethod
    def _hooks_left_empty(cls, value: Any) -> Any:
        """`hooks:` or `PreToolUse:` written with nothing under them yet."""
        if value is None:
            return {}
        if isinstance(value, dict):
            return {event: [] if groups is None else groups for event, groups in value.items()}
        return value

    @field_validator("checkpoints", "diagnostics", mode="before")
    @classmethod
    def _switch_alone(cls, value: Any) -> Any:
        """`checkpoints: false` or `diagnostics: false` (or `true`) is the switch alone."""
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

    @field_validator("plugin", mode="before")
    @classmethod
    def _one_plugin(cls, value: Any) -> Any:
        """`plugin: my_pkg.hooks:plugin`, a single one without the list."""
        return [value] if isinstance(value, str) else value


def _off(value: Any) -> Any:
    """YAML 1.1 reads a bare `off` (and `no`) as false: that is what the person wrote."""
    return "off" if value is False else value
