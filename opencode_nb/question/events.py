"""Bus events of the question service: questions put to the person, and their answers."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..bus import Event
from ..permission.events import DecidedBy, ToolRef


class QuestionOption(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    label: str
    description: str = ""


class QuestionInfo(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    question: str
    header: str = ""
    options: list[QuestionOption] = Field(default_factory=list)
    multiple: bool = False
    custom: str = "Type your own answer"
    """The placeholder of the field for an answer in the person's own words; "" offers the options only."""
    options_only: bool = False
    """The options' buttons are the only ways to answer (no Submit, no Dismiss): each says what happens, and
    words typed in the field go with the button clicked. For a choice between named outcomes (a plan's
    approval), where a fourth way out would say nothing about what it does."""


class QuestionRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str
    session_id: str
    agent: str = ""
    questions: list[QuestionInfo]
    tool: ToolRef | None = None
    """The tool call that asks, so views show the questions with it."""


class QuestionAsked(Event):
    type: Literal["question.asked"] = "question.asked"
    request: QuestionRequest


class QuestionReplied(Event):
    type: Literal["question.replied"] = "question.replied"
    session_id: str
    request_id: str
    answers: list[list[str]] | None = None
    """One list of chosen labels or free text per question; None when rejected."""
    reason: str | None = None
    """Why it was answered or dismissed without a person's answer, for transcripts."""
    decided_by: DecidedBy = "person"
