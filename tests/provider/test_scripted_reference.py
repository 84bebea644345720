"""What the README says of the scripted model's script: leftover turns answer the next prompt, running out
ends the prompt with a clear error, titles take no turn, an unknown key names the turn and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from opencode_nb import Workspace
from opencode_nb.errors import ConfigError
from opencode_nb.provider.scripted import Scripted


async def test_leftover_turns_answer_the_next_prompt_and_running_out_is_an_error(tmp_path: Path):
    script = [{"text": "first"}, {"text": "second"}]
    ws = Workspace(tmp_path, {"model": "scripted/t", "provider": {"scripted": {"script": script}}},
                   data_dir=tmp_path / "data")
    try:
        session = ws.sessions.create().id
        assert (await ws.prompt(session, "one")).text == "first"
        assert (await ws.prompt(session, "two")).text == "second", "the turn left over answered the next prompt"
        ended = await ws.prompt(session, "three")
        assert ended.error is not None and "The scripted model has no more turns" in ended.error.message
    finally:
        await ws.aclose()


def test_an_unknown_key_in_a_turn_names_the_turn_the_key_and_the_keys_a_turn_takes():
    with pytest.raises(ConfigError) as refused:
        Scripted.from_config([{"text": "a"}, {"text": "b"}, {"tool_call": []}])
    assert refused.value.key == "provider.scripted.script[2].tool_call"
    assert "turn keys: text, reasoning, tool_calls, finish, delay, usage, error" in str(refused.value)
