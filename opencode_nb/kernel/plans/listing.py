"""`%agent plan [list]`: the project's plans, newest first, and how far each has got, read from the plan
files and their progress files alone, so listing never runs or changes a step."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...session.reminders import PLAN_DIR
from ...tool.support.plandoc import PlanError, parse_plan, progress_path, short
from ..magics import listing
from .store import read_progress, session_plan_id

if TYPE_CHECKING:
    from .host import PlanHost


def list_plans(agent: PlanHost) -> dict[str, str]:
    """`%agent plan [list]`: the project's plans, newest first, with how far each has got."""
    ws = agent.workspace()
    folder = ws.root / PLAN_DIR
    files = sorted(folder.glob("*.md"), key=lambda f: f.stat().st_mtime, reverse=True) if folder.is_dir() else []
    if not files:
        return listing.text(f"No plans yet in {PLAN_DIR}/: ask the plan agent for one (%%agent --agent plan).")
    current = session_plan_id(ws, agent.session_id) if agent.session_id else None
    known = {name for s in ws.sessions.list(None) for name in (s.slug, s.id)}
    rows = []
    for file in files:
        plan_id = file.stem
        path = f"{PLAN_DIR}/{file.name}"
        try:
            doc = parse_plan(file.read_text(encoding="utf-8"), path)
        except (PlanError, OSError, UnicodeDecodeError) as exc:
            rows.append([plan_id, "", "", str(exc), ""])
            continue
        progress = read_progress(ws.root / progress_path(path), plan_id)
        done = sum(s.done for s in doc.steps)
        ran = [(int(n), p) for n, p in progress.steps.items() if p.runs and p.started_at]
        latest = max(ran, key=lambda item: item[1].started_at or 0.0, default=None)
        last = ""
        if latest is not None:
            number, step = latest
            last = f"step {number} {step.status} {listing.ago(step.started_at or 0.0)}"
        mark = "▶ " if plan_id == current else ""
        rows.append([mark + plan_id, short(doc.title, 50), f"{done}/{len(doc.steps)} ticked",
                     last or ("not run yet" if plan_id in known else "no session here"),
                     str(sum(p.runs for _, p in ran))])
    return listing.table(["plan", "title", "steps", "latest", "runs"], rows,
                         caption=f"Plans in {PLAN_DIR}/ (▶ the current session's)")

