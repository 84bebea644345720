"""The file tools go only where they were allowed, checked by effect through the whole loop.

Every test runs a real `Workspace` with the scripted provider, so what is asserted is what the model was
sent and what happened on disk: no text from outside the project reaches a tool result (or the next
request to the model) while `external_directory` is refused, however the path is raced or linked; no
answer tells anything about an outside path before it is allowed; searches do not follow links out;
a backtracking pattern cannot hang grep; and a write into `.git` asks whatever `edit` allows.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from opencode_nb import Workspace
from opencode_nb.provider import Scripted

SECRET = "TOPSECRET-7f3a"
"""In every file outside the project: wherever it shows up, something leaked."""
INSIDE = "inside text"
RACE_CALLS = 600
RACE_FLIPS = 500
BATCH = 100


class Project:
    """`tmp/proj` (the workspace) and `tmp/outside` (a folder beside it that the agent must not see into)."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.root = tmp_path / "proj"
        (self.root / ".git").mkdir(parents=True)
        (self.root / "inside.txt").write_text(f"{INSIDE}\nSAFE\n")
        self.outside = tmp_path / "outside"
        (self.outside / "adir").mkdir(parents=True)
        (self.outside / "secret.txt").write_text(f"{SECRET}\nSAFE\n" + "filler line\n" * 41)
        (self.outside / "f.txt").write_text(f"{SECRET}\nSAFE\n")
        (self.outside / "adir" / "f.txt").write_text(f"{SECRET}\n")
        self.asks: list[Any] = []

    def workspace(self, permission: dict[str, Any] | None = None, script: Any = None,
                  answer: str | None = None) -> tuple[Workspace, Scripted]:
        def on_ask(request: Any) -> str:
            self.asks.append(request)
            return answer or "reject"

        config: dict[str, Any] = {"model": "scripted/demo"}
        if permission is not None:
            config["permission"] = permission
        ws = Workspace(self.root, config, data_dir=self.tmp / "data",
                       env={"XDG_CONFIG_HOME": str(self.tmp / "xdg"), "HOME": str(self.tmp)},
                       on_ask=on_ask if answer is not None else None)
        scripted = script if isinstance(script, Scripted) else Scripted(script)
        ws.providers.register("scripted", scripted)
        return ws, scripted


def run(ws: Workspace, timeout_s: float = 120) -> list[Any]:
    """Prompt once and return the tool parts of the run, in order."""
    async def go() -> list[Any]:
        session = ws.sessions.create()
        await asyncio.wait_for(ws.prompt(session.id, "go"), timeout_s)
        return [p for m in ws.sessions.messages(session.id) for p in m.parts if p.type == "tool"]

    try:
        return asyncio.run(go())
    finally:
        ws.close()


def text_of(part: Any) -> str:
    state = part.state
    return state.output if state.status == "completed" else state.error


def calls(*items: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "input": args} for name, args in items]}


def snapshot(folder: Path) -> dict[Path, bytes | None]:
    """Every path under `folder` with its bytes (None for a folder): any change at all shows."""
    return {p: (p.read_bytes() if p.is_file() else None) for p in folder.rglob("*")}


def seen_by_model(scripted: Scripted) -> str:
    return "\n".join(request.model_dump_json() for request in scripted.requests)


@contextmanager
def flipping(flip: Callable[[], None]) -> Iterator[list[int]]:
    """Run `flip` in a loop on another thread for the duration; yields [number of flips]."""
    stop = threading.Event()
    count = [0]

    def loop() -> None:
        while not stop.is_set():
            flip()
            count[0] += 1

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield count
    finally:
        stop.set()
        thread.join()


def link_flipper(link: Path, targets: tuple[Path, Path]) -> Callable[[], None]:
    """A link switched atomically between two targets (a new link renamed over the old one)."""
    spare = link.with_name(link.name + ".next")
    state = [0]

    def flip() -> None:
        state[0] ^= 1
        os.symlink(targets[state[0]], spare)
        os.replace(spare, link)

    flip()
    return flip


