"""Loading Python plugins and calling their hooks (`plugin_api.py` is what a plugin's author reads).

    plugins = Plugins.load(config.plugin, report=warn)     # never raises: what failed is reported
    args, denial = await plugins.tool_execute_before(ToolCall("bash", session_id, call_id), args)
    result = await plugins.tool_execute_after(call, result, args=args)
    answer = await plugins.permission_ask(request)        # "allow" | "deny" | "ask" | None

This is a small registry of our own rather than pluggy, though pluggy is the library pytest and tox are built
on. Our hooks are called from the asyncio loop and may be `async`, which pluggy does not know: a
`firstresult` hook stops at the first implementation that returns anything, and an `async` one returns a
coroutine at once, so one async policy plugin would silence every plugin after it. pluggy also ends a whole
hook call when one implementation raises, where a failing plugin must cost nothing but its own answer; and a
plugin would have to mark each method with our `HookimplMarker`, where here it is named like OpenCode's hook
and needs nothing of ours but `Deny`. What pluggy does well and we keep: a hook's function takes only the
arguments it names, and is checked against the hook when it loads.

Hooks of several plugins run one after the other, in the order the plugins loaded (the configuration's list,
then entry points): `tool_execute_before` and `tool_execute_after` pass what one plugin changed to the next.
A plugin's failure is reported once per plugin and hook through `report` (a warning the person sees), counted
in `describe`, and treated as no answer; a call never fails because of a plugin.
"""

from __future__ import annotations

import asyncio
import difflib
import importlib
import importlib.metadata
import inspect
import logging
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..config.schema import PLUGIN_SPEC
from ..tool.base import Tool, ToolResult
from ..tool.person import MARK, FunctionTool, ToolOptions, signature_text
from ..tool.reserved import is_reserved, why_reserved
from ..tool.support.docstrings import sections
from .plugin_api import ANSWERS, HOOKS, Answer, Deny, HookSpec, ToolCall, hook_name

if TYPE_CHECKING:
    from ..bus import Event
    from ..permission.events import PermissionRequest

__all__ = ["DEFAULT_TIMEOUT_S", "ENTRY_POINT_GROUP", "PluginDenial", "PluginFunctionTool", "PluginInfo", "Plugins",
           "Report"]

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "opencode_nb.plugins"
DEFAULT_TIMEOUT_S = 60.0
"""Seconds an `async` hook may take before it is given up on (as a command hook's default timeout)."""

_INSTALLED: dict[tuple[str, ...], Any] = {}


def installed_entry_points() -> Any:
    """The group's entry points, read once per search path: listing them reads every installed distribution's
    metadata (tens of milliseconds), and a process opens many workspaces."""
    key = tuple(sys.path)
    found = _INSTALLED.get(key)
    if found is None:
        found = _INSTALLED[key] = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    return found


Report = Callable[[str], None]
"""Tells the person something went wrong with a plugin; called once per problem."""

_STRICTNESS: dict[str, int] = {"allow": 1, "ask": 2, "deny": 3}


def valid_spec(spec: str) -> bool:
    """Whether `spec` can name a plugin: a module, and optionally after a colon an object in it."""
    return PLUGIN_SPEC.fullmatch(spec) is not None


@dataclass(frozen=True, slots=True)
class PluginDenial:
    """A call a plugin's `tool_execute_before` refused: the model reads `reason`; the card names `plugin`."""

    plugin: str
    reason: str

    def __str__(self) -> str:
        return self.reason


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """One plugin as `%agent hooks` lists it."""

    name: str
    """The configuration's spec (`my_pkg.hooks:plugin`) or the entry point's name."""
    source: Literal["config", "entry point"]
    where: str
    """The spec and the file it was loaded from, or the entry point and its distribution."""
    hooks: tuple[str, ...]
    """Its hooks, in OpenCode's spelling (`tool.execute.before`)."""
    tools: tuple[str, ...]
    loaded: bool
    outcome: str
    """"not loaded: …", "not called yet", or its calls, failures and last notable answer."""
    notes: tuple[str, ...] = ()
    """What loading found wrong but got past: a hook that does not fit, a misspelt one, a refused tool."""


