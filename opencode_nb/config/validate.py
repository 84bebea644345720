"""Checking configuration against the schema, with messages a person can act on.

Unknown keys are dropped per source, before merging, so each file gets its own warning with its own
line and a guess at the key meant. Permission values are checked by hand, because a union error from
pydantic would not say which pattern is wrong. Everything else is pydantic's job; each of its errors
becomes `file:line key.path: what is wrong and what to write`, naming the file the value came from, and all
of them are reported together.
"""

from __future__ import annotations

import difflib
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError
from .layer import KeyPath, Layer, Origins, dotted
from .merge import is_permission
from .schema import ACTIONS, Config

MODEL_HINT = "use provider/model, e.g. anthropic/claude-sonnet-4-5"
SECRETS_EXAMPLE = "e.g. secrets: {env: [DATABASE_URL, AWS_*]}"


def drop_unknown(layer: Layer, unknown: list[ConfigError] | None = None) -> list[str]:
    """Remove keys the schema does not know from the layer; one note per key, with a hint.

    Sections left empty in YAML (`agent:` or `build:` with nothing under them) become empty mappings.

    Args:
        unknown: receives each unknown key as a `ConfigError` too, so a reading that fails reports them in
            the same message as its errors (every mistake at once, not the unknown keys after the rest is fixed).
    """
    return _drop(layer.data, Config, (), layer, [] if unknown is None else unknown)


def _drop(node: dict[str, Any], model: type[BaseModel], path: KeyPath, layer: Layer,
          unknown: list[ConfigError]) -> list[str]:
    notes: list[str] = []
    fields = _written_keys(model)
    for key in list(node):
        here = (*path, key)
        if key not in fields:
            guess = _guess(key, list(fields))
            notes.append(f"{layer.at(here)}: unknown key {dotted(here)}{guess}; it is ignored")
            unknown.append(ConfigError(layer.source, line=layer.lines.get(here), key=dotted(here),
                                       hint=f"unknown key{guess}; it is ignored"))
            del node[key]
            continue
        section = _section(model, fields[key])
        value = node[key]
        if section is not None and value is None and model.model_fields[fields[key]].default_factory is not None:
            node[key] = value = {}  # `agent:` written with nothing under it yet
        if section is None or not isinstance(value, dict):
            continue
        submodel, keyed = section
        if not keyed:
            notes += _drop(value, submodel, here, layer, unknown)
            continue
        for name, entry in value.items():
            if entry is None:
                value[name] = entry = {}  # `build:` under `agent:`, with nothing under it
            if isinstance(entry, dict):
                notes += _drop(entry, submodel, (*here, name), layer, unknown)
    return notes


def _written_keys(model: type[BaseModel]) -> dict[str, str]:
    """The keys a file may write for `model`, each with its field: the alias where a field has one (`maxSteps`)."""
    return {info.alias or name: name for name, info in model.model_fields.items()}


def _guess(key: str, known: list[str]) -> str:
    folded = {k.lower(): k for k in known}
    wanted = key.lower().replace("-", "_")
    if wanted in folded:
        return f" (did you mean {folded[wanted]}?)"
    close = difflib.get_close_matches(wanted, list(folded), n=1, cutoff=0.6)
    if close:
        return f" (did you mean {folded[close[0]]}?)"
    return f" (known keys: {', '.join(known)})"


