"""Permission evaluations per second on a realistic 200-rule ruleset (goal: >= 200k/s)."""

from __future__ import annotations

import random
import time

from opencode_nb.permission import Rule, evaluate, merge, wildcard_match
from opencode_nb.permission.rules import Ruleset

PERMISSIONS = ["bash", "edit", "read", "grep", "glob", "webfetch", "task", "external_directory"]


def ruleset(n: int = 200) -> Ruleset:
    rnd = random.Random(7)
    rules = [Rule(permission="*", pattern="*", action="allow")]
    commands = ["git", "npm", "pip", "ls", "cat", "rm", "docker", "make", "python", "jupyter"]
    while len(rules) < n:
        permission = rnd.choice(PERMISSIONS)
        if permission == "bash":
            pattern = f"{rnd.choice(commands)} {rnd.choice(['*', 'status *', 'run *', '-rf *', 'install *'])}"
        elif permission == "task":
            pattern = rnd.choice(["explore", "general", "data-explorer", "*"])
        else:
            pattern = f"{rnd.choice(['src', 'notebooks', 'data', '~/x', '.env'])}/{rnd.choice(['*', '*.py', '?.md'])}"
        rules.append(Rule(permission=permission, pattern=pattern, action=rnd.choice(["allow", "ask", "deny"])))
    return merge(rules)


def queries() -> list[tuple[str, str]]:
    return [
        ("bash", "git status"), ("bash", "rm -rf build"), ("bash", "unknowncmd --flag"),
        ("edit", "src/app.py"), ("read", "notebooks/analysis.ipynb"), ("read", "data/x.env"),
        ("task", "explore"), ("external_directory", "/tmp/elsewhere/*"), ("webfetch", "https://example.com"),
        ("question", "*"),
    ]


def measure(fn, seconds: float = 1.0) -> float:
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        fn()
        count += 1
    return count / (time.perf_counter() - start)


def main() -> None:
    rules = ruleset()
    plain = list(rules)
    qs = queries()

    def cached() -> None:
        for permission, pattern in qs:
            evaluate(permission, pattern, rules)

    def uncached() -> None:
        for permission, pattern in qs:
            evaluate(permission, pattern, plain)

    def matching() -> None:
        for _, pattern in qs:
            wildcard_match(pattern, "git *")

    print(f"rules: {len(rules)}")
    print(f"evaluate (Ruleset, cached per permission): {measure(cached) * len(qs):>12,.0f} evaluations/s")
    print(f"evaluate (plain list, full scan):          {measure(uncached) * len(qs):>12,.0f} evaluations/s")
    print(f"wildcard_match alone:                      {measure(matching) * len(qs):>12,.0f} matches/s")


if __name__ == "__main__":
    main()
