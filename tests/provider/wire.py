"""Everything the wire-protocol tests use, in one import (the loop's tests import from here too)."""

from .wire_anthropic import anthropic_error_event, anthropic_failure, anthropic_stream
from .wire_openai import openai_error_chunk, openai_failure, openai_stream
from .wire_server import Drop, Failure, Hang, Received, Stream, WireServer

__all__ = [
    "Drop", "Failure", "Hang", "Received", "Stream", "WireServer", "anthropic_error_event", "anthropic_failure",
    "anthropic_stream", "openai_error_chunk", "openai_failure", "openai_stream",
]