DWELL_S = 0.002
"""How long the swapped folder stays real (a quarter of it as a link), so that calls land in both states and
in the moves between; a change (an edit under its lock) needs the folder to hold still for a moment."""


def folder_swapper(folder: Path, outside: Path) -> Callable[[], None]:
    """A real folder of the project swapped for a link to an outside folder, and back: the race a check on
    the resolved path cannot see, because the resolved path itself changes meaning."""
    parked = folder.with_name(folder.name + ".real")
    spare = folder.with_name(folder.name + ".next")

    def flip() -> None:
        try:
            os.rename(folder, parked)
            os.symlink(outside, spare)
            os.replace(spare, folder)
            time.sleep(DWELL_S / 4)
            os.unlink(folder)
            os.rename(parked, folder)
            time.sleep(DWELL_S)
        except OSError:  # a write made the folder anew while ours was parked: drop that copy, restore ours
            while parked.exists():
                if folder.is_symlink():
                    folder.unlink()
                shutil.rmtree(folder, ignore_errors=True)
                with contextlib.suppress(OSError):
                    os.rename(parked, folder)
            spare.unlink(missing_ok=True)

    return flip


RACES = ["link", "folder"]


def race_target(project: Project, race: str) -> tuple[str, Callable[[], None]]:
    """The path the tool is called with, and what flips under it."""
    if race == "link":
        link = project.root / "link.txt"
        return "link.txt", link_flipper(link, (project.root / "inside.txt", project.outside / "f.txt"))
    box = project.root / "box"
    box.mkdir()
    (box / "f.txt").write_text(f"{INSIDE}\nSAFE\n")
    return "box/f.txt", folder_swapper(box, project.outside)


def race(project: Project, race: str, call: Callable[[str, int], tuple[str, dict[str, Any]]],
         ) -> tuple[list[Any], Scripted, int, float]:
    """Calls made through the loop, in batches of `BATCH` per step, while the path flips under them, until
    there have been at least `RACE_CALLS` calls and `RACE_FLIPS` flips. Every call's input differs (the
    loop would stop identical repeats as a doom loop). Returns the tool parts, the provider (what the model
    was sent), the number of flips and the time taken."""
    path, flip = race_target(project, race)
    made = [0]

    def respond(request: Any) -> Any:
        if (made[0] >= RACE_CALLS and flips[0] >= RACE_FLIPS) or made[0] >= 20 * RACE_CALLS:
            return {"text": "done"}
        batch = [call(path, made[0] + i) for i in range(BATCH)]
        made[0] += BATCH
        return calls(*batch)

    scripted = Scripted(respond=respond)
    ws, _ = project.workspace({"external_directory": "deny"}, scripted)
    started = time.monotonic()
    with flipping(flip) as flips:
        parts = run(ws)
    return parts, scripted, flips[0], time.monotonic() - started


@pytest.mark.parametrize("kind", RACES)
def test_reads_racing_a_flipped_path_never_return_outside_text(tmp_path, kind, capsys):
    project = Project(tmp_path)
    parts, scripted, flips, elapsed = race(project, kind, lambda path, i: ("read", {"path": path, "limit": 1 + i}))
    texts = [text_of(p) for p in parts]
    leaks = sum(SECRET in t for t in texts)
    inside = sum(INSIDE in t for t in texts)
    refused = sum("rule which prevents" in t for t in texts)
    with capsys.disabled():
        print(f"\n[read/{kind}] {len(texts)} reads, {flips} flips, {elapsed:.1f} s: {inside} inside, "
              f"{refused} refused, {len(texts) - inside - refused} other, {leaks} leaks")
    assert len(texts) >= RACE_CALLS and flips >= RACE_FLIPS
    assert leaks == 0 and SECRET not in seen_by_model(scripted)
    assert inside > 0 and refused > 0  # both sides of the race were really hit


