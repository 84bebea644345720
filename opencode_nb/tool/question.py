"""question: ask the person one or more questions, with options to choose from, and wait for the answers.

A dismissed question raises `RejectedError`, which stops the loop: the person chose not to answer, and
guessing on would ignore that.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..errors import ToolError
from ..question.events import QuestionInfo, QuestionOption
from .base import Tool, ToolContext, ToolResult, for_person


class OptionParam(BaseModel):
    label: str = Field(min_length=1, description="The choice as shown on its button (1-5 words)")
    description: str = Field("", description="What choosing it means")


class QuestionParam(BaseModel):
    question: str = Field(min_length=1, description="The complete question")
    header: str = Field("", description="A very short label for the question (at most 30 characters)")
    options: list[OptionParam] = Field(default_factory=list,
                                       description="The choices; the person may also type their own answer")
    multiple: bool = Field(False, description="Whether several options may be chosen")


class QuestionParams(BaseModel):
    questions: list[QuestionParam] = Field(min_length=1, description="The questions to ask, in order")


class QuestionTool(Tool[QuestionParams]):
    id = "question"
    params = QuestionParams

    async def execute(self, params: QuestionParams, ctx: ToolContext) -> ToolResult:
        if ctx.questions is None:
            raise ToolError("Nobody can be asked questions in this session. Decide yourself, and say in your answer "
                            "what you assumed.")
        infos = [QuestionInfo(question=q.question, header=q.header[:30], multiple=q.multiple,
                              options=[QuestionOption(label=o.label, description=o.description) for o in q.options])
                 for q in params.questions]
        answers = await ctx.questions.ask(ctx.session_id, infos, agent=ctx.agent, tool=ctx.tool_ref)
        return ToolResult(f"Asked {len(infos)} question{'s' if len(infos) != 1 else ''}",
                          format_answers(infos, answers),
                          {"answers": answers, **for_person(answers_summary(answers), "")})


def answers_summary(answers: list[list[str]]) -> str:
    """The person's own answers, which the question's record above the card shows in full."""
    given = [", ".join(a) for a in answers if a]
    return "You answered: " + "; ".join(given) if given else "You gave no answer"


def format_answers(infos: list[QuestionInfo], answers: list[list[str]]) -> str:
    pairs = []
    for i, info in enumerate(infos):
        answer = answers[i] if i < len(answers) else []
        pairs.append(f'"{info.question}" = ' + (f'"{", ".join(answer)}"' if answer else "(unanswered)"))
    return ("The person answered your questions:\n" + "\n".join(pairs)
            + "\nContinue with these answers in mind.")
