"""Model providers behind one normalized stream of events."""

from .base import Provider
from .catalog import Cost, ModelInfo, cost, model_info
from .events import (
    FinishReason,
    ProviderEvent,
    ReasoningDelta,
    ReasoningEnd,
    StepFinish,
    TextDelta,
    ToolCall,
    ToolCallStart,
    Usage,
)
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
    "Cost",
    "FileBlock",
    "FinishReason",
    "ImageBlock",
    "LLMMessage",
    "LLMRequest",
    "ModelInfo",
    "Provider",
    "ProviderEvent",
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
