"""What a session is made of: sessions, messages and their parts.

Everything here is stored and published, so every model is frozen: a change is a new value made with
`model_copy(update=...)`. Messages are discriminated by `role`, parts by `type` and tool states by
`status`, so a row read back from SQLite or a bus payload validates in one pass through the module-level
adapters below.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from .. import id as ids
from ..permission.rules import Grant, RulesetField
from ..values import Attachment, Frozen


def now() -> float:
    """Wall-clock seconds since the epoch; every `*_at` field uses it."""
    return time.time()


# ---------------------------------------------------------------------------------------------- session


class Session(Frozen):
    id: str = Field(default_factory=lambda: ids.ascending("session"))
    parent_id: str | None = None
    """Set on child sessions: the session whose task call created this one."""
    title: str = ""
    slug: str = ""
    """Short, file-name-safe name (plan files are `.opencode/plans/<slug>.md`)."""
    directory: str
    created_at: float = Field(default_factory=now)
    updated_at: float = Field(default_factory=now)
    permission: RulesetField = Field(default_factory=list)
    """Rules of this session itself, merged after the agent's (a child's denies live here)."""
    approved: list[Grant] = Field(default_factory=list)
    """"Always" approvals given in this session tree; kept on the root session only."""
    archived: bool = False
    cost: float = 0.0
    """Dollars spent on this session's own model calls (children keep their own)."""
    notebook: str = ""
    """The notebook that started it, so `%agent sessions` lists that notebook's sessions."""


# --------------------------------------------------------------------------------------------- messages


class Tokens(Frozen):
    input: int = 0
    output: int = 0
    reasoning: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def total(self) -> int:
        return self.input + self.output + self.reasoning + self.cache_read + self.cache_write

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            input=self.input + other.input,
            output=self.output + other.output,
            reasoning=self.reasoning + other.reasoning,
            cache_read=self.cache_read + other.cache_read,
            cache_write=self.cache_write + other.cache_write,
        )


class MessageError(Frozen):
    """Why an assistant message ended badly; `kind` is stable for views and tests to match on."""

    kind: Literal["aborted", "provider", "auth", "output_length", "context_overflow", "content_filter", "unknown"]
    message: str
    status: int | None = None
    retryable: bool = False


class UserMessage(Frozen):
    role: Literal["user"] = "user"
    id: str = Field(default_factory=lambda: ids.ascending("message"))
    session_id: str
    agent: str
    """The agent that should answer this message; switching agent is a new user message."""
    model: str | None = None
    """`provider/model` chosen for this prompt, or None for the agent's or workspace default."""
    synthetic: bool = False
    """Written by the system (plan/build switches, reminders), not typed by a person."""
    tools: dict[str, bool] = Field(default_factory=dict)
    """Per-prompt tool switches; False removes a tool for the answer to this message."""
    permission: RulesetField = Field(default_factory=list)
    """Rules for the answer to this message only, merged after the session's: an explanation's run may not
    change anything (`kernel/fix/overlay.py`), and the next prompt is free again."""
    list_variables: bool = True
    """Whether the system prompt lists the notebook's variables. A Fix or Explain run leaves the list out: it
    describes only what the failing cell reads, so a frame the cell never touched is not even named."""
    system: str | None = None
    created_at: float = Field(default_factory=now)


FinishReason = Literal["stop", "tool-calls", "length", "content-filter", "error", "aborted"]


class AssistantMessage(Frozen):
    role: Literal["assistant"] = "assistant"
    id: str = Field(default_factory=lambda: ids.ascending("message"))
    session_id: str
    parent_id: str
    """The user message this one answers."""
    agent: str
    model: str
    finish: FinishReason | None = None
    tokens: Tokens = Field(default_factory=Tokens)
    cost: float = 0.0
    error: MessageError | None = None
    summary: bool = False
    """True for a compaction summary that stands in for the history before it."""
    created_at: float = Field(default_factory=now)
    completed_at: float | None = None