class _Plugin:
    """A loaded (or failed) plugin and what became of its calls."""

    __slots__ = ("calls", "failures", "hooks", "last", "last_at", "name", "notes", "problem", "source", "tools",
                 "where")

    def __init__(self, name: str, source: Literal["config", "entry point"], where: str) -> None:
        self.name = name
        self.source: Literal["config", "entry point"] = source
        self.where = where
        self.hooks: list[str] = []
        self.tools: list[Tool[Any]] = []
        self.notes: list[str] = []
        self.problem: str | None = None
        self.calls = 0
        self.failures = 0
        self.last: str | None = None
        self.last_at = 0.0

    def noted(self, outcome: str) -> None:
        self.last = outcome
        self.last_at = time.time()

    def info(self) -> PluginInfo:
        if self.problem is not None:
            outcome = f"not loaded: {self.problem}"
        elif not self.calls:
            outcome = "not called yet"
        else:
            outcome = f"{self.calls} call{'s' * (self.calls != 1)}"
            if self.failures:
                outcome += f", {self.failures} failed"
            if self.last is not None:
                outcome += f"; last: {self.last} at {time.strftime('%H:%M:%S', time.localtime(self.last_at))}"
        return PluginInfo(self.name, self.source, self.where, tuple(HOOKS[h].name for h in self.hooks),
                          tuple(t.id for t in self.tools), self.problem is None, outcome, tuple(self.notes))


class _Impl:
    """One plugin's function for one hook, and which of the hook's arguments it takes."""

    __slots__ = ("function", "hook", "names", "plugin", "spec")

    def __init__(self, plugin: _Plugin, hook: str, function: Callable[..., Any], names: tuple[str, ...]) -> None:
        self.plugin = plugin
        self.hook = hook
        self.spec = HOOKS[hook]
        self.function = function
        self.names = names


