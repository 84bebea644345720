"""The Python plugin interface: what a plugin is, which hooks it may have, what each is given and may answer.

A plugin is an object named in the configuration (`plugin: ["my_pkg.hooks:plugin"]`, or `my_pkg.hooks` for
the module itself) or installed under the entry point group `opencode_nb.plugins`:

    # pyproject.toml of the plugin's package
    [project.entry-points."opencode_nb.plugins"]
    guard = "my_pkg.hooks:plugin"

The object may be an instance, a class (made with no arguments), a module, or a mapping of hook names to
functions. Its hooks are methods (or functions, or keys) named after OpenCode's plugin hooks, with the dots as
underscores; a mapping may use either spelling:

    OpenCode's hook        Python name            given, by parameter name        may answer
    tool.execute.before    tool_execute_before    call, args                      new args (a dict), Deny, None
    tool.execute.after     tool_execute_after     call, args, result              a new ToolResult, None
    permission.ask         permission_ask         request                         "allow", "deny", "ask", None
    chat.message           chat_message           session_id, agent, text         extra text (str or list), None
    session.idle           session_idle           session_id                      None
    event                  event                  event                           None

A hook takes any of its names, in any order (`def tool_execute_after(self, result)` is fine), and is checked
when the plugin loads: a parameter no hook passes, or a near miss of a hook's name (`tool_execute_befor`),
is said then, not at the first call. Plain and `async` functions both work. A plain hook runs inline on the
event loop, so one that waits on the network should be `async`; an `async` one that runs past its timeout is
given up on.

    from dataclasses import replace
    from opencode_nb.hook.plugin_api import Deny

    class Guard:
        def tool_execute_before(self, call, args):
            if call.tool == "bash" and "git push" in args.get("command", ""):
                raise Deny("pushing is left to people here")

        async def permission_ask(self, request):
            return "allow" if request.permission == "read" else None

        def tool_execute_after(self, result):
            return replace(result, output=result.output.replace("secret", "******"))

    plugin = Guard()

What each answer does:

- `tool_execute_before` sees the arguments the model sent, as changed by the plugins loaded before it. It
  returns new arguments, changes the dict in place, or stops the call with `Deny(reason)` (raised or
  returned): the model reads the reason as the call's result. The changed arguments are what the tool
  validates and what the permission rules are asked about, so a plugin cannot pass anything around them.
- `tool_execute_after` sees a finished call's `ToolResult` (frozen: answer `dataclasses.replace(result,
  output=...)`) and may replace its title, output (what the model reads) or metadata.
- `permission_ask` answers an ask before a person sees it, for policy engines. Of several plugins' answers
  the strictest wins: deny, then ask (a person must decide), then allow; None leaves it to the others. It
  answers asks only: a deny rule is never reached by it, and the managed policy decides before it.
- `chat_message` sees each new message of a person's and may add text to it (context the model reads).
- `session_idle` is told that a session finished its run and waits for the person.
- `event` sees every bus event (`opencode_nb.bus.Event`; `event.type` is `session.idle`, `tool.started`, …).
  It must be quick: it runs for every streamed piece of text.

A plugin may also offer tools through a `tools` attribute: a list, or a function returning one, of `Tool`
instances or of functions (marked with `@tool` or plain), offered as a notebook's `@tool` functions are.

A hook that raises (other than `Deny`) or answers something it may not is reported to the person once per
plugin and hook, and the call goes on as if the plugin had answered nothing; later calls still reach it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["ANSWERS", "HOOKS", "Answer", "Deny", "HookSpec", "ToolCall", "hook_name"]

Answer = Literal["allow", "deny", "ask"]
"""What `permission_ask` may answer (or None)."""
ANSWERS: tuple[Answer, ...] = ("allow", "deny", "ask")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """Which call a tool hook is about; the arguments are passed beside it, since plugins change them."""

    tool: str
    """Our tool's name: `bash`, `edit`, `write`, `notebook_edit`, an MCP tool's `server_tool`, a function's."""
    session_id: str
    call_id: str
    """The model's id of the call: the same in `tool_execute_before` and `tool_execute_after`."""
    agent: str | None = None
    """The agent that made the call (`build`, `plan`, a subagent's name)."""


class Deny(Exception):
    """`tool_execute_before`'s refusal of a call; `reason` is what the model reads instead of a result."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class HookSpec:
    """One hook: its OpenCode name and the parameters a plugin's function may take, by name."""

    name: str
    """As OpenCode spells it: `tool.execute.before`."""
    parameters: tuple[str, ...]


HOOKS: dict[str, HookSpec] = {
    "tool_execute_before": HookSpec("tool.execute.before", ("call", "args")),
    "tool_execute_after": HookSpec("tool.execute.after", ("call", "args", "result")),
    "permission_ask": HookSpec("permission.ask", ("request",)),
    "chat_message": HookSpec("chat.message", ("session_id", "agent", "text")),
    "session_idle": HookSpec("session.idle", ("session_id",)),
    "event": HookSpec("event", ("event",)),
}
"""Python name → spec, in the order `describe` lists them."""

_BY_DOTTED = {spec.name: python for python, spec in HOOKS.items()}


def hook_name(name: str) -> str | None:
    """The Python name of a hook spelt either way (`tool.execute.before` or `tool_execute_before`), else None."""
    if name in HOOKS:
        return name
    return _BY_DOTTED.get(name)
