"""Questions an agent puts to the person, and their answers."""

from .events import QuestionAsked, QuestionInfo, QuestionOption, QuestionReplied, QuestionRequest
from .service import QuestionService

__all__ = ["QuestionAsked", "QuestionInfo", "QuestionOption", "QuestionReplied", "QuestionRequest",
           "QuestionService"]