Message = Annotated[UserMessage | AssistantMessage, Field(discriminator="role")]

# ---------------------------------------------------------------------------------------------- parts


class PartBase(Frozen):
    id: str = Field(default_factory=lambda: ids.ascending("part"))
    session_id: str
    message_id: str


class TextPart(PartBase):
    type: Literal["text"] = "text"
    text: str = ""
    synthetic: bool = False
    started_at: float | None = None
    ended_at: float | None = None


class ReasoningPart(PartBase):
    type: Literal["reasoning"] = "reasoning"
    text: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Provider data that must be sent back verbatim (e.g. Anthropic thinking signatures)."""
    started_at: float | None = None
    ended_at: float | None = None


class ToolPending(Frozen):
    status: Literal["pending"] = "pending"
    input: dict[str, Any] = Field(default_factory=dict)
    raw: str = ""


class ToolRunning(Frozen):
    status: Literal["running"] = "running"
    input: dict[str, Any]
    title: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    started_at: float = Field(default_factory=now)


class ToolCompleted(Frozen):
    status: Literal["completed"] = "completed"
    input: dict[str, Any]
    output: str
    title: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    attachments: list[Attachment] = Field(default_factory=list)
    started_at: float
    ended_at: float = Field(default_factory=now)
    compacted_at: float | None = None
    """Set when compaction pruned the output: the model then sees a placeholder instead."""


class ToolErrored(Frozen):
    status: Literal["error"] = "error"
    input: dict[str, Any]
    error: str
    title: str = ""
    """The title the call had while it ran (a stopped command keeps its description on its card)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    started_at: float
    ended_at: float = Field(default_factory=now)


ToolState = Annotated[ToolPending | ToolRunning | ToolCompleted | ToolErrored, Field(discriminator="status")]


class ToolPart(PartBase):
    type: Literal["tool"] = "tool"
    call_id: str
    tool: str
    state: ToolState = Field(default_factory=ToolPending)


class SubtaskPart(PartBase):
    """A request, on a user message, to run `agent` on `prompt` in a child session."""

    type: Literal["subtask"] = "subtask"
    prompt: str
    description: str
    agent: str
    model: str | None = None
    command: str | None = None


class FilePart(PartBase):
    type: Literal["file"] = "file"
    mime: str
    url: str
    filename: str | None = None
    source: str | None = None
    """Where it came from, e.g. the `@path` mention as typed."""


class AgentPart(PartBase):
    """An `@agent` mention in a user prompt."""

    type: Literal["agent"] = "agent"
    name: str
    source: str | None = None


class CompactionPart(PartBase):
    """Marks the user message that asked for a compaction (auto: because the context overflowed)."""

    type: Literal["compaction"] = "compaction"
    auto: bool = True


class StepStartPart(PartBase):
    type: Literal["step-start"] = "step-start"


class StepFinishPart(PartBase):
    type: Literal["step-finish"] = "step-finish"
    reason: FinishReason
    tokens: Tokens = Field(default_factory=Tokens)
    cost: float = 0.0


class PatchPart(PartBase):
    """Files a step changed, so a view can show them and a later revert can find them."""

    type: Literal["patch"] = "patch"
    hash: str
    files: list[str] = Field(default_factory=list)


class RetryPart(PartBase):
    type: Literal["retry"] = "retry"
    attempt: int
    error: str
    at: float = Field(default_factory=now)


Part = Annotated[
    TextPart
    | ReasoningPart
    | ToolPart
    | SubtaskPart
    | FilePart
    | AgentPart
    | CompactionPart
    | StepStartPart
    | StepFinishPart
    | PatchPart
    | RetryPart,
    Field(discriminator="type"),
]


class MessageWithParts(Frozen):
    """A message and its parts in creation order, as the loop and the views read history."""

    message: Message
    parts: list[Part] = Field(default_factory=list)


message_adapter: TypeAdapter[UserMessage | AssistantMessage] = TypeAdapter(Message)
part_adapter: TypeAdapter[Any] = TypeAdapter(Part)
