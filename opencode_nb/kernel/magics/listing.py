"""What the `%agent` subcommands print: sessions, agents, models, permissions and config, as HTML tables
with a plain-text twin (so a terminal or a saved notebook reads them too)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ... import secrets
from ...views.markdown import escape
from ...views.prose import prose_bundle

if TYPE_CHECKING:
    from ...agent.info import AgentInfo
    from ...config.skills import Skill
    from ...workspace import Workspace
    from .preflight import ModelChoice

SECRET_WORDS = ("key", "token", "secret", "password")


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], *, caption: str = "") -> dict[str, str]:
    rows = [[str(c) for c in row] for row in rows]
    head = "".join(f"<th style='text-align:left'>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td style='text-align:left'>{escape(c)}</td>" for c in row) + "</tr>"
                   for row in rows)
    html = (f"<table class='ocnb-table'>{f'<caption>{escape(caption)}</caption>' if caption else ''}"
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    lines = [caption] if caption else []
    lines.append("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip())
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return {"text/html": html, "text/plain": "\n".join(lines)}


def text(value: str) -> dict[str, str]:
    return prose_bundle(value)


def ago(stamp: float) -> str:
    seconds = max(0.0, time.time() - stamp)
    if seconds < 90:
        return f"{int(seconds)}s ago"
    if seconds < 5400:
        return f"{int(seconds // 60)}m ago"
    if seconds < 86400 * 2:
        return f"{int(seconds // 3600)}h ago"
    return datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")


def sessions(ws: Workspace, *, notebook: str | None, current: str | None, everything: bool = False) -> dict[str, str]:
    """This notebook's sessions (`everything`: the whole store's), newest first, each followed by its children,
    indented under it.

    A session nothing was ever written to is left out (unless it is the current one, just made by
    `%agent new`): it has nothing to resume.
    """
    roots = [s for s in ws.sessions.list(None) if everything or not notebook or s.notebook == notebook]
    rows: list[list[str]] = []

    def add(session: Any, depth: int) -> None:
        agent, tokens = ws.sessions.activity(session.id)
        # A child that never answered (its model could not start) is still its agent's session.
        agent = agent or ws.sessions.current_agent(session.id) or ""
        mark = "▶ " if session.id == current else ""
        # No-break spaces: an HTML table would collapse ordinary ones, and the children would not look indented.
        indent = "\u00a0\u00a0" * (depth - 1) + "└\u00a0" if depth else ""
        rows.append([mark + indent + session.id, session.title, agent, f"{tokens:,}", f"${session.cost:.4f}",
                     ago(ws.sessions.last_activity(session.id))])
        for child in ws.sessions.children(session.id):
            add(child, depth + 1)

    shown = (r for r in roots if r.id == current or not ws.sessions.is_empty(r.id))
    for root in itertools.islice(shown, 50):
        add(root, 0)
    whose = "in this project" if everything else "for this notebook"
    if not rows:
        return text(f"No sessions yet {whose}. Run a prompt with %%agent to start one.")
    caption = (f"{'All sessions of this project' if everything else 'Sessions of this notebook'} (▶ current, └ a "
               "subagent's session under its parent); continue one with %agent resume ID"
               + ("" if everything else "; %agent sessions --all lists every notebook's"))
    return table(["id", "title", "agent", "tokens", "cost", "last activity"], rows, caption=caption)


def session_state(ws: Workspace, session_id: str) -> str:
    """How the session's latest run ended (done, error, stopped, rejected), or running while one runs: what
    `%agent show` heads its transcript with."""
    from ...session.models import AssistantMessage
    from ..ending import status_of

    if ws.loop.busy(session_id):
        return "running"
    last = next((m.message for m in reversed(ws.sessions.messages(session_id))
                 if isinstance(m.message, AssistantMessage)), None)
    return status_of(last, stop_requested=False) if last is not None else "done"


def agents(ws: Workspace) -> dict[str, str]:
    default = ws.agents.default.name
    rows = [[("* " if a.name == default else "") + a.listed_as, a.mode, a.model or "(default)", a.description or ""]
            for a in ws.agents.list()]
    return table(["agent", "mode", "model", "description"], rows, caption="Agents (* default); use @name or --agent")


def models(ws: Workspace, in_use: ModelChoice, default: ModelChoice) -> dict[str, str]:
    """The models known here, which one the next prompt uses and why, which one is the default, and what
    each provider still needs (a key, a server) before its models can answer."""
    rows = []
    for model in dict.fromkeys([in_use.model, default.model, *ws.providers.models()]):
        marks = ("▶" if model == in_use.model else " ") + ("*" if model == default.model else " ")
        rows.append([f"{marks} {model}", ws.providers.status(model.partition("/")[0])])
    caption = "Models (▶ in use, * default)"
    why = f"In use: {in_use.model} ({in_use.why})."
    if default.model != in_use.model or default.why != in_use.why:
        why += f" Default: {default.model} ({default.why})."
    how = ("Choose one with --model provider/model on a prompt, %config Agent.model = \"provider/model\" for this "
           "notebook, or model: provider/model in opencode.yaml. %agent help shows a local server's opencode.yaml.")
    out = table(["model", "provider"], rows, caption=caption)
    return {"text/html": out["text/html"] + f"<p>{escape(why)}<br>{escape(how)}</p>",
            "text/plain": f"{out['text/plain']}\n\n{why}\n{how}"}


EXCEPTIONS_SHOWN = 12
"""Patterns listed beside a permission's decision; the rest are in the rules table under it."""


