"""Questions an agent puts to the person, and their answers."""

from .events import QuestionAsked, QuestionInfo, QuestionOption, QuestionReplied
from .service import QuestionService

__all__ = ["QuestionAsked", "QuestionInfo", "QuestionOption", "QuestionReplied", "QuestionService"]
