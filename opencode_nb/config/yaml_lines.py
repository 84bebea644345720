"""YAML text to plain data plus the line of every key path.

The document is composed once: the node tree carries the marks (lines) and is then constructed into
values by the same loader, so data and line map always agree. Mapping keys are kept as the text written
(`on:` stays the name "on", not YAML 1.1's boolean), which is what a permission pattern or an agent
name means. A parser error becomes a `ConfigError` with the file, line and column.

Limits, each a `ConfigError` naming the file and line rather than a `MemoryError`, a `RecursionError` or
a hang: a file is at most `MAX_CONFIG_BYTES`; collections nest at most `MAX_CONFIG_DEPTH` levels (checked
while composing, before PyYAML's recursive composer goes deep); and aliases may not make the document
larger than `MAX_CONFIG_VALUES` values once expanded, nor refer to themselves. An alias costs nothing to
parse, since it is the anchored node again, but everything after the parser (line map, merging,
substitution, validation) walks the data as a tree: nine levels of ten aliases are a billion values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import ConstructorError

from ..errors import ConfigError
from .layer import KeyPath

_MERGE_TAG = "tag:yaml.org,2002:merge"

MAX_CONFIG_BYTES = 1024 * 1024
"""Largest config, agent or command file read. Real ones are a few kilobytes; a long agent prompt tens."""
MAX_CONFIG_DEPTH = 64
"""Deepest nesting of mappings and lists. The schema's deepest key (provider options) is under ten."""
MAX_CONFIG_VALUES = 100_000
"""Most values a document may hold with every alias expanded; a real config holds hundreds."""


def check_size(size: int, path: Path, what: str = "a configuration file") -> None:
    """Refuse a file of `size` past MAX_CONFIG_BYTES, in the one wording every reader of these files uses.

    Raises:
        ConfigError: `size` is past the limit.
    """
    if size > MAX_CONFIG_BYTES:
        raise ConfigError(path, hint=f"refused: it is {size / 2**20:.1f} MiB, and {what} may be at most "
                                     f"{MAX_CONFIG_BYTES // 2**20} MiB")


class _LimitError(yaml.MarkedYAMLError):
    """A document past one of the limits above (a YAMLError, so the loader's cleanup stays the same)."""


class _Loader(yaml.SafeLoader):
    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[tuple[str, int]] = []
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_CONFIG_DEPTH:
                raise _LimitError(problem=f"refused: it nests more than {MAX_CONFIG_DEPTH} levels deep",
                                  problem_mark=self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[Any, Any]:  # type: ignore[override]
        if not isinstance(node, yaml.MappingNode):
            # every node the composer makes has an `id` ("scalar", "sequence"); the stubs give it to each subclass
            raise ConstructorError(None, None, f"expected a mapping, found {node.id}",  # type: ignore[attr-defined]
                                   node.start_mark)
        seen: set[str] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != _MERGE_TAG:
                if key_node.value in seen:
                    self.duplicates.append((key_node.value, key_node.start_mark.line + 1))
                seen.add(key_node.value)
        self.flatten_mapping(node)  # `<<: *defaults` merge keys
        mapping: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise ConstructorError(None, None, "a key must be a name, not a list or mapping",
                                       key_node.start_mark)
            mapping[key_node.value] = self.construct_object(value_node, deep=deep)
        return mapping


def parse_yaml(text: str, path: Path, *, first_line: int = 1) -> tuple[dict[str, Any], dict[KeyPath, int], list[str]]:
    """Data, the line of each key path and notes (duplicate keys) for one YAML document.

    `first_line` is the file line the text starts on (markdown frontmatter starts on line 2).

    Raises:
        ConfigError: the text is not YAML, or its top level is not a mapping.
    """
    data, node, duplicates = _load(text, path, first_line)
    offset = first_line - 1
    notes = [f"{path}:{line + offset}: duplicate key {key!r}; the later value wins"
             for key, line in duplicates]
    if data is None or node is None:  # no node, no data: an empty document
        return {}, {}, notes
    if not isinstance(data, dict):
        raise ConfigError(path, line=first_line,
                          hint=f"must be a mapping of keys to values (`model: openai/gpt-5`), not a {_kind(data)}")
    lines: dict[KeyPath, int] = {}
    _walk(node, (), lines, offset, set())
    return data, lines, notes


def load_yaml(text: str, path: Path) -> Any:
    """Any YAML document (a scripted provider's list of turns, say) under the same limits as a config file.

    Raises:
        ConfigError: the text is not YAML, or is past a limit.
    """
    return _load(text, path, 1)[0]


def _load(text: str, path: Path, first_line: int) -> tuple[Any, yaml.Node | None, list[tuple[str, int]]]:
    check_size(len(text), path)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _check_expansion(node)
        data = loader.construct_document(node) if node is not None else None
    except _LimitError as exc:
        line = exc.problem_mark.line + first_line if exc.problem_mark is not None else None
        raise ConfigError(path, line=line, hint=str(exc.problem)) from None
    except yaml.YAMLError as exc:
        raise _syntax_error(exc, path, first_line) from None
    finally:
        loader.dispose()
    return data, node, loader.duplicates


def _check_expansion(root: yaml.Node) -> None:
    """Count the values of the document as if every alias were written out, without writing them out.

    A node's expanded size is computed once (aliases make the tree a graph that shares nodes), depth first
    and without recursion; meeting a node that is still open means an alias inside its own anchor.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, closing = stack.pop()
        key = id(node)
        children = _children(node)
        if closing:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in children)
            if sizes[key] > MAX_CONFIG_VALUES:
                raise _LimitError(problem=f"refused: it holds more than {MAX_CONFIG_VALUES:,} values, counting "
                                          "each alias (*name) as all the values it repeats",
                                  problem_mark=node.start_mark)
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise _LimitError(problem="refused: an alias (*name) refers to the value that contains it, which "
                                      "would repeat forever", problem_mark=node.start_mark)
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _walk(node: yaml.Node, path: KeyPath, lines: dict[KeyPath, int], offset: int, active: set[int]) -> None:
    if id(node) in active:  # a recursive alias: its lines are already recorded above
        return
    active.add(id(node))
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = (*path, str(key_node.value))
            lines[key] = key_node.start_mark.line + 1 + offset
            _walk(value_node, key, lines, offset, active)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            key = (*path, str(i))
            lines[key] = item.start_mark.line + 1 + offset
            _walk(item, key, lines, offset, active)
    active.discard(id(node))


def _syntax_error(exc: yaml.YAMLError, path: Path, first_line: int) -> ConfigError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    hint = f"invalid YAML: {problem}"
    if mark is not None:
        hint += f" (column {mark.column + 1})"
    context, start = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context and start is not None and mark is not None and start.line != mark.line:
        hint += f", {context} that starts on line {start.line + first_line}"
    if "mapping values are not allowed" in problem:
        hint += "; a value containing ': ' needs quotes, e.g. description: \"Reviews: style and bugs\""
    elif "found character '\\t'" in problem:
        hint += "; indent with spaces, not tabs"
    line = mark.line + first_line if mark is not None else None
    return ConfigError(path, line=line, hint=hint)


def _kind(value: Any) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(
        type(value), type(value).__name__)