class Plugins:
    """The loaded plugins; with none, every hook returns at once with what it was given."""

    def __init__(self, *, report: Report | None = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self._report = report
        self.timeout_s = timeout_s
        self._plugins: list[_Plugin] = []
        self._impls: dict[str, list[_Impl]] = {hook: [] for hook in HOOKS}
        self._tools: dict[str, Tool[Any]] = {}
        self._reported: set[tuple[str, str]] = set()
        self._pending: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------------------------------ loading

    @classmethod
    def load(cls, specs: Sequence[str], *, entry_points: bool = True, report: Report,
             timeout_s: float = DEFAULT_TIMEOUT_S, withheld: Mapping[str, str] | None = None) -> Plugins:
        """Import the configuration's plugins, then those installed under `opencode_nb.plugins`.

        Never raises: a plugin that cannot be imported, or a hook that does not fit, is reported and listed
        by `describe`, and the others load.

        Args:
            specs: `module` or `module:object` (the configuration's `plugin` list), loaded in this order.
            entry_points: also load the installed plugins (an entry point naming a spec of `specs` loads once).
            report: tells the person about each problem.
            timeout_s: how long an `async` hook may take.
            withheld: specs not to import, with why (a project's plugin the person has not approved): they are
                listed by `describe` as not loaded.
        """
        plugins = cls(report=report, timeout_s=timeout_s)
        held = dict(withheld or {})
        seen: set[int] = set()
        for spec in specs:
            if spec in held:
                plugins._add_failed(spec, "config", f"config: {spec}", held[spec], say=False)
            else:
                plugins._load_spec(spec, seen)
        if entry_points:
            plugins._load_entry_points(set(specs), seen)
        return plugins

    def _load_spec(self, spec: str, seen: set[int]) -> None:
        where = f"config: {spec}"
        if not valid_spec(spec):
            self._add_failed(spec, "config", where, "not a module or module:object name (e.g. my_pkg.hooks:plugin)")
            return
        module_name, _, attribute = spec.partition(":")
        try:
            module = importlib.import_module(module_name)
            found: Any = module
            for part in attribute.split(".") if attribute else ():
                found = getattr(found, part)
        except Exception as exc:
            self._add_failed(spec, "config", where, _error_text(exc))
            return
        file = getattr(module, "__file__", None)
        self._add(spec, "config", f"{where} ({file})" if file else where, found, seen)

    def _load_entry_points(self, specs: set[str], seen: set[int]) -> None:
        try:
            found = installed_entry_points()
        except Exception as exc:  # a broken distribution's metadata
            self._say(f"Installed plugins could not be listed: {_error_text(exc)}")
            return
        done: set[tuple[str, str]] = set()
        for entry in found:
            if entry.value in specs or (entry.name, entry.value) in done:
                continue
            done.add((entry.name, entry.value))
            dist = getattr(entry, "dist", None)
            where = f"entry point {entry.name} = {entry.value}"
            if dist is not None:
                where += f" of {dist.name} {dist.version}"
            try:
                loaded = entry.load()
            except Exception as exc:
                self._add_failed(entry.name, "entry point", where, _error_text(exc))
                continue
            self._add(entry.name, "entry point", where, loaded, seen)

    def _add_failed(self, name: str, source: Literal["config", "entry point"], where: str, problem: str, *,
                    say: bool = True) -> None:
        plugin = _Plugin(name, source, where)
        plugin.problem = problem
        self._plugins.append(plugin)
        if say:
            self._say(f"Plugin {name} was not loaded: {problem}")

    def _add(self, name: str, source: Literal["config", "entry point"], where: str, found: Any,
             seen: set[int]) -> None:
        """Register the plugin `found` names; nothing of it is registered when reading it fails midway."""
        if id(found) in seen:
            return  # named twice (the configuration and an entry point, or two specs): its hooks run once
        seen.add(id(found))
        plugin = _Plugin(name, source, where)
        try:
            if isinstance(found, type):
                try:
                    found = found()
                except Exception as exc:
                    self._add_failed(name, source, where, f"its class could not be made without arguments: "
                                                          f"{_error_text(exc)}")
                    return
            impls = [_Impl(plugin, hook, function, names) for hook, function in self._hooks_of(plugin, found)
                     if (names := self._fit(plugin, hook, function)) is not None]
            tools = self._tools_of(plugin, found)
        except Exception as exc:  # an object that fails when looked at (a property, `dir`, `__getattr__`)
            self._add_failed(name, source, where, f"it could not be read: {_error_text(exc)}")
            return
        self._plugins.append(plugin)
        for impl in impls:
            plugin.hooks.append(impl.hook)
            self._impls[impl.hook].append(impl)
        for made in tools:
            self._tools[made.id] = made
            plugin.tools.append(made)
        for note in plugin.notes:
            self._say(f"Plugin {name}: {note}")

    def _hooks_of(self, plugin: _Plugin, found: Any) -> list[tuple[str, Callable[..., Any]]]:
        """The plugin's hook functions, in `HOOKS` order; misspelt or uncallable ones become notes."""
        hooks: dict[str, Callable[..., Any]] = {}
        if isinstance(found, Mapping):
            for key, value in found.items():
                hook = hook_name(str(key))
                if hook is None:
                    if key != "tools":
                        plugin.notes.append(f"{key!r} is not a hook{_did_you_mean(str(key))}; it is ignored")
                elif not callable(value):
                    plugin.notes.append(f"{key!r} is not a function; it is ignored")
                else:
                    hooks[hook] = value
        else:
            for hook in HOOKS:
                value = _attribute(found, hook)
                if value is None:
                    continue
                if callable(value):
                    hooks[hook] = value
                else:
                    plugin.notes.append(f"{hook} is not a function; it is ignored")
            for attribute in dir(found):
                if attribute.startswith("_") or attribute in HOOKS or attribute == "tools":
                    continue
                meant = difflib.get_close_matches(attribute, list(HOOKS), n=1, cutoff=0.85)
                if meant and callable(_attribute(found, attribute)):
                    plugin.notes.append(f"{attribute} is not a hook (did you mean {meant[0]}?); it is never called")
        return [(hook, hooks[hook]) for hook in HOOKS if hook in hooks]

    def _fit(self, plugin: _Plugin, hook: str, function: Callable[..., Any]) -> tuple[str, ...] | None:
        """The hook's arguments `function` takes, by name; None (and a note) when it could not be called."""
        spec = HOOKS[hook]
        try:
            signature = inspect.signature(function)
        except (TypeError, ValueError):
            return spec.parameters  # no signature to read (a builtin): it is given everything
        names: list[str] = []
        for parameter in signature.parameters.values():
            if parameter.kind is parameter.VAR_KEYWORD:
                return spec.parameters
            if parameter.kind is parameter.VAR_POSITIONAL:
                continue
            if parameter.name in spec.parameters and parameter.kind is not parameter.POSITIONAL_ONLY:
                names.append(parameter.name)
            elif parameter.default is parameter.empty:
                plugin.notes.append(_misfit(spec, parameter.name, parameter.kind is parameter.POSITIONAL_ONLY))
                return None
        return tuple(names)

    def _tools_of(self, plugin: _Plugin, found: Any) -> list[Tool[Any]]:
        """The tools the plugin offers under names no other plugin's tool has."""
        offered = found.get("tools") if isinstance(found, Mapping) else _attribute(found, "tools")
        if offered is None:
            return []
        try:
            if callable(offered) and not isinstance(offered, Tool):
                offered = offered()
            items = [offered] if isinstance(offered, Tool) else list(offered)
        except Exception as exc:
            plugin.notes.append(f"its tools could not be listed: {_error_text(exc)}")
            return []
        tools: dict[str, Tool[Any]] = {}
        for item in items:
            made = self._tool_of(plugin, item)
            if made is None:
                continue
            if made.id in self._tools or made.id in tools:
                plugin.notes.append(f"its tool {made.id} is not offered: a tool offered before it has that name")
                continue
            tools[made.id] = made
        return list(tools.values())

    def _tool_of(self, plugin: _Plugin, item: Any) -> Tool[Any] | None:
        if isinstance(item, Tool):
            if is_reserved(item.id):
                plugin.notes.append(f"its tool {item.id} is not offered: {why_reserved(item.id)}")
                return None
            return item
        if not callable(item):
            plugin.notes.append(f"{item!r} in its tools is neither a Tool nor a function; it is ignored")
            return None
        try:
            return PluginFunctionTool.marked(item, plugin=plugin.name)
        except (TypeError, ValueError) as exc:
            name = getattr(item, "__name__", repr(item))
            plugin.notes.append(f"its function {name} is not offered as a tool: {exc}")
            return None

    # ------------------------------------------------------------------------------------------ calling

    def has(self, hook: str) -> bool:
        """Whether any plugin has `hook` (either spelling): the caller may skip building its arguments."""
        name = hook_name(hook)
        return name is not None and bool(self._impls[name])

    async def tool_execute_before(self, call: ToolCall, args: dict[str, Any]
                                  ) -> tuple[dict[str, Any], PluginDenial | None]:
        """The arguments to run the call with, and the first plugin's refusal if one refused it.

        Each plugin gets its own copy of the arguments as the plugins before it left them, so one that fails
        halfway through changing them leaves nothing of its change behind.
        """
        impls = self._impls["tool_execute_before"]
        if not impls:
            return args, None
        current = args
        for impl in impls:
            proposed = dict(current)
            done, value = await self._call(impl, {"call": call, "args": proposed}, deny=True)
            if not done:
                continue
            if isinstance(value, Deny):
                reason = value.reason.strip() or f"the plugin {impl.plugin.name} refused it"
                impl.plugin.noted(f"tool.execute.before refused {call.tool}: {reason}")
                return current, PluginDenial(impl.plugin.name, reason)
            if value is not None and not isinstance(value, dict):
                self._bad_answer(impl, value, "new arguments as a dict, Deny(reason), or None")
                continue
            if value is not None:
                proposed = value
            if proposed != current:
                impl.plugin.noted(f"tool.execute.before changed the arguments of {call.tool}")
            current = proposed
        return current, None

    async def tool_execute_after(self, call: ToolCall, result: ToolResult, *, args: dict[str, Any] | None = None
                                 ) -> ToolResult:
        """The result as the plugins left it (the same object when none changed it)."""
        impls = self._impls["tool_execute_after"]
        if not impls:
            return result
        for impl in impls:
            done, value = await self._call(impl, {"call": call, "args": dict(args or {}), "result": result})
            if not done or value is None or value is result:
                continue
            if not isinstance(value, ToolResult):
                self._bad_answer(impl, value, "a ToolResult (dataclasses.replace(result, ...)) or None")
                continue
            impl.plugin.noted(f"tool.execute.after changed the result of {call.tool}")
            result = value
        return result

    async def permission_ask(self, request: PermissionRequest) -> Answer | None:
        """The strictest answer the plugins give an ask (deny, then ask, then allow); None: none answered."""
        impls = self._impls["permission_ask"]
        answer: Answer | None = None
        for impl in impls:
            done, value = await self._call(impl, {"request": request})
            if not done or value is None:
                continue
            if value not in ANSWERS:
                self._bad_answer(impl, value, '"allow", "deny", "ask" or None')
                continue
            impl.plugin.noted(f"permission.ask answered {value} to {request.permission} "
                              f"{', '.join(request.patterns)[:80]}")
            if answer is None or _STRICTNESS[value] > _STRICTNESS[answer]:
                answer = value
            if answer == "deny":
                break  # nothing is stricter
        return answer

    async def chat_message(self, session_id: str, text: str, *, agent: str | None = None) -> list[str]:
        """Text the plugins add to a person's new message, in plugin order."""
        impls = self._impls["chat_message"]
        added: list[str] = []
        for impl in impls:
            done, value = await self._call(impl, {"session_id": session_id, "agent": agent, "text": text})
            if not done or value is None:
                continue
            extra = [value] if isinstance(value, str) else value
            if not isinstance(extra, list | tuple) or not all(isinstance(t, str) for t in extra):
                self._bad_answer(impl, value, "text, a list of texts, or None")
                continue
            extra = [t for t in extra if t.strip()]
            if extra:
                impl.plugin.noted("chat.message added text to a message")
                added.extend(extra)
        return added

    async def session_idle(self, session_id: str) -> None:
        for impl in self._impls["session_idle"]:
            await self._call(impl, {"session_id": session_id})

    def event(self, event: Event) -> None:
        """Every bus event, to each plugin's `event` hook; an `async` one is left running on the loop.

        For the bus (`bus.subscribe("*", plugins.event, watch_only=True)`): it never raises.
        """
        for impl in self._impls["event"]:
            impl.plugin.calls += 1
            try:
                value = impl.function(event=event) if impl.names else impl.function()
            except Exception as exc:
                self._failed(impl, exc)
                continue
            if inspect.isawaitable(value):
                self._keep_running(impl, value)

    def tools(self) -> list[Tool[Any]]:
        """The plugins' tools, for the registry (`ToolRegistry.register`); names are unique among them."""
        return list(self._tools.values())

    def describe(self) -> list[PluginInfo]:
        return [plugin.info() for plugin in self._plugins]

    def close(self) -> None:
        """Stop the `async` event hooks still running (the workspace is closing)."""
        for task in list(self._pending):
            task.cancel()

    # ------------------------------------------------------------------------------------------ inside

    async def _call(self, impl: _Impl, given: dict[str, Any], *, deny: bool = False) -> tuple[bool, Any]:
        """Call one plugin's hook: (True, its answer), or (False, None) when it failed (reported once).

        `deny`: the hook may refuse with `Deny`, raised or returned; elsewhere that is a wrong answer.
        """
        impl.plugin.calls += 1
        try:
            value = impl.function(**{name: given[name] for name in impl.names})
            if value is not None and inspect.isawaitable(value):
                limit = asyncio.timeout(self.timeout_s)
                try:
                    async with limit:
                        value = await value
                except TimeoutError:
                    if not limit.expired():
                        raise  # the plugin's own TimeoutError, a failure like any other
                    self._timed_out(impl)
                    return False, None
        except Deny as refusal:
            value = refusal
        except Exception as exc:
            self._failed(impl, exc)
            return False, None
        if isinstance(value, Deny) and not deny:
            self._bad_answer(impl, value, "an answer of its own; Deny is for tool.execute.before")
            return False, None
        return True, value

    def _keep_running(self, impl: _Impl, awaitable: Any) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            if inspect.iscoroutine(awaitable):
                awaitable.close()
            self._once(impl, f"Plugin {impl.plugin.name}: its async event hook was not run: an event came from "
                             "outside the event loop (make it a plain function to see those)")
            return

        async def finish() -> None:
            try:
                async with asyncio.timeout(self.timeout_s):
                    await awaitable
            except TimeoutError:
                self._timed_out(impl)
            except Exception as exc:
                self._failed(impl, exc)

        task = loop.create_task(finish())
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    def _failed(self, impl: _Impl, exc: BaseException) -> None:
        impl.plugin.failures += 1
        impl.plugin.noted(f"{impl.spec.name} failed: {_error_text(exc)}")
        self._once(impl, f"Plugin {impl.plugin.name}: its {impl.spec.name} hook failed with {_error_text(exc)}"
                         f"{_where(exc)}. The run goes on as if it had answered nothing; later failures of this "
                         "hook are counted in %agent hooks, not reported again.")

    def _timed_out(self, impl: _Impl) -> None:
        impl.plugin.failures += 1
        impl.plugin.noted(f"{impl.spec.name} timed out")
        self._once(impl, f"Plugin {impl.plugin.name}: its {impl.spec.name} hook did not answer within "
                         f"{self.timeout_s:g} s and was given up on; the run goes on without its answer.")

    def _bad_answer(self, impl: _Impl, value: Any, expected: str) -> None:
        impl.plugin.failures += 1
        shown = repr(value)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        impl.plugin.noted(f"{impl.spec.name} answered {shown}")
        self._once(impl, f"Plugin {impl.plugin.name}: its {impl.spec.name} hook answered {shown}, which it may "
                         f"not (it may answer {expected}); the answer is ignored.")

    def _once(self, impl: _Impl, message: str) -> None:
        key = (impl.plugin.name, impl.hook)
        if key in self._reported:
            return
        self._reported.add(key)
        self._say(message)

    def _say(self, message: str) -> None:
        if self._report is None:
            log.warning("%s", message)
            return
        try:
            self._report(message)
        except Exception:
            log.exception("reporting a plugin's problem failed: %s", message)


class PluginFunctionTool(FunctionTool):
    """A plugin's function as a tool: called as a person's `@tool` function is outside a kernel (in this process,
    asking before each call unless a rule names it), and described to the model as the plugin's, not as a
    function the person wrote in their notebook."""

    def __init__(self, function: Callable[..., Any], *, plugin: str, **options: Any) -> None:
        super().__init__(function, **options)
        self.plugin = plugin
        marked: ToolOptions = getattr(function, MARK, None) or ToolOptions()
        first, found = sections(inspect.getdoc(function) or "")
        text = (marked.description or first).strip()
        returns = " ".join(line.strip() for line in found.get("Returns", found.get("Return", []))).strip()
        if returns and not marked.description:
            text += f"\n\nReturns: {returns}"
        note = f"(A function of the plugin {plugin}, `{signature_text(function)}`; what it returns is the result.)"
        self._plugin_description = f"{text}\n\n{note}" if text else note

    @property
    def description(self) -> str:
        return self._plugin_description


def _attribute(found: Any, name: str) -> Any:
    """`getattr` that takes a property which raises for absent."""
    try:
        return getattr(found, name, None)
    except Exception:
        return None


def _did_you_mean(name: str) -> str:
    spelt = [*HOOKS, *(spec.name for spec in HOOKS.values())]
    meant = difflib.get_close_matches(name, spelt, n=1, cutoff=0.6)
    return f" (did you mean {meant[0]}?)" if meant else f" (hooks: {', '.join(s.name for s in HOOKS.values())})"


def _misfit(spec: HookSpec, parameter: str, positional_only: bool) -> str:
    python = hook_name(spec.name)
    if positional_only:
        return (f"its {python} takes `{parameter}` positionally only; hooks are given their arguments by name, "
                "so it is never called")
    return (f"its {python} takes `{parameter}`, which {spec.name} does not pass (it passes "
            f"{', '.join(spec.parameters)}, by name), so it is never called")


def _error_text(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _where(exc: BaseException) -> str:
    """`, at hooks.py:12`: the innermost frame of the traceback, which is in the plugin's code or below it."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f", at {last.filename}:{last.lineno}"
