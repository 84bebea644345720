"""Permission evaluations per second on a realistic 200-rule ruleset (goal: >= 200k/s), and how a check
scales to 100,000 rules (goal: <= 5 ms per check at 100k).

The ruleset looks like an agent's merged rules: a catch-all first, then built-in and configured rules
for many permissions, mixing `*` overrides with specific patterns. Queries mix hits (a specific rule
decides) and misses (only a catch-all, or nothing, decides). A second ruleset without catch-alls is the
worst case: a miss there has to rule out every rule of the permission.

The scaling part gives 100 to 100,000 rules of two shapes through the
Python API and reports, as ratios to 100 rules within the same run: the first check on a new ruleset
(which builds its index), a check afterwards, and a whole `echo ok` call through a workspace.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from opencode_nb.permission import Rule, Ruleset, evaluate, from_config, merge, wildcard_match
from opencode_nb.permission.decider import _compile_alternation
from opencode_nb.permission.wildcard import compile_pattern, pattern_source

PERMISSIONS = ["bash", "edit", "read", "grep", "glob", "webfetch", "task", "external_directory", "mcp_*"]
COMMANDS = ["git", "npm", "pip", "ls", "cat", "rm", "docker", "make", "python", "jupyter", "kubectl", "uv"]
GOAL = 200_000


def ruleset(n: int = 200, *, catch_alls: bool = True, seed: int = 7) -> Ruleset:
    rnd = random.Random(seed)
    rules = [Rule(permission="*", pattern="*", action="allow")] if catch_alls else []
    while len(rules) < n:
        permission = rnd.choice(PERMISSIONS)
        if permission == "bash":
            tail = rnd.choice(["*", "status *", "run *", "-rf *", "install *", "push * --force *", "?"])
            pattern = f"{rnd.choice(COMMANDS)} {tail}"
        elif permission == "task":
            pattern = rnd.choice(["explore", "general", "data-explorer", "review*"])
        elif permission == "webfetch":
            pattern = f"https://{rnd.choice(['docs', 'api', 'internal'])}.example.com/*"
        else:
            folder = rnd.choice(["src", "notebooks", "data", "~/x", ".env", "/tmp/*", "C:\\work"])
            pattern = f"{folder}/{rnd.choice(['*', '*.py', '?.md', '*.(csv|tsv)', 'raw/*'])}"
        if catch_alls and rnd.random() < 0.04:
            pattern = "*"
        rules.append(Rule(permission=permission, pattern=pattern, action=rnd.choice(["allow", "ask", "deny"])))
    return merge(rules)


QUERIES = [
    ("bash", "git status"), ("bash", "rm -rf build"), ("bash", "unknowncmd --flag"), ("bash", "docker push x --force"),
    ("bash", "npm run test -- --watch"), ("edit", "src/app.py"), ("edit", "notebooks/eda.ipynb"),
    ("read", "data/raw/2024.csv"), ("read", "README.md"), ("task", "explore"), ("task", "summarize"),
    ("external_directory", "/tmp/elsewhere/*"), ("webfetch", "https://docs.example.com/page"),
    ("webfetch", "https://evil.test/"), ("mcp_search", "*"), ("question", "*"),
]


def measure(fn: Callable[[], object], seconds: float = 1.0) -> float:
    """Calls of `fn` per second, best of three runs."""
    best = 0.0
    for _ in range(3):
        count, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds / 3:
            fn()
            count += 1
        best = max(best, count / elapsed)
    return best


def split(rules: list[Rule]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Queries a specific rule decides (hits), and those left to a catch-all or the default (misses)."""
    hits, misses = [], []
    for permission, pattern in QUERIES:
        decided = evaluate(permission, pattern, rules)
        (misses if decided.pattern == "*" else hits).append((permission, pattern))
    return hits, misses


def per_second(rules: list[Rule], queries: list[tuple[str, str]]) -> float:
    def run() -> None:
        for permission, pattern in queries:
            evaluate(permission, pattern, rules)

    return measure(run) * len(queries) if queries else 0.0


def main() -> None:
    rules = ruleset()
    bare = ruleset(catch_alls=False, seed=8)
    hits, misses = split(rules)
    bare_hits, bare_misses = split(bare)
    patterns = [pattern for _, pattern in QUERIES]
    wildcards = ["git *", "src/*.py", "rm -rf *", "https://docs.example.com/*", "*test*", "?.md"]

    def matching() -> None:
        for text in patterns:
            for pattern in wildcards:
                wildcard_match(text, pattern)

    def first_use() -> None:
        fresh = merge(rules)  # what each loop step does: merge agent and session rules anew
        for permission, pattern in QUERIES:
            evaluate(permission, pattern, fresh)

    mixed = per_second(rules, list(QUERIES))
    print(f"rules: {len(rules)} (with catch-alls), {len(bare)} (without); queries: {len(QUERIES)}")
    print(f"evaluate, mixed hits and misses:         {mixed:>12,.0f} /s  (goal {GOAL:,}: "
          f"{'met' if mixed >= GOAL else 'NOT met'})")
    print(f"evaluate, hits only ({len(hits):>2}):               {per_second(rules, hits):>12,.0f} /s")
    print(f"evaluate, misses only ({len(misses):>2}):             {per_second(rules, misses):>12,.0f} /s")
    print(f"evaluate, no catch-alls, hits ({len(bare_hits):>2}):     {per_second(bare, bare_hits):>12,.0f} /s")
    print(f"evaluate, no catch-alls, misses ({len(bare_misses):>2}):   {per_second(bare, bare_misses):>12,.0f} /s")
    print(f"evaluate, plain list (full scan):        {per_second(list(rules), list(QUERIES)):>12,.0f} /s")
    print(f"evaluate, fresh merged ruleset per step: {measure(first_use) * len(QUERIES):>12,.0f} /s  "
          f"({1e6 / measure(first_use):,.0f} µs for {len(QUERIES)} queries)")
    print(f"wildcard_match alone:                    {measure(matching) * len(patterns) * len(wildcards):>12,.0f} /s")
    print()
    scaling()


