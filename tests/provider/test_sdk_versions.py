"""Our providers through the real SDKs at both ends of the ranges pyproject.toml allows.

The body we build is not enough to test: the SDK's method must take it. anthropic 2.x dropped `temperature` and
`top_p` from `messages.create`, and an agent with `temperature:` crashed while the body tests passed. So each
provider runs, in a subprocess with the SDK's folder first on `sys.path`, every request shape with every parameter
we can send, against the loopback wire server, on the lowest and the newest version of its SDK (installed by
`.ci/sdk-install` into `.ci/sdk/<name>-low` and `-new`, the first time a run needs them). Each call must stream to
the end, and each parameter we built must either reach the wire or be named in a warning: nothing crashes, nothing
vanishes unsaid.

Under CI (`CI=true`) a folder that cannot be installed fails the test; elsewhere (no registry in reach) it is
skipped with what the installer said.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .wire_anthropic import anthropic_stream
from .wire_openai import openai_stream
from .wire_server import WireServer

ROOT = Path(__file__).resolve().parents[2]
SDK_DIR = ROOT / ".ci" / "sdk"
DRIVER = Path(__file__).with_name("sdk_driver.py")
TIMEOUT_S = 120

ESSENTIAL = {
    "anthropic": ({"model", "max_tokens", "messages", "system", "tools", "tool_choice", "stop_sequences", "metadata",
                   "stream", "probe"},
                  {"model", "max_tokens", "messages", "system", "tools", "tool_choice", "thinking", "stream",
                   "probe"}),
    "openai": ({"model", "messages", "tools", "tool_choice", "max_tokens", "temperature", "top_p", "seed", "stop",
                "stream", "stream_options", "probe"},
               {"model", "messages", "tools", "tool_choice", "max_completion_tokens", "stream", "probe"}),
}
"""What must reach the wire on every version the ranges allow (per call of the driver): the request itself."""
BUILT = {
    "anthropic": ({"temperature", "top_p", "top_k"}, {"output_config", "service_tier"}),
    "openai": ({"user", "frequency_penalty", "presence_penalty", "logit_bias", "parallel_tool_calls",
                "service_tier"}, {"reasoning_effort", "verbosity", "prompt_cache_key"}),
}
"""The other parameters the driver's calls carry: each on the wire, or named in a warning."""


_installed: dict[str, str | None] = {}
"""What installing the SDK folders said, once per test run: None when it worked."""


def sdk_folder(name: str, end: str) -> Path:
    """The SDK's folder, installed from the registry the first time a run needs it (`.ci/sdk-install`), so the
    README's one test command covers this test too. With no registry in reach it is skipped, except under CI."""
    folder = SDK_DIR / f"{name}-{end}"
    if not any(folder.glob(f"{name}-*.dist-info")):
        if "error" not in _installed:
            run = subprocess.run(["bash", str(ROOT / ".ci" / "sdk-install"), sys.executable], capture_output=True,
                                 text=True, timeout=600, cwd=ROOT)
            _installed["error"] = None if run.returncode == 0 else (run.stderr or run.stdout).strip()[-2000:]
        if not any(folder.glob(f"{name}-*.dist-info")):
            reason = f"{folder} could not be installed by `bash .ci/sdk-install`: {_installed['error']}"
            if os.environ.get("CI") == "true":
                pytest.fail(reason)
            pytest.skip(reason)
    return folder


def lower_bound(name: str) -> str:
    import re
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    spec = next(d for d in deps if re.match(rf"{name}\b", d))
    return re.search(r">=\s*([\w.]+)", spec).group(1)


def drive(name: str, folder: Path, wire: WireServer, *flags: str) -> dict:
    streams = {
        "anthropic": lambda: anthropic_stream({"text": "Here is the chart."},
                                              {"tool": "read", "id": "toolu_1", "json": '{"path": "b.csv"}'},
                                              stop="tool_use"),
        "openai": lambda: openai_stream("Here is the chart.", calls=[{"id": "call_2", "name": "read",
                                                                      "args": '{"path": "b.csv"}'}]),
    }
    wire.queue(streams[name](), streams[name]())
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_BASE_URL", "_API_KEY", "_AUTH_TOKEN"))}
    run = subprocess.run([sys.executable, str(DRIVER), str(folder), name, wire.url, *flags], capture_output=True,
                         text=True,
                         timeout=TIMEOUT_S, env=env, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("end", ["low", "new"])
@pytest.mark.parametrize("name", ["anthropic", "openai"])
def test_every_parameter_we_send_is_taken_by_the_installed_sdk_or_warned_of(name, end, wire):
    folder = sdk_folder(name, end)
    out = drive(name, folder, wire)
    assert Path(out["file"]).is_relative_to(folder.resolve()), out["file"]  # that version, not the venv's
    if end == "low":
        from packaging.version import Version

        assert Version(out["version"]) == Version(lower_bound(name))
    for index, result in enumerate(out["results"]):
        assert "error" not in result, result
        assert result["events"][-1] == "finish" and result["text"] == "Here is the chart."
        assert result["calls"] == [{"name": "read", "input": {"path": "b.csv"}}]
        body = wire.received[index].body
        sent = set(body) | set(body.get("extra_body", {}))
        assert ESSENTIAL[name][index] <= sent, ESSENTIAL[name][index] - sent
        for key in BUILT[name][index]:
            assert key in sent or any(f"takes no `{key}`" in w for w in out["warnings"]), (key, out["warnings"])
    headers = wire.received[0].headers
    assert headers.get("x-api-key") or headers.get("authorization", "").startswith("Bearer ")


def test_anthropic_2_sends_no_sampling_settings_and_says_so_once(wire):
    """The crash that started this: the newest SDK takes no temperature, so it is left out with a warning, and
    the lowest still sends it."""
    new = drive("anthropic", sdk_folder("anthropic", "new"), wire)
    if not new["version"].startswith("2."):
        pytest.skip(f"the newest anthropic is {new['version']}; this is about 2.x")
    assert "temperature" not in wire.received[0].body
    assert sum("takes no `temperature`" in w for w in new["warnings"]) == 1
    wire.received.clear()
    low = drive("anthropic", sdk_folder("anthropic", "low"), wire)
    assert wire.received[0].body["temperature"] == 0.3 and wire.received[0].body["top_k"] == 40
    assert not any("takes no `temperature`" in w for w in low["warnings"])


def test_control_without_the_fitting_the_newest_anthropic_crashes_on_temperature(wire):
    """What the tests above would catch: unfitted, the sampling call is a TypeError before anything is sent."""
    new = drive("anthropic", sdk_folder("anthropic", "new"), wire, "--unfitted")
    if not new["version"].startswith("2."):
        pytest.skip(f"the newest anthropic is {new['version']}; this is about 2.x")
    sampling, _ = new["results"]
    assert "TypeError" in sampling["error"] and "temperature" in sampling["error"]
