"""Keys stay out of what tools, people and the store see: run for real through the loop, a key never reaches
a tool's environment, and a known key printed, echoed, read or returned in an error is redacted in the
tool output, every bus event, the SQLite file and the transcript.

The workspace's environment and the process's both hold the keys, as in a kernel started from a shell that
exported them: tools inherit the process's environment, so that is where hiding them must work.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from opencode_nb import Workspace, secrets
from opencode_nb.kernel.python.worker import run_in_worker
from opencode_nb.provider import Scripted
from opencode_nb.provider.events import ProviderEvent, StepFinish, TextDelta
from opencode_nb.provider.request import LLMRequest
from opencode_nb.views.transcript import transcript_bundle

KEY = "sk-ant-safety-4e8b1d7c2a9f0e3b6d5c8a1f4e7b0d3c"
DATABASE_URL = "postgres://app:pw-9d2f7a1c@db.internal/app"
LOCAL_KEY = "local-llm-key-0b7e2d9a4c6f1e8d"
LITERAL_KEY = "sk-ant-literal-5c1e9a3f7b2d8e4a"
"""Written in opencode.yaml itself, in no environment."""
SECRETS = {"ANTHROPIC_API_KEY": KEY, "DATABASE_URL": DATABASE_URL, "MY_LLM": LOCAL_KEY}
CONFIG = {
    "permission": {"*": "allow"},
    "secrets": {"env": ["DATABASE_URL"]},
    "provider": {"local": {"type": "openai-compatible", "base_url": "http://127.0.0.1:9/v1",
                           "api_key": "{env:MY_LLM}"},
                 "anthropic": {"api_key": LITERAL_KEY}},
}
EVERY_VALUE = [KEY, DATABASE_URL, LOCAL_KEY, LITERAL_KEY]


class Run:
    def __init__(self, ws: Workspace, session_id: str, result: Any, events: list[Any]) -> None:
        self.ws, self.session_id, self.result, self.events = ws, session_id, result, events

    def tool_outputs(self) -> list[str]:
        return [getattr(p.state, "output", None) or getattr(p.state, "error", "")
                for m in self.ws.sessions.messages(self.session_id) for p in m.parts if p.type == "tool"]

    def stored_bytes(self) -> bytes:
        """Everything SQLite wrote: the database, its write-ahead log and shared memory."""
        self.ws.sessions.flush()
        store = self.ws.store_path
        return b"".join(p.read_bytes() for p in store.parent.rglob("*") if p.is_file())

    def published(self) -> str:
        return "\n".join(e.model_dump_json() for e in self.events)

    def transcript(self) -> str:
        bundle = transcript_bundle(self.ws, self.session_id, prompts=True)
        return bundle["text/html"] + bundle["text/plain"]

    def assert_nowhere(self, *values: str) -> None:
        seen = {"tool output": "\n".join(self.tool_outputs()), "store": self.stored_bytes().decode("utf-8", "replace"),
                "bus events": self.published(), "transcript": self.transcript()}
        for value in values:
            for where, text in seen.items():
                for variant in (value, value.upper(), value.lower()):
                    assert variant not in text, f"{value!r} reached the {where}"


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    made: list[Workspace] = []

    def start(turns: list[dict[str, Any]] | Any, *, files: dict[str, str] | None = None, prompt: str = "go") -> Run:
        root = tmp_path / "proj"
        (root / ".git").mkdir(parents=True, exist_ok=True)
        (root / "opencode.yaml").write_text(yaml.safe_dump(CONFIG))
        for name, text in (files or {}).items():
            (root / name).write_text(text)
        for name, value in SECRETS.items():
            monkeypatch.setenv(name, value)  # what tools' processes would inherit
        env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path), **SECRETS}
        ws = Workspace(root, {"model": "scripted/demo"}, data_dir=tmp_path / "data", env=env)
        made.append(ws)
        ws.providers.register("scripted", turns if not isinstance(turns, list) else Scripted(turns))
        events: list[Any] = []
        ws.bus.subscribe("*", events.append)
        session = ws.sessions.create()
        result = asyncio.run(asyncio.wait_for(ws.prompt(session.id, prompt), 30))
        return Run(ws, session.id, result, events)

    yield start
    for ws in made:
        ws.close()


def bash(command: str) -> list[dict[str, Any]]:
    return [{"tool_calls": [{"name": "bash", "input": {"command": command}}]}, {"text": "done"}]


@pytest.mark.parametrize("command", [
    "env",
    "printenv",
    "echo \"[$ANTHROPIC_API_KEY][$DATABASE_URL][$MY_LLM]\"",
    f"{sys.executable} -c 'import os; print(dict(os.environ))'",
])
def test_no_key_or_configured_secret_reaches_a_shell_command(run, command):
    result = run(bash(command))
    [output] = result.tool_outputs()
    assert "exit code 0" in output
    for name in SECRETS:
        assert name not in output
    if command.startswith("echo"):
        assert output.startswith("[][][]")
    result.assert_nowhere(*EVERY_VALUE)


def test_a_key_a_command_prints_from_a_file_is_redacted_in_output_store_events_and_transcript(run):
    files = {".env": f"ANTHROPIC_API_KEY={KEY}\nLOUD={KEY.upper()}\nDB={DATABASE_URL}\n"}
    result = run(bash("cat .env"), files=files)
    [output] = result.tool_outputs()
    assert "ANTHROPIC_API_KEY=[redacted: ANTHROPIC_API_KEY]" in output
    assert "LOUD=[redacted: ANTHROPIC_API_KEY]" in output and "DB=[redacted: DATABASE_URL]" in output
    result.assert_nowhere(*EVERY_VALUE)
    sent = [m.model_dump_json() for r in result.ws.providers.resolve("scripted/demo")[0].requests for m in r.messages]
    assert not any(KEY in m for m in sent), "the model's next request carries the redacted output"


def test_output_too_long_for_the_model_is_saved_to_disk_redacted_too(run, tmp_path):
    files = {".env": f"ANTHROPIC_API_KEY={KEY}\n"}
    result = run(bash("yes \"$(cat .env)\" | head -n 30000"), files=files)  # about 2 MB
    [output] = result.tool_outputs()
    saved = sorted((tmp_path / "data" / "tool-output").iterdir())
    assert saved and "tool-output" in output  # the model is told where the whole output is
    text = saved[-1].read_text()
    assert text.count("[redacted: ANTHROPIC_API_KEY]") == 30000 and KEY not in text and KEY.upper() not in text
    result.assert_nowhere(*EVERY_VALUE)


def test_a_model_echoing_the_key_in_any_case_is_stored_and_shown_redacted(run):
    result = run([{"text": f"Your key is {KEY}; shouted, {KEY.upper()}; whispered, {KEY.lower()}."}])
    label = "[redacted: ANTHROPIC_API_KEY]"
    assert result.result.text == f"Your key is {label}; shouted, {label}; whispered, {label}."
    result.assert_nowhere(*EVERY_VALUE)
    assert "sk-ant-safety" not in result.published().lower(), "not even the start of the key was published"


class TwoChunks:
    """A model whose answer carries the key split across two deltas."""

    def __init__(self, first: str, second: str) -> None:
        self.chunks = [first, second]

    async def stream(self, request: LLMRequest) -> AsyncIterator[ProviderEvent]:
        if request.purpose == "title":
            yield TextDelta(text="A title")
        else:
            for chunk in self.chunks:
                yield TextDelta(text=chunk)
                await asyncio.sleep(0.15)  # long enough for the store to flush the first chunk on its own
        yield StepFinish(reason="stop")


@pytest.mark.parametrize("split", [3, 14, len(KEY) // 2, len(KEY) - 1])
def test_a_key_split_across_two_streamed_chunks_is_redacted_in_the_store_and_never_shown_in_part(run, split):
    result = run(TwoChunks(f"The key: {KEY[:split]}", f"{KEY[split:]} (keep it safe)"))
    assert result.result.text == "The key: [redacted: ANTHROPIC_API_KEY] (keep it safe)"
    result.assert_nowhere(*EVERY_VALUE)
    store = result.stored_bytes().decode("utf-8", "replace")
    for text in (result.published(), store):
        assert KEY[:max(split, 3)] not in text


def test_reading_a_config_file_with_a_literal_key_shows_it_redacted(run):
    result = run([{"tool_calls": [{"name": "read", "input": {"path": "opencode.yaml"}}]}, {"text": "read it"}])
    [output] = result.tool_outputs()
    assert "api_key: '[redacted: provider.anthropic.api_key]'" in output or \
        "api_key: [redacted: provider.anthropic.api_key]" in output
    assert "{env:MY_LLM}" in output, "a reference names no secret: it stays readable"
    result.assert_nowhere(*EVERY_VALUE)


def test_a_provider_error_carrying_the_key_is_redacted_where_it_surfaces(run):
    result = run([{"error": {"message": f"invalid x-api-key: {KEY}", "status": 401}}])
    assert result.result.error is not None
    assert result.result.error.message == "invalid x-api-key: [redacted: ANTHROPIC_API_KEY]"
    result.assert_nowhere(*EVERY_VALUE)


def test_python_in_a_worker_gets_an_environment_without_keys(monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    configured = secrets.secret_set(SECRETS, names=["DATABASE_URL"])  # as a workspace's config registers it
    forget = secrets.register(configured)
    code = "import os\nprint([os.environ.get(n) for n in ('ANTHROPIC_API_KEY', 'DATABASE_URL', 'MY_LLM')])"
    try:
        run_result = asyncio.run(run_in_worker(code, {}, timeout_s=30))
    finally:
        forget()
    assert run_result.error is None, run_result.error
    assert run_result.output.strip() == "[None, None, None]"


def test_a_key_the_person_pastes_into_a_prompt_is_stored_redacted(run):
    result = run([{"text": "noted"}], prompt=f"use {KEY} for the API")
    messages = result.ws.sessions.messages(result.session_id)
    assert messages[0].parts[0].text == "use [redacted: ANTHROPIC_API_KEY] for the API"
    assert KEY.encode() not in result.stored_bytes()
    sent = result.ws.providers.resolve("scripted/demo")[0].requests[-1].model_dump_json()
    assert KEY not in sent, "the history the model reads is loaded from the store"
