"""Permission evaluations per second on a realistic 200-rule ruleset (goal: >= 200k/s).

The ruleset looks like an agent's merged rules: a catch-all first, then built-in and configured rules
for many permissions, mixing `*` overrides with specific patterns. Queries mix hits (a specific rule
decides) and misses (only a catch-all, or nothing, decides). A second ruleset without catch-alls is the
worst case: a miss there has to rule out every rule of the permission.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from opencode_nb.permission import Rule, Ruleset, evaluate, merge, wildcard_match

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


if __name__ == "__main__":
    main()