# ---------------------------------------------------------------------------------------------- scaling

SIZES = (100, 1_000, 10_000, 100_000)
SCALE_GOAL_MS = 5.0
SCALE_QUERIES = [("bash", "echo ok"), ("bash", "cmd77 --x"), ("bash", "git push origin main"), ("bash", "rm -rf build"),
                 ("edit", "src/app.py"), ("read", "data/raw/2024.csv"), ("webfetch", "https://evil.test/")]


def distinct(n: int) -> Ruleset:
    """What the Python API was given in the report: one deny per made-up command, after an allow-all."""
    return from_config({"*": "allow", "bash": {"*": "allow", **{f"cmd{i} *": "deny" for i in range(n)}}})


def crowded(n: int) -> Ruleset:
    """The 200-rule mix grown to `n` without catch-alls: few prefixes, so buckets hold thousands of rules."""
    return ruleset(n, catch_alls=False, seed=9)


def first_check_ms(build: Callable[[int], Ruleset], n: int) -> tuple[float, Ruleset]:
    """A new ruleset's first check of every query, compiled caches emptied: what a new configuration costs."""
    rules = build(n)
    for cache in (_compile_alternation, compile_pattern, pattern_source):
        cache.cache_clear()
    start = time.perf_counter()
    for permission, pattern in SCALE_QUERIES:
        evaluate(permission, pattern, merge(rules, Ruleset()))
    return (time.perf_counter() - start) * 1e3, rules


def check_ms(rules: Ruleset) -> float:
    """One check, once the ruleset has been used: median over every query, through a fresh merge each round
    as the loop's steps make."""
    times = []
    for _ in range(21):
        merged = merge(rules, Ruleset())
        evaluate("bash", "warm", merged)
        for permission, pattern in SCALE_QUERIES:
            start = time.perf_counter()
            evaluate(permission, pattern, merged)
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def echo_ok_s(n: int) -> tuple[float, float]:
    """A workspace given `n` bash denies through the Python API: its first `echo ok` call, then a second."""
    from opencode_nb import Workspace
    from opencode_nb.provider import Scripted

    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        root = Path(tmp) / "proj"
        root.mkdir()
        rules = {"*": "allow", "bash": {"*": "allow", **{f"cmd{i} *": "deny" for i in range(n)}}}
        ws = Workspace(root, {"model": "scripted/demo", "permission": rules, "sandbox": "off"},
                       data_dir=Path(tmp) / "data", env={"XDG_CONFIG_HOME": str(Path(tmp) / "xdg"), "HOME": tmp})
        turn = [{"tool_calls": [{"name": "bash", "input": {"command": "echo ok"}}]}, {"text": "done"}]
        ws.providers.register("scripted", Scripted(turn * 2))

        async def prompt() -> float:
            start = time.perf_counter()
            result = await ws.prompt(ws.sessions.create().id, "go")
            assert result.text == "done", result.text
            return time.perf_counter() - start

        try:
            return asyncio.run(prompt()), asyncio.run(prompt())
        finally:
            ws.close()


def scaling() -> None:
    print(f"{'rules':>8} {'shape':>9} {'first check':>12} {'ratio':>7} {'a check':>9} {'ratio':>7}")
    for name, build in (("distinct", distinct), ("crowded", crowded)):
        base_first = base_check = 0.0
        for n in SIZES:
            first, rules = first_check_ms(build, n)
            check = check_ms(rules)
            base_first, base_check = (first, check) if n == SIZES[0] else (base_first, base_check)
            print(f"{n:>8,} {name:>9} {first:>9.2f} ms {first / base_first:>6.1f}× {check * 1e3:>6.1f} µs "
                  f"{check / base_check:>6.1f}×" + (f"  (goal ≤ {SCALE_GOAL_MS:.0f} ms: "
                                                    f"{'met' if check <= SCALE_GOAL_MS else 'NOT met'})"
                                                    if n == SIZES[-1] else ""))
    small_first, small_second = echo_ok_s(SIZES[0])
    big_first, big_second = echo_ok_s(SIZES[-1])
    print(f"`echo ok` through a workspace, first / second call: {SIZES[0]:,} rules {small_first * 1e3:.0f} / "
          f"{small_second * 1e3:.0f} ms; {SIZES[-1]:,} rules {big_first * 1e3:.0f} / {big_second * 1e3:.0f} ms "
          f"({big_first / small_first:.1f}× / {big_second / small_second:.1f}×)")


if __name__ == "__main__":
    main()