def _section(model: type[BaseModel], key: str) -> tuple[type[BaseModel], bool] | None:
    """The schema of a nested section: (Model, False) for a `Model` field, (Model, True) for `dict[str, Model]`."""
    annotation = model.model_fields[key].annotation
    for candidate in (annotation, *get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate, False
        if get_origin(candidate) is dict:
            value_type = get_args(candidate)[1]
            if isinstance(value_type, type) and issubclass(value_type, BaseModel):
                return value_type, True
    return None


def action_problems(merged: dict[str, Any], origins: Origins) -> list[ConfigError]:
    """One error per action in `permission` and `agent.<name>.permission` that is not allow, ask or deny,
    naming the file and line it came from, its full key path and the allowed values."""
    sections: list[KeyPath] = [("permission",)] if merged.get("permission") is not None else []
    agents = merged.get("agent")
    if isinstance(agents, dict):
        sections += [("agent", name, "permission") for name, entry in agents.items()
                     if isinstance(entry, dict) and entry.get("permission") is not None]
    problems: list[ConfigError | None] = []
    for section in sections:
        value: Any = merged
        for key in section:
            value = value[key]
        if isinstance(value, dict):
            for permission, entry in value.items():
                here = (*section, permission)
                problems.append(_check_name(str(permission), entry, here, origins))
                if isinstance(entry, dict):
                    problems += [_check_action(action, (*here, pattern), origins, nested=True)
                                 for pattern, action in entry.items()]
                else:
                    problems.append(_check_action(entry, here, origins, nested=False))
        else:
            problems.append(_check_action(value, section, origins, nested=False))
    return [p for p in problems if p is not None]


PERMISSION_NAMES = frozenset({
    "read", "write", "edit", "list", "glob", "grep", "bash", "webfetch", "todowrite", "todoread", "question", "task",
    "plan_enter", "plan_exit", "python", "variables", "notebook_read", "notebook_edit", "notebook_run", "skill",
    "external_directory", "git_internals", "agent_config", "doom_loop", "network", "mcp", "sandbox", "live", "hook",
    "task_status", "task_cancel",
    "patch", "multiedit",
})
"""The built-in permission names (tool/reserved.py's, which config may not import; tests/config holds the two
equal). A rule key close to one of them but not it is a misspelling; any other name may be an MCP server's or
a person's tool and is left alone."""


def _check_name(name: str, entry: Any, path: KeyPath, origins: Origins) -> ConfigError | None:
    """A permission key that misspells a built-in permission (`bassh`): its rule would restrict nothing."""
    folded = name.casefold()
    if folded in PERMISSION_NAMES or any(c in name for c in "*?"):
        return None
    close = difflib.get_close_matches(folded, sorted(PERMISSION_NAMES), n=1, cutoff=0.8)
    if not close:
        return None
    source, line = _origin(origins, path)
    restricts = entry in ("ask", "deny") or (isinstance(entry, dict) and any(a in ("ask", "deny")
                                                                              for a in entry.values()))
    return ConfigError(source, line=line, key=dotted(path), restricting=restricts, hint=(
        f"{name!r} is not a built-in permission: did you mean {close[0]}? As written the rule restricts nothing "
        "(a tool of an MCP server or an @tool function is named by its own tool name)"))


def _check_action(value: Any, path: KeyPath, origins: Origins, *, nested: bool) -> ConfigError | None:
    if isinstance(value, str) and value in ACTIONS:
        return None
    allowed = ", ".join(ACTIONS)
    if value is None:
        hint = f"is empty: write one of {allowed}"
    elif isinstance(value, str | bool | int | float):
        hint = f"{value!r} is not one of {allowed}"
    elif nested:
        hint = (f"expected one of {allowed}, got a {_kind(value)}; patterns nest one level only, "
                'e.g. bash: {"git *": allow}')
    else:
        hint = f'expected one of {allowed} or a mapping of patterns to actions (e.g. {{"git *": allow}}), ' \
               f"got a {_kind(value)}"
    source, line = _origin(origins, path)
    meant = difflib.get_close_matches(value, ACTIONS, n=1, cutoff=0.5) if isinstance(value, str) else []
    if meant:
        hint += f" (did you mean {meant[0]}?)"
    # Not knowing what it meant, a wrong action is taken for a restriction: the rules read before lack it.
    return ConfigError(source, line=line, key=dotted(path), hint=hint, restricting=True)


RESTRICTING_SECTIONS = frozenset({"permission", "permissions", "sandbox", "secrets"})
RESTRICTING_AGENT_KEYS = frozenset({"permission", "permissions", "tools", "disable"})


def restricts(path: KeyPath) -> bool:
    """Whether a wrong value at `path` is in something that restricts agents (a rule, a tool switch, the sandbox,
    the secrets kept from tools): the configuration read before would lack what it meant to take away."""
    if path[:1] and path[0] in RESTRICTING_SECTIONS:
        return True
    return len(path) >= 3 and path[0] == "agent" and path[2] in RESTRICTING_AGENT_KEYS


def validation_problems(merged: dict[str, Any], origins: Origins, *,
                        skip_permissions: bool = False) -> tuple[Config | None, list[ConfigError]]:
    """The merged data as a `Config`, or None and one error per invalid value.

    Args:
        skip_permissions: leave out errors inside permission sections (`action_problems` reported them).
    """
    try:
        return Config.model_validate(merged), []
    except ValidationError as exc:
        return None, error_problems(exc, merged, origins, skip_permissions=skip_permissions)


def error_problems(exc: ValidationError, data: dict[str, Any], origins: Origins, *,
                   skip_permissions: bool = False) -> list[ConfigError]:
    """One `ConfigError` per invalid value of `data` (a `Config`'s, or another section's such as the managed
    file's), each at the file and line `origins` gives it, with what the value should be."""
    errors = exc.errors()
    by_path: dict[KeyPath, list[Any]] = {}
    for error in errors:
        path = _data_path(data, error["loc"])
        if error["type"] == "missing":
            path = (*path, str(error["loc"][-1]))
        by_path.setdefault(path, []).append(error)
    problems: list[ConfigError] = []
    for path, group in by_path.items():
        if skip_permissions and is_permission(path):
            continue
        # A union reports one error per member at the same place: say what each member would accept.
        first = group[0]
        alternatives = [e for e in group if e["type"] != "missing"]
        source, line = _origin(origins, path)
        problems.append(ConfigError(source, line=line, key=dotted(path), hint=_describe(first, alternatives, path),
                                    restricting=restricts(path)))
    return problems


def _data_path(data: Any, loc: tuple[Any, ...]) -> KeyPath:
    """Pydantic puts union member names into `loc`; keep only the steps that exist in the data."""
    path: list[str] = []
    node = data
    for step in loc:
        if isinstance(node, dict) and str(step) in node:
            path.append(str(step))
            node = node[str(step)]
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            path.append(str(step))
            node = node[step]
    return tuple(path)


def _origin(origins: Origins, path: KeyPath) -> tuple[str | None, int | None]:
    """Where the value at `path` was written, or else its nearest written ancestor."""
    while path:
        if path in origins:
            return origins[path]
        path = path[:-1]
    return None, None


_EXPECTED = {
    "string_type": "text", "int_type": "a whole number", "int_parsing": "a whole number",
    "int_from_float": "a whole number", "float_type": "a number", "float_parsing": "a number",
    "bool_type": "true or false", "bool_parsing": "true or false", "dict_type": "a mapping",
    "model_type": "a mapping", "model_attributes_type": "a mapping", "list_type": "a list",
}
_BOUNDS = {"greater_than": ("greater than", "gt"), "greater_than_equal": ("at least", "ge"),
           "less_than": ("less than", "lt"), "less_than_equal": ("at most", "le")}
_EXAMPLES = {
    "instructions": "e.g. instructions: [STYLE.md, docs/*.md]",
    "template": "a command needs a template: the body of its markdown file, or `template: ...`",
    "tools": "e.g. tools: {bash: false}",
    "env": f"names or patterns with *, {SECRETS_EXAMPLE}",
    "secrets": SECRETS_EXAMPLE,
}


def _describe(error: Any, alternatives: list[Any], path: KeyPath) -> str:
    kind, value, ctx = error["type"], error.get("input"), error.get("ctx") or {}
    example = _EXAMPLES.get(path[-1], "") if path else ""
    if kind == "missing":
        return f"is required; {example}" if example else "is required"
    if kind == "literal_error":
        allowed = [a.strip().strip("'\"") for a in str(ctx.get("expected", "")).replace(" or ", ", ").split(",")]
        if path == ("sandbox",) and value is True:  # YAML reads `on` and `yes` as true
            return ("on/yes/true is not a sandbox mode: write auto (confine where possible) or required "
                    "(never run unconfined)")
        if path[-1:] == ("review",) and value is True:
            return "on/yes/true is not a review mode: write cells (review each cell change) or off"
        meant = difflib.get_close_matches(value, allowed, n=1, cutoff=0.6) if isinstance(value, str) else []
        guess = f" (did you mean {meant[0]}?)" if meant else ""
        return f"{value!r} is not one of {', '.join(a for a in allowed if a)}{guess}"
    if kind == "string_pattern_mismatch":
        if path[:2] == ("secrets", "env"):
            return f"{value!r} is not an environment variable name: write a name or a pattern with *, {SECRETS_EXAMPLE}"
        return f"{value!r} is not a model id: {MODEL_HINT}"
    if kind in _BOUNDS:
        words, name = _BOUNDS[kind]
        limit = ctx.get(name)
        if isinstance(limit, int | float):
            return f"{value!r} must be {words} {limit:g}"
    expected = [_EXPECTED[e["type"]] for e in alternatives if e["type"] in _EXPECTED]
    if expected:
        shown = repr(value) if isinstance(value, str | int | float | bool) or value is None else f"a {_kind(value)}"
        hint = f"expected {' or '.join(dict.fromkeys(expected))}, got {shown}"
        if "text" in expected and isinstance(value, int | float | bool):
            hint += "; put it in quotes"
        return f"{hint}; {example}" if example else hint
    return f"{value!r}: {error['msg']}"


def _kind(value: Any) -> str:
    return {dict: "mapping", list: "list", str: "string", bool: "boolean", int: "number", float: "number"}.get(
        type(value), type(value).__name__)
