import shutil
from pathlib import Path

import pytest

from opencode_nb import Workspace
from opencode_nb.provider import Scripted
from opencode_nb.provider.retry import RetryPolicy
from tests.provider.wire import WireServer

SAMPLE = Path(__file__).resolve().parents[2] / "opencode_nb" / "demo" / "sample"


class Harness:
    """A workspace on a copy of the sample project, talking to a scripted model."""

    def __init__(self, tmp_path: Path, config: dict | None = None) -> None:
        self.root = tmp_path / "proj"
        shutil.copytree(SAMPLE, self.root)
        (self.root / ".git").mkdir()
        self.model = Scripted()
        self.ws = Workspace(self.root, {"model": "scripted/demo", **(config or {})}, data_dir=tmp_path / "data",
                            env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)})
        self.ws.providers.register("scripted", self.model)
        self.events: list = []
        self.ws.bus.subscribe("*", self.events.append)
        self.session = self.ws.sessions.create(str(self.root))

    def script(self, *turns: dict) -> None:
        self.model.turns.extend(self.model.__class__(list(turns)).turns)

    async def prompt(self, text: str = "go", **kw):
        return await self.ws.prompt(self.session.id, text, **kw)

    def parts(self, kind: str | None = None):
        out = [p for m in self.ws.sessions.messages(self.session.id) for p in m.parts]
        return [p for p in out if kind is None or p.type == kind]

    def tool_parts(self):
        return self.parts("tool")

    def step_requests(self):
        return [r for r in self.model.requests if r.purpose == "step"]

    def of(self, event_type: str):
        return [e for e in self.events if e.type == event_type]


@pytest.fixture
def make(tmp_path):
    made = []

    def build(config: dict | None = None) -> Harness:
        harness = Harness(tmp_path / f"h{len(made)}", config)
        made.append(harness)
        return harness

    yield build
    for harness in made:
        harness.ws.close()


@pytest.fixture
def h(make):
    return make()


@pytest.fixture
def wire():
    with WireServer() as server:
        yield server


def on_wire(make, wire: WireServer, provider: str, settings: dict | None = None, **config) -> Harness:
    """A harness whose main model is `provider`'s real SDK talking to the loopback wire server.

    Titles go to the harness's scripted model: on the wire they would race the session's own requests.
    Retries wait milliseconds, so a test of a cut stream does not sit out the real backoff.
    """
    base = wire.url if provider == "anthropic" else f"{wire.url}/v1"
    model = "anthropic/claude-sonnet-4-6" if provider == "anthropic" else "openai/gpt-5"
    h = make({"model": model, "small_model": "scripted/demo",
              "provider": {provider: {"api_key": "sk-test-key-789", "base_url": base, **(settings or {})}}, **config})
    h.ws.loop.retry = RetryPolicy(base_s=0.01, cap_s=0.05)
    return h
