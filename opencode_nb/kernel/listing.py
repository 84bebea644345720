"""What the `%agent` subcommands print: sessions, agents, models, permissions and config, as HTML tables
with a plain-text twin (so a terminal or a saved notebook reads them too)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..views.markdown import escape

if TYPE_CHECKING:
    from ..workspace import Workspace

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
    return {"text/html": f"<pre>{escape(value)}</pre>", "text/plain": value}


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
    """This notebook's sessions, newest first, each followed by its children (indented)."""
    roots = [s for s in ws.sessions.list(None) if everything or not notebook or s.notebook == notebook]
    rows: list[list[str]] = []

    def add(session: Any, depth: int) -> None:
        agent, tokens = ws.sessions.activity(session.id)
        mark = "▶ " if session.id == current else ""
        rows.append([mark + "    " * depth + session.id, "    " * depth + session.title, agent, f"{tokens:,}",
                     f"${session.cost:.4f}", ago(session.updated_at)])
        for child in ws.sessions.children(session.id):
            add(child, depth + 1)

    for root in roots[:50]:
        add(root, 0)
    if not rows:
        return text("No sessions yet for this notebook. Run a prompt with %%agent to start one.")
    caption = "Sessions of this notebook (▶ current); continue one with %agent resume ID"
    return table(["id", "title", "agent", "tokens", "cost", "last activity"], rows, caption=caption)


def agents(ws: Workspace) -> dict[str, str]:
    default = ws.agents.default.name
    rows = [[("* " if a.name == default else "") + a.listed_as, a.mode, a.model or "(default)", a.description or ""]
            for a in ws.agents.list()]
    return table(["agent", "mode", "model", "description"], rows, caption="Agents (* default); use @name or --agent")


def models(ws: Workspace, current: str | None) -> dict[str, str]:
    chosen = current or ws.config.model or "(built-in default)"
    rows = [[("* " if m == chosen else "") + m] for m in ws.providers.models()]
    return table(["model"], rows, caption=f"Known models (* in use: {chosen}); set one with "
                                          "%config Agent.model = \"provider/model\" or --model")


def permissions(ws: Workspace, agent: str, session_id: str | None, *, mode: str, policy: str,
                reason: str) -> dict[str, str]:
    info = ws.agents.get(agent)
    rows = [[r.permission, r.pattern, r.action] for r in info.permission]
    out = table(["permission", "pattern", "action"], rows,
                caption=f"Rules of @{agent}, in order: the last matching rule wins")
    grants = ws.permissions.grants(session_id) if session_id else []
    grant_rows = [[g.agent, g.permission, g.pattern] for g in grants]
    extra = table(["agent", "permission", "pattern"], grant_rows,
                  caption="“Always” approvals given in this session") if grant_rows else text(
        "No “always” approvals in this session yet.")
    who = (f"Nobody is present ({reason}): asks are answered by policy {policy!r}."
           if mode == "headless" else "Asks wait for your answer in the notebook.")
    return {"text/html": out["text/html"] + extra["text/html"] + f"<p>{escape(who)}</p>",
            "text/plain": "\n\n".join([out["text/plain"], extra["text/plain"], who])}


def config(ws: Workspace) -> dict[str, str]:
    import yaml

    data = mask(ws.config.model_dump(exclude_defaults=True, mode="json"))
    sources = "\n".join(f"# {s}" for s in getattr(ws.loaded, "sources", []))
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True) if data else "{}\n"
    return text(f"# resolved configuration of {ws.directory}\n{sources}\n{body}".replace("\n\n", "\n"))


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
