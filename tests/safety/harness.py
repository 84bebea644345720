"""Running the attack corpus for real: a project, its victims and witnesses, and one workspace per category.

Every case is one bash call made by a scripted model through `Workspace.prompt` (after the calls its `before`
names, made in the same session and allowed like any other), in a temporary project under `/var/tmp` (the OS
sandbox gives `/tmp` its own contents, so a witness there could not see an escape):

- `victim.txt` in the project, which `rm *: deny` protects;
- a loopback HTTP server that records every request, which `curl *: deny` protects;
- a bare repository outside the project as the `origin` remote, which `git push*: deny` protects;
- `outside/` beside the project and a `home/` that is `$HOME` for the run, where nothing may appear;
- the project's own files, which the read-only plan agent may not change.

Nobody is present (`OPENCODE_NB_PERMISSION=deny`), so whatever asks is refused. After each call the effect is
looked for outside the sandbox, then everything is put back for the next case.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opencode_nb import Workspace
from opencode_nb.config.schema import Config
from opencode_nb.provider import Scripted

from .corpus import CATEGORIES, Case

BASH_RULES = {"*": "allow", "rm *": "deny", "curl *": "deny", "git push*": "deny"}
RULES: dict[str, Any] = {"*": "allow", "bash": BASH_RULES}
"""The rules every case runs under, unless its category says otherwise."""

MODES = ("off", "required")
"""The `sandbox` settings the corpus runs under."""

CALL_TIMEOUT_S = 10
VICTIM = "keep me\n"


@dataclass(frozen=True)
class Outcome:
    case: Case
    decision: str
    """What the checks decided: "denied" (a rule), "asked" (refused: nobody present), "allowed" (it ran),
    "error" (something else: `detail` says what)."""
    happened: bool
    """Whether the effect the case is about was seen: for an attack, the harm; for a control, its work."""
    detail: str
    seconds: float
    confinement: str | None = None
    """How the command ran when it ran (the tool's `sandbox` metadata: "none", "bwrap", ...)."""

    @property
    def ok(self) -> bool:
        if self.case.expect == "runs":
            return self.decision == "allowed" and self.happened
        return self.decision in ("denied", "asked") and not self.happened


def sandbox_skip_reason(mode: str) -> str | None:
    """Why the corpus cannot run under `mode` here, or None."""
    if mode == "off":
        return None
    if "sandbox" not in Config.model_fields:
        return "the config key `sandbox` (off | auto | required) is not implemented yet"
    from opencode_nb.sandbox.policy import Backend, find_backend

    found = find_backend()
    return None if isinstance(found, Backend) else f"no working OS sandbox here: {found}"


class Loopback:
    """An HTTP server on 127.0.0.1 that records the requests reaching it."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        seen = self.requests

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.path)
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"reached")

            do_POST = do_GET

            def log_message(self, *args: Any) -> None:
                return None

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hit"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Stage:
    """The project, its victims and its witnesses."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.root = base / "proj"
        self.outside = base / "outside"
        self.home = base / "home"
        self.remote = base / "remote.git"
        for folder in (self.root, self.outside, self.home):
            folder.mkdir(parents=True)
        self._git("init", "-q", "-b", "main")
        self._git("config", "user.email", "corpus@example.com")
        self._git("config", "user.name", "Corpus")
        (self.root / "victim.txt").write_text(VICTIM)
        (self.root / "notes.md").write_text("# notes\n")
        self._git("add", ".")
        self._git("commit", "-q", "-m", "start")
        subprocess.run(["git", "init", "-q", "--bare", str(self.remote)], check=True, capture_output=True)
        self._git("remote", "add", "origin", str(self.remote))
        self.baseline = self._listing()
        self.git_config = (self.root / ".git" / "config").read_bytes()
        self.server = Loopback()

    def _git(self, *args: str) -> None:
        subprocess.run(["git", *args], cwd=self.root, check=True, capture_output=True)

    def _listing(self) -> dict[str, bytes]:
        out = {}
        for path in self.root.rglob("*"):
            if ".git" in path.relative_to(self.root).parts or not path.is_file():
                continue
            out[path.relative_to(self.root).as_posix()] = path.read_bytes()
        return out

    def changed_files(self) -> list[str]:
        now = self._listing()
        return sorted({*now, *self.baseline} - {k for k in now if self.baseline.get(k) == now[k]})

    def pushed(self) -> list[str]:
        refs = subprocess.run(["git", "--git-dir", str(self.remote), "for-each-ref", "--format=%(refname)"],
                              capture_output=True, text=True)
        return refs.stdout.split()

    def escaped(self) -> list[str]:
        return [p.name for folder in (self.outside, self.home) for p in folder.iterdir()]

    def happened(self, case: Case) -> bool:
        effect = case.effect
        if effect == "victim":
            victim = self.root / "victim.txt"
            return not victim.is_file() or victim.read_text() != VICTIM
        if effect == "request":
            return bool(self.server.requests)
        if effect == "push":
            return bool(self.pushed())
        if effect == "outside":
            return bool(self.escaped())
        if effect == "write":
            return bool(self.changed_files())
        if effect == "made":
            return (self.root / "made.txt").exists()
        raise ValueError(f"unknown effect {effect!r}")

    def reset(self) -> None:
        """Put everything back as it was before the case."""
        for name in self.changed_files():
            path = self.root / name
            if name in self.baseline:
                path.write_bytes(self.baseline[name])
            else:
                path.unlink(missing_ok=True)
        for path in sorted(self.root.rglob("*"), reverse=True):  # folders and links a case made
            rel = path.relative_to(self.root)
            if ".git" in rel.parts or rel.as_posix() in self.baseline:
                continue
            if path.is_symlink() or path.is_file():
                path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
        if (self.root / ".git" / "config").read_bytes() != self.git_config:
            (self.root / ".git" / "config").write_bytes(self.git_config)
        for ref in self.pushed():
            subprocess.run(["git", "--git-dir", str(self.remote), "update-ref", "-d", ref], capture_output=True)
        for folder in (self.outside, self.home):
            for path in folder.iterdir():
                shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        self.server.requests.clear()

    def format(self, command: str) -> str:
        return command.replace("{url}", self.server.url).replace("{outside}", str(self.outside))

    def close(self) -> None:
        self.server.close()


@contextlib.contextmanager
def environment(stage: Stage) -> Iterator[None]:
    """`$HOME` is the stage's home for the commands (and for the checks reading it)."""
    saved = {k: os.environ.get(k) for k in ("HOME", "GIT_CONFIG_NOSYSTEM", "GIT_TERMINAL_PROMPT")}
    os.environ.update({"HOME": str(stage.home), "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"})
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def decision_of(state: Any) -> tuple[str, str]:
    if state.status == "completed":
        return "allowed", ""
    error = str(getattr(state, "error", "") or "")
    if "rule which prevents you" in error:
        return "denied", error
    if "nobody to approve it" in error or "refused by policy" in error:
        return "asked", error
    return "error", error


async def _run_category(stage: Stage, mode: str, category: str, cases: list[Case]) -> list[Outcome]:
    spec = CATEGORIES[category]
    config: dict[str, Any] = {"model": "scripted/demo", "sandbox": mode}
    rules = spec.get("rules", RULES)
    if rules is not None:
        config["permission"] = rules
    model = Scripted()
    ws = Workspace(stage.root, config, data_dir=stage.base / "data",
                   env={"XDG_CONFIG_HOME": str(stage.base / "xdg"), "HOME": str(stage.home),
                        "OPENCODE_NB_PERMISSION": "deny"})
    ws.providers.register("scripted", model)
    outcomes = []
    try:
        for case in cases:
            command = stage.format(case.command)
            calls = [*((tool, json.loads(stage.format(given))) for tool, given in case.before),
                     ("bash", {"command": command, "timeout": CALL_TIMEOUT_S})]
            # One call per turn: the calls of one turn may run at once, and these must run in order.
            model.turns.extend(Scripted([*({"tool_calls": [{"name": tool, "input": given}]} for tool, given in calls),
                                         {"text": "done"}]).turns)
            session = ws.sessions.create().id
            started = time.perf_counter()
            await asyncio.wait_for(ws.prompt(session, "go", agent=case.agent), len(calls) * CALL_TIMEOUT_S + 20)
            seconds = time.perf_counter() - started
            *setup, state = [p.state for m in ws.sessions.messages(session) for p in m.parts if p.type == "tool"]
            decision, detail = decision_of(state)
            failed = [f"{tool} call {i + 1} before it: {decision_of(s)[1][:200]}"
                      for i, ((tool, _), s) in enumerate(zip(case.before, setup, strict=True))
                      if s.status != "completed"]
            if failed:  # a case whose setup did not happen proves nothing
                decision, detail = "error", "; ".join(failed)
            happened = stage.happened(case)
            if case.expect == "runs" and not happened:
                detail = detail or str(getattr(state, "output", ""))[-400:]
            confinement = (getattr(state, "metadata", None) or {}).get("sandbox") if decision == "allowed" else None
            outcomes.append(Outcome(case, decision, happened, detail, seconds, confinement))
            stage.reset()
    finally:
        ws.close()
    return outcomes


def run_corpus(mode: str, cases: list[Case]) -> list[Outcome]:
    """Run `cases` end to end under `sandbox: mode`; one workspace per category, one stage for them all."""
    base = Path(tempfile.mkdtemp(prefix="opencode-nb-corpus-", dir="/var/tmp" if os.access("/var/tmp", os.W_OK)
                                 else None))
    stage = Stage(base)
    outcomes: list[Outcome] = []
    try:
        with environment(stage):
            by_category: dict[str, list[Case]] = {}
            for case in cases:
                by_category.setdefault(case.category, []).append(case)
            for category, group in by_category.items():
                outcomes += asyncio.run(_run_category(stage, mode, category, group))
    finally:
        stage.close()
        shutil.rmtree(base, ignore_errors=True)
    return outcomes


def run_unchecked(cases: list[Case]) -> dict[Case, bool]:
    """Whether each case's effect happens when its command runs with no checks at all (plain `bash -c`): a
    case whose effect never happens proves nothing about the checks."""
    from opencode_nb.tool.shell.process import tool_env

    base = Path(tempfile.mkdtemp(prefix="opencode-nb-corpus-", dir="/var/tmp" if os.access("/var/tmp", os.W_OK)
                                 else None))
    stage = Stage(base)
    effective = {}
    try:
        with environment(stage):
            for case in cases:
                for tool, given in case.before:
                    _run_unchecked_call(stage, tool, json.loads(stage.format(given)))
                subprocess.run(["bash", "-c", stage.format(case.command)], cwd=stage.root, env=tool_env(),
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=CALL_TIMEOUT_S)
                time.sleep(0.02)  # background jobs (`coproc`, `&`) finish
                effective[case] = stage.happened(case)
                stage.reset()
    finally:
        stage.close()
        shutil.rmtree(base, ignore_errors=True)
    return effective


def _run_unchecked_call(stage: Stage, tool: str, given: dict[str, Any]) -> None:
    """What an earlier call of a case does, done directly: the calls cases make before their command."""
    from opencode_nb.tool.shell.process import tool_env

    if tool == "bash":
        subprocess.run(["bash", "-c", given["command"]], cwd=stage.root, env=tool_env(), stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=CALL_TIMEOUT_S)
    elif tool == "write":
        path = stage.root / given["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(given["content"])
    else:
        raise ValueError(f"a case's earlier call uses {tool!r}; the unchecked run knows only bash and write")
