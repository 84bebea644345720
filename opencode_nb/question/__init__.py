"""Questions an agent puts to the person, and their answers."""

from .events import QuestionAsked, QuestionInfo, QuestionOption, QuestionReplied, QuestionRequest
from .service import Answers, Policy, QuestionService

__all__ = ["Answers", "Policy", "QuestionAsked", "QuestionInfo", "QuestionOption", "QuestionReplied",
           "QuestionRequest", "QuestionService"]