def permissions(ws: Workspace, agent: str, session_id: str | None, *, mode: str, policy: str,
                reason: str) -> dict[str, str]:
    """What `agent` may do: the decision in force per permission first, then the rules behind it in the order
    they are checked (which later rule overrides which), the session's "always" approvals, and who answers
    an ask."""
    from ...permission.explain import decisions, overridden_by
    from ...permission.rules import merge

    info = ws.agents.get(agent)
    session = ws.sessions.get(session_id) if session_id else None
    rules = list(merge(info.permission, session.permission if session is not None else []))
    grants = ws.permissions.grants(session_id) if session_id else []
    granted = [g.rule() for g in grants if g.agent == agent]
    rows = []
    for decision in decisions([*rules, *granted]):
        name = "* (any other)" if decision.permission == "*" else decision.permission
        if decision.named_only:
            name += " (only rules naming it)"
        shown = [f"{o.pattern} → {o.action}" + (" (your “always”)" if o.index >= len(rules) else "")
                 for o in decision.exceptions]
        if len(shown) > EXCEPTIONS_SHOWN:
            shown = [*shown[:EXCEPTIONS_SHOWN], f"… {len(shown) - EXCEPTIONS_SHOWN} more in the rules below"]
        basis = "no rule covers every call: ask" if decision.index is None else decision.action + (
            f" ({origin})" if decision.index < len(rules) and (origin := ws.agents.origin(rules[decision.index]))
            else "")
        rows.append([name, basis, " · ".join(shown)])
    verdicts = table(["permission", "decision", "except for (in order; the last that matches wins)"], rows,
                     caption=f"What @{agent} may do: the decision in force for each permission")
    overridden = overridden_by(rules)
    rule_rows = [[str(i + 1), r.permission, r.pattern, r.action, ws.agents.origin(r) or "this session",
                  f"overridden by rule {by + 1}" if (by := overridden[i]) is not None else ""]
                 for i, r in enumerate(rules)]
    behind = table(["#", "permission", "pattern", "action", "from", ""], rule_rows,
                   caption=f"Rules of @{agent} behind it, in the order they are checked: for each call the last "
                           "matching rule wins (its permission and its pattern both match); nothing matching asks")
    grant_rows = [[g.agent, g.permission, g.pattern] for g in grants]
    extra = table(["agent", "permission", "pattern"], grant_rows,
                  caption="“Always” approvals given in this session (they allow on top of the rules)") \
        if grant_rows else text("No “always” approvals in this session yet.")
    who = (f"Nobody is present ({reason}): asks are answered by policy {policy!r}."
           if mode == "headless" else "Asks wait for your answer in the notebook.")
    if mode != "headless" and (approvers := ws.approvers) is not None:
        who += f" {approvers.note}"
    parts = [verdicts, behind, extra]
    held = ws.permissions.managed
    if held is not None and held.strict:
        parts.append(table(["permission", "pattern", "action"],
                           [[r.permission, r.pattern, r.action] for r in held.strict],
                           caption=f"The administrator's rules ({held.path}), checked before all of the above: their "
                                   "deny refuses and their ask asks a person, whatever the rules, an “always” or a "
                                   "policy say"))
    return {"text/html": "".join(p["text/html"] for p in parts) + f"<p>{escape(who)}</p>",
            "text/plain": "\n\n".join([*(p["text/plain"] for p in parts), who])}


