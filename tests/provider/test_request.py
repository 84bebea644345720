"""The neutral request and its content blocks."""

import base64

import pytest
from pydantic import TypeAdapter, ValidationError

from opencode_nb.provider import FileBlock, ImageBlock, LLMMessage, ToolResultBlock
from opencode_nb.provider.request import Block, split_data_url


def test_a_data_url_is_split_into_mime_and_base64_data():
    image = ImageBlock(mime="", data="data:image/png;base64,aGk=")
    assert (image.mime, image.data, image.url) == ("image/png", "aGk=", "data:image/png;base64,aGk=")
    explicit = ImageBlock(mime="image/webp", data="data:image/png;base64,aGk=")
    assert explicit.mime == "image/webp"


def test_a_percent_encoded_data_url_is_base64_encoded():
    file = FileBlock(mime="", data="data:text/plain,caf%C3%A9%20au%20lait", filename="menu.txt")
    assert base64.b64decode(file.data).decode() == "café au lait" and file.mime == "text/plain"


def test_a_data_url_claiming_base64_must_hold_base64():
    with pytest.raises(ValidationError, match="not valid base64"):
        ImageBlock(mime="", data="data:image/png;base64,***")
    with pytest.raises(ValueError, match="not a data URL"):
        split_data_url("http://example.com/a.png")


def test_blocks_load_through_one_discriminated_union():
    blocks = TypeAdapter(list[Block]).validate_python([
        {"type": "text", "text": "hi"}, {"type": "tool-result", "call_id": "c", "name": "read", "output": "x"}])
    assert isinstance(blocks[1], ToolResultBlock)
    message = LLMMessage.model_validate_json(LLMMessage(role="tool", content=blocks).model_dump_json())
    assert message.content == blocks


def test_messages_are_frozen_so_a_cached_conversion_stays_true():
    message = LLMMessage(role="user", content=[])
    with pytest.raises(ValidationError):
        message.role = "assistant"
