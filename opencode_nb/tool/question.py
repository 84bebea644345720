"""question: ask the person one or more multiple-choice questions and wait for the answers."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..errors import ToolError
from ..question.events import QuestionInfo, QuestionOption
from .base import Tool, ToolContext, ToolResult


class OptionParam(BaseModel):
    label: str = Field(description="The choice as shown on its button (1-5 words)")
    description: str = Field("", description="What choosing it means")


class QuestionParam(BaseModel):
    question: str = Field(description="The complete question")
    header: str = Field("", description="A very short label for the question (at most 30 characters)")
    options: list[OptionParam] = Field(default_factory=list, description="The choices; the person may also type")
    multiple: bool = Field(False, description="Allow choosing several options")


class QuestionParams(BaseModel):
    questions: list[QuestionParam] = Field(min_length=1, description="The questions to ask")


class QuestionTool(Tool[QuestionParams]):
    id = "question"
    params = QuestionParams

    async def execute(self, params: QuestionParams, ctx: ToolContext) -> ToolResult:
        if ctx.questions is None:
            raise ToolError("Nobody can be asked questions in this session; decide yourself and say what you assumed.")
        infos = [QuestionInfo(question=q.question, header=q.header, multiple=q.multiple,
                              options=[QuestionOption(label=o.label, description=o.description) for o in q.options])
                 for q in params.questions]
        answers = await ctx.questions.ask(ctx.session_id, infos, agent=ctx.agent)
        lines = []
        for info, answer in zip(infos, answers, strict=False):
            lines.append(f'"{info.question}" = "{", ".join(answer) if answer else "(no answer)"}"')
        text = "The person answered: " + "; ".join(lines) + ". Continue with these answers in mind."
        return ToolResult(f"Asked {len(infos)} question{'s' if len(infos) > 1 else ''}", text, {"answers": answers})