WRITES: dict[str, Callable[[str, int], tuple[str, dict[str, Any]]]] = {
    "write": lambda path, i: ("write", {"path": path, "content": f"{INSIDE}\nSAFE {i}\n"}),
    "edit": lambda path, i: ("edit", {"path": path, "old_string": "SAFE", "new_string": f"SAFE{i % 10}",
                                      "replace_all": True}),
}


@pytest.mark.parametrize("kind", RACES)
@pytest.mark.parametrize("tool", sorted(WRITES))
def test_writes_racing_a_flipped_path_never_change_the_outside_file(tmp_path, kind, tool, capsys):
    project = Project(tmp_path)
    before = snapshot(project.outside)
    parts, scripted, flips, elapsed = race(project, kind, WRITES[tool])
    done = sum(p.state.status == "completed" for p in parts)
    with capsys.disabled():
        print(f"\n[{tool}/{kind}] {len(parts)} calls, {flips} flips, {elapsed:.1f} s: {done} written inside, "
              f"{len(parts) - done} refused or failed, outside changed: {snapshot(project.outside) != before}")
    assert len(parts) >= RACE_CALLS and flips >= RACE_FLIPS
    assert snapshot(project.outside) == before
    assert SECRET not in seen_by_model(scripted)
    assert done > 0


def test_a_path_that_becomes_a_link_mid_session_is_caught(tmp_path):
    """The project file the agent read in its first step is swapped for a link to outside before the next:
    every later read, write and edit of it is refused, and the outside file is untouched."""
    project = Project(tmp_path)
    notes = project.root / "notes.txt"
    notes.write_text("my notes\nSAFE\n")
    before = snapshot(project.outside)

    def respond(request: Any) -> Any:
        step = sum(1 for m in request.messages if m.role == "assistant")
        if step == 0:
            return calls(("read", {"path": "notes.txt"}))
        if step == 1:
            notes.unlink()
            notes.symlink_to(project.outside / "f.txt")
            return calls(("read", {"path": "notes.txt"}), ("write", {"path": "notes.txt", "content": "x"}),
                         ("edit", {"path": "notes.txt", "old_string": "SAFE", "new_string": "gone"}))
        return {"text": "done"}

    scripted = Scripted(respond=respond)
    ws, _ = project.workspace({"external_directory": "deny"}, scripted)
    first, *later = run(ws)
    assert "my notes" in text_of(first)
    assert [p.state.status for p in later] == ["error"] * 3
    assert all("rule which prevents" in text_of(p) for p in later)
    assert snapshot(project.outside) == before and SECRET not in seen_by_model(scripted)


# ------------------------------------------------------------------------------------ nothing revealed

KINDS = {"file": "secret.txt", "missing": "missing.txt", "dir": "adir", "under-a-file": "secret.txt/x"}
"""Outside paths of every kind; the answers about them must not differ in anything but the name given."""

PROBES: dict[str, Callable[[str], dict[str, Any]]] = {
    "read": lambda p: {"path": p},
    "write": lambda p: {"path": p, "content": "x"},
    "edit": lambda p: {"path": p, "old_string": "no such text", "new_string": "y"},
    "edit-create": lambda p: {"path": p, "old_string": "", "new_string": "y"},
    "list": lambda p: {"path": p},
    "glob": lambda p: {"pattern": "*", "path": p},
    "grep": lambda p: {"pattern": "SECRET", "path": p},
}


FOLDER_TOOLS = {"list", "glob", "grep"}


def answers(project: Project, permission: dict[str, Any] | None, via_links: bool) -> dict[str, dict[str, str]]:
    """What each tool answers for each kind of outside path: as an absolute path, or through a link in the
    project (whose own name is all the model gave). The folder asked about is replaced by <FOLDER>: it is
    the path the model gave (or the link's text), its parent for tools that take a file, never more."""
    items = []
    for tool, args in PROBES.items():
        for kind, name in KINDS.items():
            target = project.outside / name
            if via_links:
                link = project.root / f"l-{tool}-{kind}"
                link.symlink_to(target)
                given = link.name
            else:
                given = str(target)
            items.append((tool.removesuffix("-create"), args(given)))
    ws, scripted = project.workspace(permission, [calls(*items), {"text": "done"}])
    parts = run(ws)
    assert SECRET not in seen_by_model(scripted)
    out: dict[str, dict[str, str]] = {}
    for (tool, kind), part in zip([(t, k) for t in PROBES for k in KINDS], parts, strict=True):
        target = project.outside / KINDS[kind]
        folder = target if tool in FOLDER_TOOLS else target.parent
        out.setdefault(tool, {})[kind] = text_of(part).replace(f"{folder}/*", "<FOLDER>/*")
    return out