def config(ws: Workspace, settings: list[tuple[str, Any, str]], notices: Sequence[str] = ()) -> dict[str, str]:
    """The effective configuration: every value in force, defaults included, secrets masked, and where each one
    came from; then the files read and the notebook's own settings (`%config Agent.*`).

    Args:
        settings: (name, value, source) of each `%config Agent.*` setting.
        notices: lines to put first (the files changed but could not be read again, say).
    """
    from ...config.explain import explain
    from ...sandbox.status import sandbox_status
    from ...session.model_choice import DEFAULT_MODEL

    fallbacks = {
        "model": (DEFAULT_MODEL, "used when no prompt, %config or agent chooses one"),
        "small_model": (None, "the model of the prompt"),
        "default_agent": (ws.agents.default.name, "the first primary agent, build unless disabled"),
        "permission": (None, "each agent's built-in rules; %agent permissions lists them"),
    }
    from ...mcp.entries import masked

    entries = [(entry.path, mask(entry.value, entry.path[-1]) if (shown := masked(entry.path, entry.value)) is None
                else shown, entry.source)
               for entry in explain(ws.loaded, fallbacks=fallbacks)]
    lines = [f"# {n}" for n in notices]
    lines.append(f"# effective configuration of {ws.directory} (secrets masked; # where each value came from)")
    lines += _yaml_lines(entries)
    sources = [str(s) for s in ws.loaded.sources]
    lines.append("# files read: " + (", ".join(sources) if sources else "none (no opencode.yaml here or in "
                                                                          f"{ws.loaded.global_dir})"))
    lines.append("# OS sandbox of shell commands: " + sandbox_status(ws.sandbox.mode, ws.sandbox.binary).line)
    lines.append("# " + ws.store_notice())
    lines.append("# " + ws.approvals_notice())
    lines.append("# this notebook (%config Agent.*):")
    lines += [f"#   Agent.{name} = {value!r}    ({source})" for name, value, source in settings]
    return text(secrets.redact("\n".join(lines)))  # a secret under a key that does not look like one


def _yaml_lines(entries: list[tuple[tuple[str, ...], Any, str]]) -> list[str]:
    """`key: value  # source` lines, the parents of nested keys written once above their children."""
    import yaml

    lines: list[str] = []
    opened: tuple[str, ...] = ()
    rows: list[tuple[str, str]] = []
    for path, value, source in entries:
        common = 0
        while common < min(len(opened), len(path) - 1) and opened[common] == path[common]:
            common += 1
        for depth in range(common, len(path) - 1):
            rows.append(("  " * depth + f"{_key(path[depth])}:", ""))
        opened = path[:-1]
        shown = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=10**6).strip()
        shown = shown.removesuffix("\n...").removesuffix("...").strip()
        rows.append(("  " * (len(path) - 1) + f"{_key(path[-1])}: {shown}", source))
    width = min(60, max(len(r[0]) for r in rows)) if rows else 0
    lines += [f"{left.ljust(width)}  # {why}" if why else left for left, why in rows]
    return lines


def _key(name: str) -> str:
    import yaml

    return yaml.safe_dump(name, allow_unicode=True).strip().removesuffix("...").strip()


def mask(value: Any, key: str = "") -> Any:
    """Secrets shown as set or not, never their value."""
    if isinstance(value, dict):
        return {k: mask(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [mask(v, key) for v in value]
    if isinstance(value, str) and any(word in key.lower() for word in SECRET_WORDS):
        if value.startswith("{env:"):
            return value
        return "•••• (set)" if value else ""
    return value


def skills(ws: Workspace, agent: AgentInfo) -> dict[str, str]:
    """`%agent skills`: each skill in force, where it came from and what `agent`'s rules say about loading it;
    then the skills a nearer one shadows, and the `SKILL.md` files that cannot be used and why."""
    from ...config.skills import invocation
    from ...permission.rules import evaluate
    from ...views.shorten import shorten

    found = ws.skills.current()

    def where(skill: Skill) -> str:
        return ws.skills.where(skill, ws.root)

    rows = [[s.name, shorten(s.description, 100), where(s),
             evaluate("skill", s.name, agent.permission).action if s.model_invocable else "not offered"]
            for s in found.skills]
    notes = [f"{s.name}: {invocation(s)}" for s in found.skills if invocation(s)]
    notes += [f"shadowed: {where(s.skill)} (by {where(s.by)})" for s in found.shadowed]
    notes += [f"not loaded: {problem}" for problem in found.problems]
    if not rows:
        out = text(f"No skills here. A skill is a folder holding a SKILL.md (frontmatter name and description, then "
                   f"the instructions): .opencode/skills/NAME/, .claude/skills/NAME/ or .agents/skills/NAME/ in the "
                   f"project, or skills/NAME/ in {ws.loaded.global_dir}.")
    else:
        out = table(["skill", "description", "from", f"@{agent.name}"], rows,
                    caption="Skills, which agents load with the skill tool when a task calls for them (the last "
                            "column: what the rules say)")
    if not notes:
        return out
    return {"text/html": out["text/html"] + "".join(f"<p>{escape(n)}</p>" for n in notes),
            "text/plain": "\n".join([out["text/plain"], "", *notes])}
