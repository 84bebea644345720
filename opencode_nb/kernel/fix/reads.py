"""Which names a cell reads from the namespace, and which names a cell binds: read from its text, never run.

A cell reads a name when it loads it before binding it itself: `df = load(); df["x"]` reads `load`, not
`df`; `total = total + 1` reads `total`. Statements are walked in the order Python evaluates them (an
assignment's value before its targets, a loop's iterable before its variable), and names local to a function,
lambda or comprehension are the scope's own. A function the cell defines reads, when called, the names its
body uses that are not its own: they count as the cell's reads unless the cell bound them before the `def`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable


def parse(source: str) -> ast.Module | None:
    """The cell as Python, or None when it is not (a syntax error, or IPython syntax left untransformed)."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def reads(tree: ast.Module) -> list[str]:
    """The names the cell loads before binding them, in the order it first reads them."""
    walker = _Reads()
    for statement in tree.body:
        walker.visit(statement)
    return list(walker.read)


def binds(tree: ast.Module) -> set[str]:
    """The names a cell binds at its top level (assignments, imports, defs, loop variables, `with … as`)."""
    found: set[str] = set()
    for node in _top_level(tree.body):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update(_imported(node))
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            found.add(node.name)
    return found


def _top_level(body: Iterable[ast.stmt]) -> Iterable[ast.AST]:
    """Every node of the module's own scope: nested function, class, lambda and comprehension bodies left out."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(node.decorator_list)
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    names = []
    for alias in node.names:
        if alias.name == "*":
            continue
        names.append(alias.asname or alias.name.split(".")[0])
    return names


class _Reads(ast.NodeVisitor):
    """Walks the module scope in evaluation order, with a stack of nested scopes' own names."""

    def __init__(self) -> None:
        self.read: dict[str, None] = {}
        self.bound: set[str] = set()
        self.scopes: list[set[str]] = []

    # ---------------------------------------------------------------------------------------- names

    def _load(self, name: str) -> None:
        if any(name in scope for scope in self.scopes) or name in self.bound:
            return
        self.read.setdefault(name, None)

    def _store(self, name: str) -> None:
        (self.scopes[-1] if self.scopes else self.bound).add(name)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self._load(node.id)
        else:
            self._store(node.id)

    # ---------------------------------------------------------------------------------------- order

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self.visit(node.target)
        elif not isinstance(node.target, ast.Name):
            self.visit(node.target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self._load(node.target.id)
            self._store(node.target.id)
        else:
            self.visit(node.target)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.visit(node.target)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self.visit(node.target)
        for child in [*node.body, *node.orelse]:
            self.visit(child)

    visit_AsyncFor = visit_For

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self.visit(item.optional_vars)
        for child in node.body:
            self.visit(child)

    visit_AsyncWith = visit_With

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        for name in _imported(node):
            self._store(name)

    visit_ImportFrom = visit_Import

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self._store(node.name)
        for child in node.body:
            self.visit(child)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.pattern is not None:
            self.visit(node.pattern)
        if node.name:
            self._store(node.name)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self._store(node.name)

    # ---------------------------------------------------------------------------------------- scopes

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for child in [*node.decorator_list, *node.args.defaults, *(d for d in node.args.kw_defaults if d)]:
            self.visit(child)
        self._store(node.name)
        self._scope(_parameters(node.args), node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        for child in [*node.args.defaults, *(d for d in node.args.kw_defaults if d)]:
            self.visit(child)
        self._scope(_parameters(node.args), [node.body])

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for child in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
            self.visit(child)
        self._store(node.name)
        self._scope(set(), node.body)

    def _scope(self, own: set[str], body: list[ast.stmt] | list[ast.expr]) -> None:
        local = own | {n.id for stmt in body for n in ast.walk(stmt)
                       if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        self.scopes.append(local)
        for child in body:
            self.visit(child)
        self.scopes.pop()

    def _comprehension(self, generators: list[ast.comprehension], results: list[ast.expr]) -> None:
        self.visit(generators[0].iter)  # evaluated in the enclosing scope
        self.scopes.append(set())
        for i, generator in enumerate(generators):
            if i:
                self.visit(generator.iter)
            self.visit(generator.target)
            for condition in generator.ifs:
                self.visit(condition)
        for result in results:
            self.visit(result)
        self.scopes.pop()

    def visit_ListComp(self, node: ast.ListComp) -> None:
        self._comprehension(node.generators, [node.elt])

    def visit_SetComp(self, node: ast.SetComp) -> None:
        self._comprehension(node.generators, [node.elt])

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> None:
        self._comprehension(node.generators, [node.elt])

    def visit_DictComp(self, node: ast.DictComp) -> None:
        self._comprehension(node.generators, [node.key, node.value])


def _parameters(args: ast.arguments) -> set[str]:
    names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    names.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    return names
