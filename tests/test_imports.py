"""The package's import graph flows one way: config → permission/agent → provider → tool → session/command →
workspace → views/kernel/cli.

Every import counts, type-only and function-local ones included: a lower part that names a higher one,
even only for a type, is what makes two parts impossible to change or test apart.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "opencode_nb"

LAYERS: list[set[str]] = [
    {"errors", "id", "bus", "handoff", "values", "secrets", "__version__"},
    {"config"},
    {"permission"},
    {"agent", "question", "sandbox"},
    {"provider"},
    {"tool"},
    {"session"},
    {"command"},
    {"workspace"},
    {"views"},
    {"demo"},
    {"kernel", "cli"},
    {"__init__"},
]
"""Lowest first. A part may import its own layer's other parts only where no cycle results."""

RANK = {part: rank for rank, parts in enumerate(LAYERS) for part in parts}


def part_of(module: str) -> str:
    """`opencode_nb.session.loop` → `session`; the package's own `__init__` is `__init__`."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "__init__"


def module_name(path: Path) -> tuple[str, str]:
    """The dotted name of a source file and the package its relative imports start from."""
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    dotted = ".".join(relative.parts)
    if path.name == "__init__.py":
        dotted = dotted.removesuffix(".__init__")
        return dotted, dotted
    return dotted, dotted.rpartition(".")[0]


def imported(node: ast.AST, package: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "opencode_nb"]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level == 0:
        return [node.module] if node.module and node.module.split(".")[0] == "opencode_nb" else []
    base = package.split(".")
    if node.level > 1:
        base = base[: -(node.level - 1)]
    if node.module:
        return [".".join([*base, node.module])]
    return [".".join([*base, alias.name]) for alias in node.names]  # `from . import x`


def edges() -> dict[tuple[str, str], list[str]]:
    """(importing part, imported part) → the modules that import it."""
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        module, package = module_name(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for target in imported(node, package):
                a, b = part_of(module), part_of(target)
                if a != b:
                    found[a, b].append(module)
    return found


def test_every_part_of_the_package_has_a_place_in_the_flow():
    parts = {part_of(module_name(p)[0]) for p in PACKAGE.rglob("*.py")}
    assert parts - set(RANK) == set(), "place the new part in LAYERS"


def test_no_part_imports_one_above_it():
    against = {f"{a} → {b} (in {', '.join(sorted(set(where)))})"
               for (a, b), where in edges().items() if RANK[a] < RANK[b]}
    assert against == set()


def test_no_two_parts_import_each_other():
    graph = edges()
    both_ways = {tuple(sorted((a, b))) for a, b in graph if (b, a) in graph}
    assert both_ways == set()


def test_the_walk_sees_type_only_and_local_imports(tmp_path):
    """The checks above would prove nothing if the walk skipped the imports a cycle usually hides behind."""
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..workspace import Workspace\n"
              "def f():\n    from ..views import render\n")
    names = [t for node in ast.walk(ast.parse(source)) for t in imported(node, "opencode_nb.session")]
    assert names == ["opencode_nb.workspace", "opencode_nb.views"]
