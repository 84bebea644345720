from ..errors import CorrectedError, DeniedError, RejectedError
from .rules import Action, Grant, Rule

__all__ = ["Action", "CorrectedError", "DeniedError", "Grant", "RejectedError", "Rule"]