@pytest.mark.parametrize("via_links", [False, True], ids=["absolute", "through-a-link"])
@pytest.mark.parametrize("how", ["denied by a rule", "refused by the unattended policy"])
def test_nothing_about_an_outside_path_is_revealed_before_it_is_allowed(tmp_path, how, via_links):
    project = Project(tmp_path)
    before = snapshot(project.outside)
    permission = {"external_directory": "deny"} if how == "denied by a rule" else None
    found = answers(project, permission, via_links)
    for tool, by_kind in found.items():
        texts = set(by_kind.values())  # a file, nothing, a folder, a path through a file: all answered alike
        assert len(texts) == 1, "\n".join(f"{k}: {v}" for k, v in by_kind.items())
        [text] = texts
        for telling in ("not found", "is a directory", "Directory", "Could not find", "binary", "lines", "bytes",
                        "Not a", "No such", SECRET, "filler"):
            assert telling not in text, (tool, text)
    assert snapshot(project.outside) == before
    opening = ("The user has specified a rule which prevents you from using this specific tool call." if permission
               else "Permission for external_directory <FOLDER>/* was refused: this run has nobody to approve it")
    assert all(text.startswith(opening) for by_kind in found.values() for text in by_kind.values())


# ------------------------------------------------------------------------------- links out of the tree

@pytest.fixture(params=["python", pytest.param("rg", marks=pytest.mark.skipif(shutil.which("rg") is None,
                                                                               reason="ripgrep not installed"))])
def engine(request, monkeypatch):
    if request.param == "python":
        monkeypatch.setattr("opencode_nb.tool.grep.shutil.which", lambda name: None)
    return request.param


def test_searches_and_listings_do_not_follow_links_out_of_the_project(tmp_path, engine):
    project = Project(tmp_path)
    (project.root / "notes.md").write_text("nothing to see\n")
    (project.root / "to-file.txt").symlink_to(project.outside / "secret.txt")
    (project.root / "to-dir").symlink_to(project.outside / "adir")
    (project.root / "sub").mkdir()
    (project.root / "sub" / ".gitignore").symlink_to(project.outside / "secret.txt")
    ws, scripted = project.workspace(None, [calls(
        ("grep", {"pattern": "TOPSECRET|filler"}), ("grep", {"pattern": "f", "include": "*.txt"}),
        ("glob", {"pattern": "**/*"}), ("glob", {"pattern": "**/f.txt"}), ("list", {"path": "."}),
    ), {"text": "done"}])
    grep_all, grep_txt, glob_all, glob_f, listed = (text_of(p) for p in run(ws))
    assert grep_all == "No matches found." and grep_txt == "No matches found."
    assert "to-file" not in glob_all and "to-dir" not in glob_all and "notes.md" in glob_all
    assert glob_f.startswith("No files match")
    assert "to-dir" not in listed and "f.txt" not in listed and "notes.md" in listed
    assert SECRET not in seen_by_model(scripted)


def test_grep_ends_a_catastrophic_pattern_within_its_bound(tmp_path, monkeypatch):
    monkeypatch.setattr("opencode_nb.tool.grep.shutil.which", lambda name: None)
    project = Project(tmp_path)
    (project.root / "long.txt").write_text("a" * 40_000 + "!\n")
    (project.root / "short.txt").write_text("aaa\n")
    ws, _ = project.workspace(None, [calls(("grep", {"pattern": "(a+)+$"})), {"text": "done"}])
    started = time.monotonic()
    [part] = run(ws)
    elapsed = time.monotonic() - started
    text = text_of(part)
    assert part.state.status == "completed" and elapsed < 10
    assert text.startswith("short.txt:\n  1: aaa")
    assert "Skipped 1 file where matching took over 2 s: long.txt" in text and "backtracks" in text


