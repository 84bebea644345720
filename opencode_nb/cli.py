"""The `opencode-nb` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from .errors import OpencodeNbError
from .version import __version__
from .workspace import Workspace


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="opencode-nb",
        description="Multi-agent AI environment for Jupyter notebooks.",
    )
    parser.add_argument("--version", action="version", version=f"opencode-nb {__version__}")
    parser.add_argument(
        "-C", "--directory", default=".", help="project directory to work in (default: the current one)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    agents = sub.add_parser("agents", help="list the agents resolved for the project directory")
    agents.add_argument("--all", action="store_true", help="include hidden agents")
    agents.add_argument("--rules", action="store_true", help="show each agent's permission rules")
    demo = sub.add_parser("demo", help="run a whole agent session on a sample project (offline by default)")
    demo.add_argument("--model", help="use a real model, e.g. anthropic/claude-sonnet-4-6 (needs its API key)")
    demo.add_argument("--keep", action="store_true", help="keep the project copy and session store afterwards")
    demo.add_argument("--ask", action="store_true",
                      help="answer each permission ask yourself (by default the demo approves them)")
    demo.add_argument("--notebook", nargs="?", const="", metavar="PATH",
                      help="execute the quickstart notebook headless and write quickstart.executed.ipynb in the "
                           "current directory (or PATH, written beside it)")
    config = sub.add_parser("config", help="show, apply or keep out a configuration change that agents may have "
                                           "made and that loosens what they may do")
    config.add_argument("action", nargs="?", choices=("status", "accept", "keep"), default="status",
                        help="status (default): say what waits and why; accept: apply the files as they are now; "
                             "keep: go on with the configuration confirmed before, without asking again")
    sub.add_parser("skills", help="list the skills agents may load, where each came from and which are shadowed")
    sessions = sub.add_parser("sessions", help="list the sessions of the project directory")
    sessions.add_argument("--limit", type=int, default=20)
    undo = sub.add_parser("undo", help="take back a session's latest turn: its file changes and its history")
    undo.add_argument("session", nargs="?", help="the session id (default: the latest session of the directory)")
    undo.add_argument("--to", metavar="N|MESSAGE", help="take back turn N (or the turn of MESSAGE) and every later one")
    undo.add_argument("--yes", action="store_true", help="write over files changed since the agent without asking")
    redo = sub.add_parser("redo", help="put back what the session's last undo took")
    redo.add_argument("session", nargs="?", help="the session id (default: the latest session of the directory)")
    redo.add_argument("--yes", action="store_true", help="write over files changed since the undo without asking")
    checkpoints = sub.add_parser("checkpoints", help="list a session's turns and the files each changed")
    checkpoints.add_argument("session", nargs="?", help="the session id (default: the latest session)")
    diff = sub.add_parser("diff", help="print the file diff of a session's turn")
    diff.add_argument("session", nargs="?", help="the session id (default: the latest session)")
    diff.add_argument("n", nargs="?", type=int, help="the turn's number (default: the latest turn)")
    show = sub.add_parser("show", help="print the transcript of a session")
    show.add_argument("session", help="the session id (opencode-nb sessions lists them)")
    show.add_argument("--html", metavar="FILE", help="also write the transcript as an HTML page to FILE")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command is None:
        _parser().print_help()
        return 0
    if args.command == "demo":
        from .demo import run_demo, run_notebook

        try:
            if args.model is not None:
                check_model_option(args.model)
            if args.notebook is not None:
                return run_notebook(Path(args.notebook) if args.notebook else None)
            if args.ask:
                from .kernel.magics.terminal import wire

                return run_demo(args.model, keep=args.keep, attach=lambda ws, out: wire(ws, out=out))
            return run_demo(args.model, keep=args.keep)
        except OpencodeNbError as exc:
            print(f"opencode-nb demo: {exc}", file=sys.stderr)
            return 2
    try:
        import warnings

        from .config.load import ConfigWarning

        warnings.simplefilter("ignore", ConfigWarning)  # printed below, once each, as plain lines
        if args.command == "config":
            return config_command(Path(args.directory), args.action)
        with Workspace(Path(args.directory)) as ws:
            for warning in ws.warnings:
                print(f"warning: {warning}", file=sys.stderr)
            if args.command == "agents":
                print(format_agents(ws, include_hidden=args.all, rules=args.rules))
            elif args.command == "skills":
                print(format_skills(ws))
            elif args.command == "sessions":
                print(format_sessions(ws, limit=args.limit))
            elif args.command in ("undo", "redo", "checkpoints", "diff"):
                return checkpoint_command(ws, args)
            elif args.command == "show":
                from .views.transcript import transcript_bundle

                bundle = transcript_bundle(ws, ws.sessions.get(args.session).id, prompts=True)
                print(bundle["text/plain"])
                if args.html:
                    Path(args.html).write_text("<!doctype html><meta charset='utf-8'><body style='font-family:"
                                               f"sans-serif;max-width:60em;margin:auto'>{bundle['text/html']}</body>",
                                               encoding="utf-8")
    except OpencodeNbError as exc:
        print(f"opencode-nb: {exc}", file=sys.stderr)
        return 2
    return 0


def check_model_option(model_id: str) -> None:
    """Refuse a `--model` that is malformed or a known model misspelt before anything runs, naming the option.

    A provider of the person's own configuration is known only to the demo's workspace, so an unknown provider
    id is left for it to report (once it has read that configuration).

    Raises:
        OpencodeNbError: `--model: ...` and the id meant.
    """
    from .config.schema import Config
    from .provider.registry import ModelIdError, ProviderRegistry

    try:
        ProviderRegistry(Config()).check_model(model_id)
    except ModelIdError as exc:
        if exc.key == "model":
            raise OpencodeNbError(f"--model: {exc}") from None


def config_command(directory: Path, action: str) -> int:
    """`opencode-nb config [status|accept|keep]`: the person's answer to a held configuration change; `status`
    also says which OS sandbox shell commands run in."""
    with Workspace(directory) as ws:
        if action == "status":
            from .sandbox.status import sandbox_status

            print("OS sandbox of shell commands: " + sandbox_status(ws.sandbox.mode, ws.sandbox.binary).line)
            print(ws.store_notice())
            print(ws.approvals_notice())
            for notice in ws.managed_notices():
                print(notice)
        held = ws.config_held
        if held is None:
            print("The configuration files are in force as they are; no change waits for confirmation.")
            return 0
        if action == "accept":
            ws.accept_config()
            print("Applied: the configuration files as they are now are in force from the next run.\n"
                  + "\n".join(f"  {item}" for item in held.loosenings))
        elif action == "keep":
            ws.config_guard.keep(held.digest)
            print("Kept the configuration confirmed before; this change is not applied and not asked about again "
                  "(a later change of the files is).")
        else:
            print(held.message())
    return 0


def checkpoint_command(ws: Workspace, args: argparse.Namespace) -> int:
    """`undo`, `redo`, `checkpoints` and `diff` on a session (the directory's latest one by default).

    A file changed since the agent is asked about at a terminal (its diff shown); piped, it is kept unless
    `--yes` says to write over it.
    """
    import asyncio

    from .checkpoint.records import Conflict
    from .checkpoint.text import format_turns

    session_id = _session_arg(ws, args.session)
    if args.command == "checkpoints":
        print(format_turns(ws.checkpoints.turns(session_id), available=ws.checkpoints.available,
                           why_not=ws.checkpoints.why_not))
        return 0
    if args.command == "diff":
        try:
            text = ws.checkpoints.diff(session_id, args.n)
        except ValueError as exc:
            print(f"opencode-nb diff: {exc}", file=sys.stderr)
            return 2
        print(text or "no file changes in that turn", end="" if text else "\n")
        return 0

    async def confirm(conflict: Conflict) -> bool:
        if args.yes:
            return True
        if not sys.stdin.isatty():
            return False
        print(f"{conflict.path}: {conflict.reason}\n{conflict.diff}", file=sys.stderr)
        return input(f"Write over {conflict.path}? [y/N] ").strip().lower() in ("y", "yes")

    try:
        if args.command == "undo":
            to: str | int | None = int(args.to) if args.to and args.to.isdigit() else args.to
            report = asyncio.run(ws.undo(session_id, to=to, confirm=confirm))
        else:
            report = asyncio.run(ws.redo(session_id, confirm=confirm))
    except ValueError as exc:
        print(f"opencode-nb {args.command}: {exc}", file=sys.stderr)
        return 2
    outcome = report.outcome()
    print(outcome.text())
    return 1 if outcome.of("kept") else 0


def _session_arg(ws: Workspace, given: str | None) -> str:
    if given:
        return ws.sessions.get(given).id
    sessions = ws.sessions.list(str(ws.directory))
    if not sessions:
        raise OpencodeNbError(f"no sessions yet in {ws.directory}")
    return sessions[0].id


def format_agents(ws: Workspace, *, include_hidden: bool = False, rules: bool = False) -> str:
    default = ws.agents.default.name
    rows = []
    for agent in ws.agents.list(include_hidden=include_hidden):
        mark = "*" if agent.name == default else " "
        model = agent.model or "(default model)"
        rows.append(f"{mark} {agent.listed_as:<16} {agent.mode:<9} {model:<28} {agent.description or ''}".rstrip())
        if rules:
            rows.extend(f"      {r.permission} {r.pattern!r} -> {r.action}" for r in agent.permission)
    return "\n".join(rows) + "\n\n* default agent"


def format_skills(ws: Workspace) -> str:
    """Each skill in force with where it came from, then the ones a nearer skill shadows (a `SKILL.md` that
    cannot be used is among the warnings printed before)."""
    from .config.skills import invocation

    found = ws.skills.current()
    if not found.skills:
        return (f"no skills here: a skill is a folder with a SKILL.md under .opencode/skills/, .claude/skills/ or "
                f".agents/skills/ in the project, or under {ws.loaded.global_dir / 'skills'}")
    width = max(len(s.name) for s in found.skills)
    rows = [f"{s.name:<{width}}  {ws.skills.where(s, ws.root)}\n{'':<{width}}  {s.description}"
            + (f"\n{'':<{width}}  ({invocation(s)})" if invocation(s) else "") for s in found.skills]
    rows += [f"shadowed: {ws.skills.where(s.skill, ws.root)} (by {ws.skills.where(s.by, ws.root)})"
             for s in found.shadowed]
    return "\n".join(rows)


def format_sessions(ws: Workspace, *, limit: int = 20) -> str:
    sessions = ws.sessions.list(str(ws.directory))[:limit]
    if not sessions:
        return "no sessions yet in this directory"
    return "\n".join(
        f"{s.id}  {datetime.fromtimestamp(s.updated_at):%Y-%m-%d %H:%M}  {s.title}" for s in sessions
    )


if __name__ == "__main__":
    raise SystemExit(main())
