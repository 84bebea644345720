"""`%agent hooks`: every command hook and plugin, where it came from, whether it may run, and how it last ran.

Plain text, as `%agent mcp` is: the listing is read in a cell or a terminal alike.
"""

from __future__ import annotations

from .layer import Hooks


def describe(hooks: Hooks | None, *, config_files: str = "opencode.yaml") -> str:
    """The listing; reads the files project hooks run (their approval holds only while those are unchanged)."""
    if hooks is None:
        return (f"No hooks or plugins are configured. Add `hooks:` (Claude Code's format) or `plugin:` to "
                f"{config_files}; `%agent help` and the README's Hooks section show both.")
    lines: list[str] = []
    states = hooks.commands.states()
    if states:
        lines.append(f"Command hooks ({len(states)}), in the order they are combined:")
        for state in states:
            entry = state.entry
            where = f"{entry.source}:{entry.line}" if entry.line else str(entry.source or "in code")
            matcher = f" [{entry.matcher}]" if entry.matcher not in (None, "", "*") else ""
            if not entry.runs:
                status = "never runs here (an event or hook type this program does not fire)"
            elif state.approved:
                status = "approved (project)" if entry.project else "yours"
            else:
                status = "waits for your approval: it runs once you approve it at its first event"
            lines.append(f"  {entry.event}{matcher}: {entry.command}")
            lines.append(f"      from {where} · {status} · timeout {entry.timeout_s:g} s · "
                         f"last: {state.last or 'not run yet'}")
    else:
        lines.append("No command hooks.")
    plugins = hooks.plugins.describe()
    if plugins:
        lines.append(f"Plugins ({len(plugins)}), in the order their hooks are called:")
        for info in plugins:
            offers = [*(f"hook {h}" for h in info.hooks), *(f"tool {t}" for t in info.tools)]
            lines.append(f"  {info.name} ({info.source}) — {', '.join(offers) or 'offers nothing'}")
            lines.append(f"      {info.where} · {info.outcome}")
            lines += [f"      note: {note}" for note in info.notes]
    else:
        lines.append("No plugins.")
    return "\n".join(lines)
