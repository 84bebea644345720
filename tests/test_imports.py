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
import json
import re
from ast import PyCF_ALLOW_TOP_LEVEL_AWAIT
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "opencode_nb"

LAYERS: list[set[str]] = [
    {"errors", "id", "bus", "handoff", "values", "secrets", "version", "pids", "fs", "undo", "people"},
    {"config"},
    {"permission"},
    {"agent", "question", "sandbox", "diagnostics"},
    {"provider"},
    {"tool", "mcp"},
    {"hook"},
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


def origin(node: ast.ImportFrom, package: str) -> list[str]:
    """The module a `from` import reads from, if it is one of ours: `from .. import fs` reads the parent package."""
    base = package.split(".")
    if node.level > 1:
        base = base[: -(node.level - 1)]
    where = ".".join([*base, node.module] if node.module else base) if node.level else node.module or ""
    return [where] if where.split(".")[0] == "opencode_nb" else []


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
            base = origin(node, package)
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
                base = origin(node, package)
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


# A package's `__init__` is its face: outside callers (people, tests, notebooks, docs) import from it, while
# inside opencode_nb a module imports the module that defines a name. A face that the package itself goes
# through is a circle waiting to happen (the face imports its parts, a part imports the face) and hides where
# a name lives; a name no outside caller uses is a promise nobody asked for.

ROOT = PACKAGE.parent
FACE_CHECKS = {ROOT / "tests" / "test_imports.py", ROOT / "tests" / "test_exports.py"}
"""These pin every face as it stands, so they are no caller of one."""


def faces(modules: dict[str, tuple[ast.Module, str]]) -> dict[str, set[str]]:
    """Package → the names its `__init__` re-exports: names it imports from inside opencode_nb and lists in
    `__all__` (or, with no `__all__`, does not use itself). A submodule it imports (`from . import data`) is
    a module, not a re-export."""
    found: dict[str, set[str]] = {}
    for module, (tree, package) in modules.items():
        if module != package:
            continue
        listed: set[str] | None = None
        bound: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["__all__"]:
                listed = {str(e.value) for e in ast.walk(node.value) if isinstance(e, ast.Constant)}
            if isinstance(node, ast.ImportFrom):
                base = origin(node, package)
                if base and base[0].split(".")[0] == "opencode_nb":
                    bound |= {a.asname or a.name for a in node.names
                              if node.module or f"{base[0]}.{a.name}" not in modules}
        if listed is None:
            used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
            listed = bound - used
        if bound & listed:
            found[module] = bound & listed
    return found


def through_faces(modules: dict[str, tuple[ast.Module, str]]) -> set[str]:
    """`module:line name from package` for every import inside opencode_nb of a name a package re-exports."""
    exported = faces(modules)
    found = set()
    for module, (tree, package) in modules.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = origin(node, package)
            if base and base[0] != module:
                found |= {f"{module}:{node.lineno} {a.name} from {base[0]}"
                          for a in node.names if a.name in exported.get(base[0], ())}
    return found


def test_no_module_imports_a_name_through_another_package_s_face():
    """`from ..agent import AgentInfo` becomes `from ..agent.info import AgentInfo`. Importing a package whole
    (`from .. import fs`, then `fs.write_file`) names the package as the module it depends on, and is allowed."""
    assert through_faces(sources()) == set()


def caller_sources() -> list[str]:
    """The text of every file outside the package that may call into it: tests, benchmarks, the notebooks'
    code cells, the README and the docs."""
    found = [path.read_text(encoding="utf-8") for folder in ("tests", "bench")
             for path in sorted((ROOT / folder).rglob("*.py")) if path not in FACE_CHECKS]
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        found += ["".join(cell["source"]) for cell in cells if cell["cell_type"] == "code"]
    return found + [path.read_text(encoding="utf-8") for path in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]]


def uses(tree: ast.AST, package: str, packages: set[str], modules: set[str]) -> set[tuple[str, str]]:
    """(package, name) for every name of a package a file reaches: `from package import name`,
    `package.name` through a package bound by an import, and dotted paths in strings (monkeypatch targets)."""
    found: set[tuple[str, str]] = set()
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = origin(node, package)
            for alias in node.names if base else []:
                found.add((base[0], alias.name))
                if f"{base[0]}.{alias.name}" in packages:
                    bound[alias.asname or alias.name] = f"{base[0]}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:  # `import a.b` binds `a`; `import a.b as c` binds `c` to `a.b`
                top = alias.name.split(".")[0]
                bound[alias.asname or top] = alias.name if alias.asname else top
    for node in ast.walk(tree):
        dotted = None
        if isinstance(node, ast.Attribute):
            chain = []
            inner: ast.expr = node
            while isinstance(inner, ast.Attribute):
                chain.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id in bound:
                dotted = ".".join([bound[inner.id], *reversed(chain)])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("opencode_nb."):
            dotted = node.value
        pieces = dotted.split(".") if dotted else []
        # A path in a string that names a module (`sys.modules["opencode_nb.checkpoint.undo"]`) means the module,
        # even where the package binds a function of that name over it.
        skip = modules if isinstance(node, ast.Constant) else set()
        found |= {(".".join(pieces[:i]), pieces[i]) for i in range(1, len(pieces))
                  if ".".join(pieces[: i + 1]) not in skip}
    return found


def used_from_outside(modules: dict[str, tuple[ast.Module, str]]) -> set[tuple[str, str]]:
    """(package, name) for every name of a package that something outside the package reaches."""
    packages = {package for module, (_, package) in modules.items() if module == package}
    found: set[tuple[str, str]] = set()
    for module, (tree, package) in modules.items():
        found |= {(p, name) for p, name in uses(tree, package, packages, set(modules))
                  if module != p and not module.startswith(f"{p}.")}
    for text in caller_sources():
        try:
            parsed = compile(text, "<caller>", "exec", ast.PyCF_ONLY_AST | PyCF_ALLOW_TOP_LEVEL_AWAIT)
        except SyntaxError:  # prose, or a cell of magics: its `from opencode_nb.x import y` lines and dotted paths
            for where, names in re.findall(r"from (opencode_nb[\w.]*) import \(?([\w, \n]+)\)?", text):
                found |= {(where, name.strip()) for name in names.split(",")}
            for path in re.findall(r"opencode_nb(?:\.\w+)+", text):
                pieces = path.split(".")
                found |= {(".".join(pieces[:i]), pieces[i]) for i in range(1, len(pieces))}
        else:
            found |= uses(parsed, "", packages, set(modules))
    return found


def test_every_name_a_face_re_exports_has_a_caller_outside_its_package():
    """The test pinning each face (test_exports.py) is no caller: a name only it names is one nobody uses."""
    modules = sources()
    used = used_from_outside(modules)
    assert {f"{p}.{name}" for p, names in faces(modules).items() for name in names if (p, name) not in used} == set()
