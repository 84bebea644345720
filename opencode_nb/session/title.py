"""Naming a session after its first exchange, in the background.

The title is written by the hidden `title` agent on the small model, as its own task: the person's
answer never waits for it, and a failure only leaves the default title in place. It comes from the first
prompt that got an answer (`title_source`): a first prompt that failed leaves the default for the next one
to replace. A first run the person stopped is titled too: the prompt says what the session is about
whether or not the answer came.
"""

from __future__ import annotations

import asyncio
import logging
import re

from ..provider.events import TextDelta
from ..provider.request import LLMMessage, LLMRequest, TextBlock
from .deps import LoopDeps
from .history import History
from .model_choice import model_for
from .models import AssistantMessage, TextPart, UserMessage
from .system import outgoing

log = logging.getLogger(__name__)

MAX_TITLE = 100
DEFAULT_PREFIXES = ("New session - ", "Child session - ")


def clean_title(text: str) -> str:
    """First non-empty line, without thinking blocks or quotes, at most MAX_TITLE characters."""
    text = re.sub(r"<think>.*?</think>", "", text, flags=re.S)
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = line.strip("\"'` #*")
    return line if len(line) <= MAX_TITLE else line[: MAX_TITLE - 3] + "..."


def title_source(history: History) -> tuple[UserMessage, str] | None:
    """The prompt a session is named after, with its text: the first one typed that did not fail.

    A prompt whose every answer failed (a wrong key, an unknown model, a provider down) says what the person
    tried, not what the session is about, and is often retyped at once: the next prompt names the session.
    A prompt never answered because a later one came is one that could not start. The newest prompt with no
    answer yet is the one a stop cut short: it names the session, since it says what the session is about.
    """
    entries = list(history.entries.values())
    answers: dict[str, list[AssistantMessage]] = {}
    for entry in entries:
        if isinstance(entry.message, AssistantMessage):
            answers.setdefault(entry.message.parent_id, []).append(entry.message)
    typed = [e for e in entries if isinstance(e.message, UserMessage) and not e.message.synthetic]
    for position, entry in enumerate(typed):
        replies = answers.get(entry.message.id, [])
        newest = position == len(typed) - 1
        if (replies and all(_failed(r) for r in replies)) or (not replies and not newest):
            continue
        text = "\n".join(p.text for p in entry.parts.values() if isinstance(p, TextPart) and not p.synthetic)
        if text.strip():
            assert isinstance(entry.message, UserMessage)  # `typed` holds user messages only
            return entry.message, text
    return None


def _failed(answer: AssistantMessage) -> bool:
    """An answer that ended in an error other than the person's stop."""
    return answer.error is not None and answer.error.kind != "aborted"


class TitleWriter:
    def __init__(self, deps: LoopDeps) -> None:
        self.deps = deps
        self._tasks: set[asyncio.Task[None]] = set()
        self._started: set[str] = set()
        """Sessions whose title is written or being written: a stop after the first step must not start another."""

    def maybe_start(self, session_id: str, history: History) -> None:
        session = self.deps.sessions.get(session_id)
        if session_id in self._started or session.parent_id or \
                (session.title and not session.title.startswith(DEFAULT_PREFIXES)):
            return
        source = title_source(history)
        if source is None:
            return
        first, text = source
        model_id = self.deps.config.small_model or model_for(first, self.deps.agents.get(first.agent), self.deps.config)
        self._started.add(session_id)
        task = asyncio.get_running_loop().create_task(self._write(session_id, text, model_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def after_stop(self, session_id: str, history: History) -> None:
        """Title a run the person stopped; called while the stop unwinds, so nothing may escape it."""
        try:
            self.maybe_start(session_id, history)
        except Exception as exc:
            log.info("could not title stopped session %s: %s", session_id, exc)

    async def _write(self, session_id: str, text: str, model_id: str) -> None:
        try:
            agent = self.deps.agents.get("title")
            provider, model = self.deps.providers.resolve(model_id)
            request = outgoing(LLMRequest(
                model=model,
                system=[agent.prompt or "Write a short title for this conversation."],
                messages=[LLMMessage(role="user", content=[TextBlock(text=text[:4000])])],
                tools=[],
                temperature=agent.temperature,
                max_tokens=min(model.output, 200),
                purpose="title",
            ))
            chunks = [e.text async for e in provider.stream(request) if isinstance(e, TextDelta)]
            title = clean_title("".join(chunks))
            if title:
                self.deps.sessions.update(self.deps.sessions.get(session_id), title=title)
                return
        except asyncio.CancelledError:
            self._started.discard(session_id)
            raise
        except Exception as exc:  # a title is a nicety: never let it disturb the session
            log.info("could not title session %s: %s", session_id, exc)
        self._started.discard(session_id)  # no title came: the next run may try again

    async def wait(self) -> None:
        """Let pending titles finish (tests, the CLI before it prints the transcript)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await self.wait()
