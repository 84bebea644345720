"""Python plugins: found in the configuration or through an entry point, their hooks called by the names OpenCode
gives them, plain or async; what they answer changes the call, and what they break is reported once and costs
the run nothing."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from opencode_nb.bus import Bus
from opencode_nb.config import ConfigError
from opencode_nb.hook.plugin_api import ToolCall
from opencode_nb.hook.plugins import ENTRY_POINT_GROUP, Plugins
from opencode_nb.permission.events import PermissionAsked, PermissionRequest
from opencode_nb.tool import ToolResult, default_registry
from tests.config.conftest import Project
from tests.tool.fakes import RecordingContext

CALL = ToolCall(tool="bash", session_id="ses_1", call_id="call_1", agent="build")

Write = Callable[[str, str], str]


@pytest.fixture
def write_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Write]:
    """Writes a module into a folder on the import path; the modules are forgotten after the test."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    written: list[str] = []

    def write(name: str, source: str) -> str:
        (folder / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        written.append(name)
        return name

    yield write
    for name in written:
        sys.modules.pop(name, None)


@pytest.fixture
def reported() -> list[str]:
    return []


def load(reported: list[str], *specs: str, **options: object) -> Plugins:
    return Plugins.load(list(specs), entry_points=False, report=reported.append, **options)  # type: ignore[arg-type]


def request(permission: str = "bash", patterns: tuple[str, ...] = ("git push",)) -> PermissionRequest:
    return PermissionRequest(id="per_1", session_id="ses_1", agent="build", permission=permission,
                             patterns=list(patterns))


# ------------------------------------------------------------------------------------------ tool.execute.before


async def test_a_plain_hook_changes_the_arguments_the_call_runs_with(write_plugin, reported):
    write_plugin("quiet", """
        class Quiet:
            def tool_execute_before(self, call, args):
                if call.tool == "bash":
                    return {**args, "command": args["command"] + " --quiet"}
        plugin = Quiet()
    """)
    plugins = load(reported, "quiet:plugin")
    sent = {"command": "pip install x"}
    args, denial = await plugins.tool_execute_before(CALL, sent)
    assert args == {"command": "pip install x --quiet"} and denial is None
    assert sent == {"command": "pip install x"}, "what the model sent is kept as it was"
    assert reported == []


async def test_an_async_hook_may_change_the_arguments_in_place(write_plugin, reported):
    write_plugin("inplace", """
        import asyncio
        async def tool_execute_before(args):
            await asyncio.sleep(0)
            args["timeout"] = 5
    """)
    args, denial = await load(reported, "inplace").tool_execute_before(CALL, {"command": "ls"})
    assert args == {"command": "ls", "timeout": 5} and denial is None


async def test_a_raised_deny_refuses_the_call_and_later_plugins_are_not_asked(write_plugin, reported):
    write_plugin("guard", """
        from opencode_nb.hook.plugin_api import Deny
        def tool_execute_before(call, args):
            if "git push" in args.get("command", ""):
                raise Deny("pushing is left to people here")
    """)
    write_plugin("later", """
        seen = []
        def tool_execute_before(args):
            seen.append(args)
    """)
    plugins = load(reported, "guard", "later")
    _, denial = await plugins.tool_execute_before(CALL, {"command": "git push origin main"})
    assert denial is not None and (denial.plugin, denial.reason) == ("guard", "pushing is left to people here")
    assert sys.modules["later"].seen == []
    _, allowed = await plugins.tool_execute_before(CALL, {"command": "git status"})
    assert allowed is None and sys.modules["later"].seen == [{"command": "git status"}]


async def test_an_async_hook_may_return_its_deny(write_plugin, reported):
    write_plugin("asyncguard", """
        from opencode_nb.hook.plugin_api import Deny
        class Guard:
            async def tool_execute_before(self, call):
                return Deny("no shell today") if call.tool == "bash" else None
    """)
    _, denial = await load(reported, "asyncguard:Guard").tool_execute_before(CALL, {"command": "ls"})
    assert denial is not None and str(denial) == "no shell today"


async def test_each_plugin_sees_the_arguments_as_the_ones_before_it_left_them(write_plugin, reported):
    write_plugin("first", "def tool_execute_before(args):\n    return {**args, 'steps': ['first']}\n")
    write_plugin("second", "def tool_execute_before(args):\n    args['steps'] = [*args['steps'], 'second']\n")
    args, _ = await load(reported, "first", "second").tool_execute_before(CALL, {})
    assert args == {"steps": ["first", "second"]}


async def test_a_plugin_that_fails_halfway_leaves_no_part_of_its_change(write_plugin, reported):
    write_plugin("halfway", """
        def tool_execute_before(args):
            args["command"] = "rm -rf /"
            raise RuntimeError("changed my mind")
    """)
    args, denial = await load(reported, "halfway").tool_execute_before(CALL, {"command": "ls"})
    assert args == {"command": "ls"} and denial is None
    assert len(reported) == 1 and "RuntimeError: changed my mind" in reported[0]


# ------------------------------------------------------------------------------------------ tool.execute.after


async def test_an_after_hook_replaces_what_the_model_reads_and_takes_only_the_arguments_it_names(
        write_plugin, reported):
    write_plugin("redact", """
        from dataclasses import replace
        def tool_execute_after(result):
            return replace(result, output=result.output.replace("hunter2", "******"))
    """)
    write_plugin("sizes", """
        from dataclasses import replace
        async def tool_execute_after(args, call, result):
            return replace(result, metadata={**result.metadata, "asked_for": args["path"], "tool": call.tool})
    """)
    result = ToolResult("notes.txt", "password: hunter2", {"summary": "Read notes.txt"})
    changed = await load(reported, "redact", "sizes").tool_execute_after(
        replace(CALL, tool="read"), result, args={"path": "notes.txt"})
    assert changed.output == "password: ******"
    assert changed.metadata == {"summary": "Read notes.txt", "asked_for": "notes.txt", "tool": "read"}


async def test_an_after_hook_that_answers_nothing_leaves_the_very_result(write_plugin, reported):
    write_plugin("watcher", "calls = []\ndef tool_execute_after(call):\n    calls.append(call.call_id)\n")
    result = ToolResult("t", "out")
    assert await load(reported, "watcher").tool_execute_after(CALL, result) is result
    assert sys.modules["watcher"].calls == ["call_1"]


# ------------------------------------------------------------------------------------------ permission.ask


async def test_a_policy_plugin_answers_an_ask(write_plugin, reported):
    write_plugin("policy", """
        async def permission_ask(request):
            if request.permission == "read":
                return "allow"
            if request.permission == "bash" and any(p.startswith("git push") for p in request.patterns):
                return "deny"
    """)
    plugins = load(reported, "policy")
    assert await plugins.permission_ask(request("read", ("notes.md",))) == "allow"
    assert await plugins.permission_ask(request("bash", ("git push",))) == "deny"
    assert await plugins.permission_ask(request("bash", ("ls",))) is None, "no answer: the person is asked"


@pytest.mark.parametrize(("answers", "expected"), [
    (["allow", "deny"], "deny"), (["deny", "allow"], "deny"), (["allow", "ask"], "ask"),
    ([None, "allow"], "allow"), ([None, None], None),
])
async def test_of_several_plugins_answers_the_strictest_wins(write_plugin, reported, answers, expected):
    specs = [write_plugin(f"answers_{i}", f"def permission_ask():\n    return {answer!r}\n")
             for i, answer in enumerate(answers)]
    assert await load(reported, *specs).permission_ask(request()) == expected


async def test_an_answer_a_plugin_may_not_give_is_ignored_and_said_once(write_plugin, reported):
    write_plugin("sloppy", "def permission_ask(request):\n    return 'yes'\n")
    plugins = load(reported, "sloppy")
    for _ in range(3):
        assert await plugins.permission_ask(request()) is None
    assert len(reported) == 1
    assert "permission.ask hook answered 'yes'" in reported[0] and '"allow", "deny", "ask" or None' in reported[0]


# ------------------------------------------------------------------------------------------ the other hooks


async def test_chat_message_adds_text_to_a_persons_message(write_plugin, reported):
    write_plugin("context", """
        def chat_message(text):
            return "The team's style guide is STYLE.md." if "style" in text else None
    """)
    write_plugin("more", "async def chat_message(session_id, agent):\n    return [f'session {session_id}', '']\n")
    plugins = load(reported, "context", "more")
    assert await plugins.chat_message("ses_1", "fix the style", agent="build") == [
        "The team's style guide is STYLE.md.", "session ses_1"]


async def test_session_idle_and_every_bus_event_reach_the_plugin(write_plugin, reported):
    write_plugin("listener", """
        import asyncio
        idle, seen, later = [], [], []
        def session_idle(session_id):
            idle.append(session_id)
        class Events:
            def event(self, event):
                seen.append(event.type)
        class Slow:
            async def event(self, event):
                await asyncio.sleep(0)
                later.append(event.type)
    """)
    plugins = load(reported, "listener", "listener:Events", "listener:Slow")
    bus = Bus()
    bus.subscribe("*", plugins.event, watch_only=True)
    bus.publish(PermissionAsked(request=request()))
    await plugins.session_idle("ses_1")
    module = sys.modules["listener"]
    assert module.idle == ["ses_1"] and module.seen == ["permission.asked"]
    for _ in range(3):
        await asyncio.sleep(0)
    assert module.later == ["permission.asked"], "an async event hook runs on the loop, after the publisher"


# ------------------------------------------------------------------------------------------ failures


async def test_a_plugin_that_raises_is_reported_once_and_the_run_goes_on(write_plugin, reported):
    write_plugin("broken", """
        calls = []
        def tool_execute_before(args):
            calls.append(1)
            return args["missing"]
    """)
    write_plugin("working", "def tool_execute_before(args):\n    return {**args, 'checked': True}\n")
    plugins = load(reported, "broken", "working")
    for _ in range(3):
        args, denial = await plugins.tool_execute_before(CALL, {"command": "ls"})
        assert args == {"command": "ls", "checked": True} and denial is None
    assert sys.modules["broken"].calls == [1, 1, 1], "later calls still reach it"
    assert len(reported) == 1
    assert reported[0].startswith("Plugin broken: its tool.execute.before hook failed with KeyError: 'missing'")
    assert "broken.py:5" in reported[0], "where in the plugin it failed"
    info = {i.name: i for i in plugins.describe()}["broken"]
    assert info.outcome.startswith("3 calls, 3 failed; last: tool.execute.before failed: KeyError: 'missing'")


async def test_an_async_hook_past_its_timeout_is_given_up_on(write_plugin, reported):
    write_plugin("hangs", "import asyncio\nasync def permission_ask():\n    await asyncio.sleep(30)\n")
    plugins = load(reported, "hangs", timeout_s=0.05)
    started = asyncio.get_running_loop().time()
    assert await plugins.permission_ask(request()) is None
    assert asyncio.get_running_loop().time() - started < 5
    assert reported == ["Plugin hangs: its permission.ask hook did not answer within 0.05 s and was given up on; "
                        "the run goes on without its answer."]


async def test_a_plugin_of_its_own_timeout_error_is_a_failure_not_a_timeout(write_plugin, reported):
    write_plugin("ownerror", "async def permission_ask():\n    raise TimeoutError('the policy server is slow')\n")
    assert await load(reported, "ownerror").permission_ask(request()) is None
    assert "failed with TimeoutError: the policy server is slow" in reported[0]


def test_what_cannot_load_is_reported_and_the_rest_loads(write_plugin, reported):
    write_plugin("fine", "def session_idle(session_id):\n    pass\n")
    write_plugin("noisy", "raise ImportError('needs the requests package')\n")
    plugins = load(reported, "nowhere.to.be:found", "noisy", "fine")
    assert reported == ["Plugin nowhere.to.be:found was not loaded: ModuleNotFoundError: No module named 'nowhere'",
                        "Plugin noisy was not loaded: ImportError: needs the requests package"]
    shown = [(i.name, i.loaded, i.hooks, i.outcome) for i in plugins.describe()]
    assert shown == [
        ("nowhere.to.be:found", False, (), "not loaded: ModuleNotFoundError: No module named 'nowhere'"),
        ("noisy", False, (), "not loaded: ImportError: needs the requests package"),
        ("fine", True, ("session.idle",), "not called yet"),
    ]


async def test_a_misspelt_or_misfitting_hook_is_said_when_it_loads_not_at_its_first_call(write_plugin, reported):
    write_plugin("typos", """
        calls = []
        class Typos:
            def tool_execute_befor(self, call, args):
                calls.append("misspelt")
            def permission_ask(self, input, output):
                calls.append("opencode's shape")
            def session_idle(self, session_id):
                calls.append("fine")
        plugin = Typos()
    """)
    plugins = load(reported, "typos:plugin")
    assert reported == [
        "Plugin typos:plugin: tool_execute_befor is not a hook (did you mean tool_execute_before?); it is never "
        "called",
        "Plugin typos:plugin: its permission_ask takes `input`, which permission.ask does not pass (it passes "
        "request, by name), so it is never called",
    ]
    await plugins.tool_execute_before(CALL, {})
    await plugins.permission_ask(request())
    await plugins.session_idle("ses_1")
    assert sys.modules["typos"].calls == ["fine"]
    assert plugins.describe()[0].hooks == ("session.idle",)


def test_a_mapping_may_use_opencodes_dotted_names(write_plugin, reported):
    write_plugin("dotted", """
        plugin = {"tool.execute.before": lambda args: None, "session_idle": lambda: None, "chat.mesage": print}
    """)
    plugins = load(reported, "dotted:plugin")
    assert plugins.describe()[0].hooks == ("tool.execute.before", "session.idle")
    assert plugins.has("tool.execute.before") and plugins.has("session_idle") and not plugins.has("event")
    assert reported == ["Plugin dotted:plugin: 'chat.mesage' is not a hook (did you mean chat.message?); it is "
                        "ignored"]


async def test_with_no_plugins_every_hook_gives_back_what_it_was_given(reported):
    plugins = Plugins.load([], entry_points=False, report=reported.append)
    args, result = {"command": "ls"}, ToolResult("t", "out")
    assert await plugins.tool_execute_before(CALL, args) == (args, None)
    assert (await plugins.tool_execute_before(CALL, args))[0] is args
    assert await plugins.tool_execute_after(CALL, result) is result
    assert await plugins.permission_ask(request()) is None
    assert await plugins.chat_message("ses_1", "hi") == []
    assert plugins.tools() == [] and plugins.describe() == [] and reported == []


def test_a_withheld_plugin_is_never_imported(write_plugin, reported, tmp_path):
    marker = tmp_path / "imported"
    write_plugin("project_plugin", f"open({str(marker)!r}, 'w').close()\n")
    plugins = load(reported, "project_plugin", withheld={"project_plugin": "the project's plugin is not approved"})
    assert not marker.exists()
    assert [(i.loaded, i.outcome) for i in plugins.describe()] == [
        (False, "not loaded: the project's plugin is not approved")]


# ------------------------------------------------------------------------------------------ entry points


def install_distribution(site: Path, name: str, entry_points: str) -> None:
    """A distribution as pip leaves it: its dist-info, with the entry points, in a folder on the import path."""
    info = site / f"{name}-1.2.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.2\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points), encoding="utf-8")


async def test_an_installed_plugin_is_found_through_its_entry_point(write_plugin, reported, tmp_path):
    write_plugin("audit_hooks", """
        log = []
        class Audit:
            def tool_execute_before(self, call):
                log.append(call.tool)
        plugin = Audit()
    """)
    install_distribution(tmp_path / "plugins", "nb-audit", f"""
        [{ENTRY_POINT_GROUP}]
        audit = audit_hooks:plugin
    """)
    plugins = Plugins.load([], report=reported.append)
    audit = [i for i in plugins.describe() if i.name == "audit"]
    assert [(i.source, i.where, i.hooks) for i in audit] == [
        ("entry point", "entry point audit = audit_hooks:plugin of nb-audit 1.2", ("tool.execute.before",))]
    await plugins.tool_execute_before(CALL, {})
    assert sys.modules["audit_hooks"].log == ["bash"]


async def test_a_plugin_both_configured_and_installed_runs_once(write_plugin, reported, tmp_path):
    write_plugin("twice", "log = []\ndef session_idle(session_id):\n    log.append(session_id)\n")
    install_distribution(tmp_path / "plugins", "nb-twice", f"[{ENTRY_POINT_GROUP}]\ntwice = twice\n")
    plugins = Plugins.load(["twice"], report=reported.append)
    await plugins.session_idle("ses_1")
    assert sys.modules["twice"].log == ["ses_1"]
    assert [i.source for i in plugins.describe() if "twice" in i.name] == ["config"]


# ------------------------------------------------------------------------------------------ tools


async def test_a_plugin_offers_tools_as_functions_and_as_tool_objects(write_plugin, reported, tmp_path):
    write_plugin("wordtools", """
        from opencode_nb import tool
        from opencode_nb.tool.bash import BashTool

        @tool(description="Count the words of a text.")
        def word_count(text: str) -> int:
            return len(text.split())

        def shout(text: str) -> str:
            '''The text in capitals.'''
            return text.upper()

        class Grep(BashTool):
            id = "grep"  # a built-in's name: refused

        tools = [word_count, shout, Grep()]
    """)
    plugins = load(reported, "wordtools")
    assert [t.id for t in plugins.tools()] == ["word_count", "shout"]
    assert len(reported) == 1 and "its tool grep is not offered: `grep` is the name of a built-in permission" \
        in reported[0]
    registry = default_registry()
    for made in plugins.tools():
        registry.add(made)
    ctx = RecordingContext(tmp_path)
    result = await registry.get("word_count").run({"text": "one two three"}, ctx)
    assert result.output.startswith("Called word_count(text='one two three').") and "Out:\n3" in result.output
    assert ctx.permissions() == [("word_count", ["word_count"])], "a plugin's function asks as a person's does"
    assert registry.get("word_count").spec().description == (
        "Count the words of a text.\n\n(A function of the plugin wordtools, `word_count(text: str) -> int`; what it "
        "returns is the result.)")
    assert registry.get("shout").spec().description.startswith("The text in capitals.\n\n(A function of the plugin")


# ------------------------------------------------------------------------------------------ configuration


def test_the_configuration_lists_plugins_and_a_single_one_needs_no_list(tmp_path):
    project = Project(tmp_path)
    project.write("repo/opencode.yaml", "plugin: my_pkg.hooks:plugin\n")
    assert project.load().config.plugin == ["my_pkg.hooks:plugin"]
    project.write("repo/opencode.yaml", "plugin: [my_pkg.hooks:plugin, audit]\n")
    assert project.load().config.plugin == ["my_pkg.hooks:plugin", "audit"]


def test_a_file_path_is_no_plugin_and_the_error_says_what_to_write(tmp_path):
    project = Project(tmp_path)
    path = project.write("repo/opencode.yaml", "plugin:\n  - my_pkg.hooks:plugin\n  - ./hooks/guard.py\n")
    with pytest.raises(ConfigError) as err:
        project.load()
    assert str(err.value) == (
        f"{path}:3 plugin.1: './hooks/guard.py': not an importable name (a file path is not one: put its folder on "
        "the import path and name the module): write the module, and after a colon the object in it, e.g. "
        "my_pkg.hooks:plugin")
