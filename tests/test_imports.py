"""The package's import graph flows one way: config → permission/agent → provider → tool → session/command →
workspace → views/kernel/cli; and no two files import each other, directly or around a circle.

Every import counts, type-only and function-local ones included: a lower part that names a higher one,
even only for a type, is what makes two parts impossible to change or test apart, and a circle of files
is the same knot inside a part. A name imported from a package is followed to the module that defines it
(`from ..permission import merge` is an edge to `permission/rules.py`), since re-exporting is what a
package's `__init__` is for.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "opencode_nb"

LAYERS: list[set[str]] = [
    {"errors", "id", "bus", "handoff", "values", "secrets", "version", "pids", "fs"},
    {"config"},
    {"permission"},
    {"agent", "question", "sandbox"},
    {"provider"},
    {"tool", "mcp"},
    {"session"},
    {"command", "checkpoint"},
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


def sources() -> dict[str, tuple[ast.Module, str]]:
    """Every module of the package: its syntax tree and the package its relative imports start from."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module, package = module_name(path)
        found[module] = (ast.parse(path.read_text(encoding="utf-8")), package)
    return found


def defining(module: str, name: str, modules: dict[str, tuple[ast.Module, str]], seen: tuple[str, ...] = ()) -> str:
    """The module `from module import name` depends on: a submodule of that name, else where a package's
    re-export comes from, else `module` itself."""
    if f"{module}.{name}" in modules:
        return f"{module}.{name}"
    if module not in modules or module in seen:
        return module
    tree, package = modules[module]
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            base = imported(ast.ImportFrom(module=node.module, names=[], level=node.level), package)
            for alias in node.names:
                if (alias.asname or alias.name) == name and base:
                    return defining(base[0], alias.name, modules, (*seen, module))
    return module


def file_edges() -> dict[str, set[str]]:
    """Module → the modules it imports, anywhere in it."""
    modules = sources()
    graph: dict[str, set[str]] = defaultdict(set)
    for module, (tree, package) in modules.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name in modules]
            elif isinstance(node, ast.ImportFrom):
                base = imported(ast.ImportFrom(module=node.module, names=[], level=node.level), package)
                targets = [defining(base[0], a.name, modules) for a in node.names] if base else []
            else:
                continue
            graph[module].update(t for t in targets if t in modules and t != module)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_file_imports_itself_around_a_circle():
    assert circles(file_edges()) == []


def test_the_circle_check_finds_a_circle_hidden_behind_a_type_import_and_a_re_export():
    graph = {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": {"p.a"}}
    assert circles(graph) == [["p.a", "p.b", "p.c"]]
    modules = sources()
    assert defining("opencode_nb.permission", "merge", modules) == "opencode_nb.permission.rules"
    assert defining("opencode_nb.tool", "context", modules) == "opencode_nb.tool.context"


def test_the_walk_sees_type_only_and_local_imports(tmp_path):
    """The checks above would prove nothing if the walk skipped the imports a cycle usually hides behind."""
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..workspace import Workspace\n"
              "def f():\n    from ..views import render\n")
    names = [t for node in ast.walk(ast.parse(source)) for t in imported(node, "opencode_nb.session")]
    assert names == ["opencode_nb.workspace", "opencode_nb.views"]
