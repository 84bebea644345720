"""What redaction costs a text that holds no secret, with three known values.

Every tool output, every stored row and every streamed delta is searched, and almost none holds a value,
so the figure that matters is the miss. Three sizes: 1 MB of output (far past the 50 KB a tool returns,
to show the cost per byte), a 50 KB tool output, and a 400-character row (the common write, where the
fixed cost per call dominates). The text mixes what a data notebook prints: log lines, numbers, hex ids,
base64, dashes and spaced-out tables, so the searches meet their usual false starts.

Pass the paths of other copies of `secrets.py` to time them beside this one (say an earlier version):
`python bench/bench_secrets.py /tmp/secrets_before.py` prints this one's figure first, then that one's.
"""

from __future__ import annotations

import importlib.util
import random
import statistics
import sys
import time
from collections.abc import Callable
from types import ModuleType

VALUES = {
    "sk-ant-unit-7f3a9c1e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a": "ANTHROPIC_API_KEY",
    "ghp_abcdefghijklmnopqrstuvwxyz012345": "GITHUB_TOKEN",
    "local-key-1234567890": "MY_LLM",
}
WORDS = ("the", "data", "frame", "has", "7", "rows;", "mean", "0x7f3a", "temperature", "is", "8.86", "and",
         "73:6b:2d", "median", "9.0.", "df.describe()", "a1b2c3d4", "QUJDRA==", "\n", "sk-", "ghp_", "--",
         "- - -", "INFO", "2026-08-01T12:00:00Z", "|", "e3b0c44298fc1c14", "local", "key", "1234")


def module(path: str | None) -> ModuleType:
    if path is None:
        from opencode_nb import secrets
        return secrets
    spec = importlib.util.spec_from_file_location("secrets_under_test", path)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def text(size: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    out, length = [], 0
    while length < size:
        word = rng.choice(WORDS)
        out.append(word)
        length += len(word) + 1
    return " ".join(out)[:size]


def timed_ms(call: Callable[[], object], number: int) -> float:
    started = time.perf_counter()
    for _ in range(number):
        call()
    return (time.perf_counter() - started) / number * 1000


def shown(ms: float) -> str:
    return f"{ms:.2f} ms" if ms >= 0.1 else f"{ms * 1000:.1f} µs"


def main() -> None:
    """Rounds alternate between the versions timed, so both meet the same load; the fastest round is reported
    (the machine is shared: the median swings by half between runs, the fastest far less)."""
    versions = [module(None)] + [module(path) for path in sys.argv[1:]]
    redactors = [version.Redactor(VALUES) for version in versions]
    for version, redactor in zip(versions, redactors, strict=True):
        print(f"{version.__file__}: {len(redactor._forms)} searched forms")
    for label, size, rounds, number in (("1 MB", 1_000_000, 31, 1), ("50 KB", 50_000, 31, 20),
                                        ("400 chars", 400, 31, 2000)):
        sample = text(size)
        times: list[list[float]] = [[] for _ in redactors]
        for redactor in redactors:
            assert not redactor.found(sample) and redactor.redact(sample) is sample
        for _ in range(rounds):
            for runs, redactor in zip(times, redactors, strict=True):
                runs.append(timed_ms(lambda s=sample, r=redactor: r.redact(s), number))
        figures = ", ".join(f"{shown(min(runs))} (median {shown(statistics.median(runs))})" for runs in times)
        print(f"redact, {label} without a secret: {figures}")


if __name__ == "__main__":
    main()