@pytest.mark.parametrize(("tool", "args"), [
    ("glob", {"pattern": "[z-a].py"}),
    ("grep", {"pattern": "x", "include": "*.[z-a]"}),
])
def test_an_invalid_glob_range_is_a_clear_tool_error(tmp_path, tool, args):
    project = Project(tmp_path)
    ws, _ = project.workspace(None, [calls((tool, args)), {"text": "done"}])
    [part] = run(ws)
    assert part.state.status == "error"
    assert text_of(part).startswith("Invalid glob pattern") and "must go upwards, as in [a-z]" in text_of(part)


# ----------------------------------------------------------------------------------------- .git writes

GIT_WRITES = [
    ("write", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}),
    ("edit", {"path": ".git/config", "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = touch pwned"}),
    ("write", {"path": "hooks-link/post-checkout", "content": "#!/bin/sh\n"}),
    ("write", {"path": "vendor/lib/.git/config", "content": "[core]\n\tpager = touch pwned\n"}),
]


def git_project(tmp_path: Path) -> Project:
    project = Project(tmp_path)
    (project.root / ".git" / "hooks").mkdir()
    (project.root / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (project.root / "hooks-link").symlink_to(project.root / ".git" / "hooks")
    return project


def test_writes_under_git_ask_even_when_edit_is_allowed(tmp_path):
    project = git_project(tmp_path)
    ws, _ = project.workspace({"edit": "allow"}, [calls(*GIT_WRITES, ("write", {"path": "ok.txt", "content": "x"})),
                                                  {"text": "done"}], answer="reject")
    *git_parts, plain = run(ws)
    asked = [(r.permission, r.patterns) for r in project.asks]
    assert sorted(asked) == sorted([("git_internals", [".git/hooks/pre-commit"]), ("git_internals", [".git/config"]),
                                    ("git_internals", [".git/hooks/post-checkout"]),
                                    ("git_internals", ["vendor/lib/.git/config"])])
    assert all(p.state.status == "error" for p in git_parts) and plain.state.status == "completed"
    assert not (project.root / ".git" / "hooks" / "pre-commit").exists()
    assert not (project.root / ".git" / "hooks" / "post-checkout").exists()
    assert "fsmonitor" not in (project.root / ".git" / "config").read_text()
    assert not (project.root / "vendor").exists()
    assert all("diff" in r.metadata for r in project.asks)


def test_only_a_rule_naming_git_internals_lets_such_a_write_through(tmp_path):
    project = git_project(tmp_path)
    rules = {"edit": "allow", "git_internals": {".git/info/*": "allow"}}
    ws, _ = project.workspace(rules, [calls(("write", {"path": ".git/info/exclude", "content": "*.tmp\n"}),
                                            GIT_WRITES[0]), {"text": "done"}], answer="reject")
    allowed, hook = run(ws)
    assert allowed.state.status == "completed" and (project.root / ".git/info/exclude").read_text() == "*.tmp\n"
    assert hook.state.status == "error" and not (project.root / ".git/hooks/pre-commit").exists()
    assert [(r.permission, r.patterns) for r in project.asks] == [("git_internals", [".git/hooks/pre-commit"])]


def test_a_git_write_the_person_approves_is_written(tmp_path):
    project = git_project(tmp_path)
    ws, _ = project.workspace(None, [calls(GIT_WRITES[0]), {"text": "done"}], answer="once")
    [part] = run(ws)
    assert part.state.status == "completed" and (project.root / ".git/hooks/pre-commit").exists()
    assert [r.permission for r in project.asks] == ["git_internals"]  # asked once, by the permission that names git
