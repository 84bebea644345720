"""Model providers behind one normalized stream of events."""

from .base import Provider
from .catalog import cost, model_info
from .events import ReasoningDelta, ReasoningEnd, StepFinish, TextDelta, ToolCall, ToolCallStart, Usage
from .registry import ProviderRegistry
from .request import (
    FileBlock,
    ImageBlock,
    LLMMessage,
    LLMRequest,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolSpec,
)
from .retry import RetryPolicy
from .scripted import Scripted, Turn

__all__ = [
    "FileBlock",
    "ImageBlock",
    "LLMMessage",
    "LLMRequest",
    "Provider",
    "ProviderRegistry",
    "ReasoningBlock",
    "ReasoningDelta",
    "ReasoningEnd",
    "RetryPolicy",
    "Scripted",
    "StepFinish",
    "TextBlock",
    "TextDelta",
    "ToolCall",
    "ToolCallBlock",
    "ToolCallStart",
    "ToolResultBlock",
    "ToolSpec",
    "Turn",
    "Usage",
    "cost",
    "model_info",
]
