"""An ask says what it is for in the person's words: a shell line once, as written (its patterns also hold
the words as they run, for the rules); a file named from the folder the person works in, as the card names it,
while the pattern the rules match stays the repository's; a diff names a file outside that folder as a path
a person would write. Its buttons show their whole labels, in rows that wrap, and a coloured button's label
keeps 4.5:1 against it whatever the theme."""

from __future__ import annotations

import re
from pathlib import Path

import ipywidgets as widgets
import pytest

from opencode_nb.permission.events import PermissionRequest
from opencode_nb.permission.named import with_named_paths
from opencode_nb.question.events import QuestionInfo, QuestionOption, QuestionRequest
from opencode_nb.tool.files.textfile import unified_diff
from opencode_nb.tool.shell.parse import parse_command
from opencode_nb.views.asks import always_note, permission_html, permission_record_html, permission_record_text
from opencode_nb.views.buttons import PLACEHOLDER_FITS
from opencode_nb.views.colors import BUTTON_TEXT, BUTTONS
from opencode_nb.views.permission import PermissionPromptView
from opencode_nb.views.question import QuestionPromptView
from opencode_nb.views.tool_card import ToolCardView

REPO = Path("/home/ana/project")
PLAY = REPO / "play"


def bash_ask(command: str) -> PermissionRequest:
    parsed = parse_command(command)
    return PermissionRequest(id="per_1", session_id="ses_1", agent="build", permission="bash",
                             patterns=parsed.patterns, always=parsed.always, metadata={"command": command})


def path_ask(permission: str, patterns: list[str], always: list[str] | None = None,
             directory: Path = PLAY) -> PermissionRequest:
    always = ["*"] if always is None else always
    metadata = with_named_paths(permission, patterns, always, {"path": "/abs"}, directory, REPO)
    return PermissionRequest(id="per_1", session_id="ses_1", agent="build", permission=permission,
                             patterns=patterns, always=always, metadata=metadata)


def bullets(html: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", item) for item in re.findall(r"<li>(.*?)</li>", html)]


def test_a_shell_line_is_listed_once_as_written_though_its_patterns_hold_the_words_as_they_run() -> None:
    request = bash_ask("echo b > b.txt")
    assert request.patterns == ["echo b > b.txt", "echo b"], "the rules still see both"
    assert bullets(permission_html(request)) == ["echo b &gt; b.txt"]
    assert permission_record_text(request, "once") == "? build asked for bash echo b > b.txt: allowed once"
    assert "<code>echo b &gt; b.txt</code> — allowed once" in permission_record_html(request, "once")


@pytest.mark.parametrize("command", ["ls && rm -rf build", "FOO=1 rm x > log", '"/bin/rm" x', "sudo rm x",
                                     "git -C . push", "ls | grep foo > out.txt"])
def test_every_shell_line_is_shown_once_whatever_its_patterns(command: str) -> None:
    request = bash_ask(command)
    html = permission_html(request)
    assert bullets(html) == [command.replace("&", "&amp;").replace(">", "&gt;").replace('"', "&quot;")]
    assert html.count("<pre") == 0, "the line is not repeated below its bullet"
    record = permission_record_text(request, "reject")
    assert record == f"? build asked for bash {command}: rejected"


def test_what_always_would_grant_for_a_shell_line_stays_its_prefixes() -> None:
    assert always_note(bash_ask("echo b > b.txt")) == "bash echo * by build in this session"


def test_a_file_of_the_notebooks_folder_is_named_from_it_and_the_rules_still_match_the_repositorys_path() -> None:
    request = path_ask("edit", ["play/notes.md"])
    assert request.patterns == ["play/notes.md"]
    assert bullets(permission_html(request)) == ["notes.md"]
    assert permission_record_text(request, "once") == "? build asked for edit notes.md: allowed once"
    record = permission_record_html(request, "always")
    assert "<code>notes.md</code>" in record and "play/" not in record


@pytest.mark.parametrize(("permission", "pattern", "named"), [
    ("read", "src/stats.py", "../src/stats.py"),
    ("list", "play", "."),
    ("list", "play/data", "data"),
    ("git_internals", ".git/hooks/pre-commit", "../.git/hooks/pre-commit"),
    ("agent_config", "play/opencode.yaml", "opencode.yaml"),
    ("read", "/etc/hosts", "/etc/hosts"),
])
def test_every_ask_that_names_a_path_names_it_from_the_working_folder(permission: str, pattern: str,
                                                                      named: str) -> None:
    request = path_ask(permission, [pattern], always=[pattern])
    assert bullets(permission_html(request)) == [named]
    assert permission_record_text(request, "once") == f"? build asked for {permission} {named}: allowed once"
    assert always_note(request) == f"{permission} {named} by build in this session"


def test_at_the_repositorys_root_an_ask_is_as_before_and_other_permissions_are_left_alone() -> None:
    assert "named" not in path_ask("edit", ["notes.md"], directory=REPO).metadata
    assert with_named_paths("webfetch", ["https://x.org"], ["*"], {}, PLAY, REPO) == {}
    assert with_named_paths("bash", ["cat play/x"], [], {"command": "cat play/x"}, PLAY, REPO) == {
        "command": "cat play/x"}


def test_a_diff_names_a_file_outside_the_working_folder_as_a_person_would_write_it() -> None:
    plan = unified_diff("../.opencode/plans/x.md", "", "# Plan\n")
    assert plan.startswith("--- ../.opencode/plans/x.md\n+++ ../.opencode/plans/x.md\n")
    assert "a/../" not in plan
    assert unified_diff("notes.md", "", "x\n").startswith("--- a/notes.md\n+++ b/notes.md\n")
    assert unified_diff("/tmp/out.txt", "", "x\n").startswith("--- /tmp/out.txt\n")


def all_buttons(widget: widgets.Widget) -> list[widgets.Button]:
    found, stack = [], [widget]
    while stack:
        w = stack.pop()
        if isinstance(w, widgets.Button):
            found.append(w)
        stack.extend(getattr(w, "children", ()) or ())
    return found


def rows_of(widget: widgets.Widget) -> list[widgets.Box]:
    found, stack = [], [widget]
    while stack:
        w = stack.pop()
        if isinstance(w, widgets.HBox):
            found.append(w)
        stack.extend(getattr(w, "children", ()) or ())
    return found


def contrast(one: str, other: str) -> float:
    def luminance(hex_colour: str) -> float:
        channels = [int(hex_colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
        r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    hi, lo = sorted([luminance(one), luminance(other)], reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def prompts() -> list[widgets.Widget]:
    permission = PermissionPromptView(bash_ask("echo b > b.txt"), lambda *_: None, lambda f, *a: f(*a))
    question = QuestionPromptView(QuestionRequest(id="que_1", session_id="ses_1", agent="plan", questions=[
        QuestionInfo(question="What now?", header="Plan ready", multiple=True,
                     options=[QuestionOption(label="Save them as cells to run one by one"),
                              QuestionOption(label="Keep planning")],
                     custom="Anything to change or add? It goes with the button you click")]),
        lambda *_: None, lambda *_: None, lambda f, *a: f(*a))
    question.choose(0, "Keep planning")  # a chosen option is coloured
    return [permission.widget, question.widget]


def test_every_button_of_an_ask_is_as_wide_as_its_label_in_a_row_that_wraps() -> None:
    for widget in prompts():
        for button in all_buttons(widget):
            layout = button.layout
            assert (layout.width, layout.min_width, layout.flex) == ("auto", "max-content", "0 0 auto"), \
                button.description
        for row in rows_of(widget):
            if any(isinstance(child, widgets.Button) for child in row.children):
                assert row.layout.flex_flow == "row wrap"


def test_every_coloured_button_paints_a_label_that_keeps_aa_contrast_in_any_theme() -> None:
    painted = [b for w in prompts() for b in all_buttons(w) if b.style.button_color]
    assert {b.description for b in painted} >= {"Allow once", "Always allow", "Reject", "Keep planning", "Submit"}
    for button in painted:
        assert button.button_style == "", "the theme's own colour for the kind is not used"
        assert button.style.text_color == BUTTON_TEXT
        assert contrast(button.style.button_color, BUTTON_TEXT) >= 4.5, button.description
    assert all(contrast(colour, BUTTON_TEXT) >= 4.5 for colour in BUTTONS.values())


def test_a_hint_too_long_for_its_field_is_the_line_above_it_and_the_field_holds_a_few_words() -> None:
    for widget in prompts():
        fields = [w for w in _walk(widget) if isinstance(w, widgets.Text)]
        assert fields and all(len(f.placeholder) <= PLACEHOLDER_FITS for f in fields)
        shown = " ".join(w.value for w in _walk(widget) if isinstance(w, widgets.HTML))
        assert ("Or tell the agent what to do instead" in shown
                or "Anything to change or add? It goes with the button you click" in shown)


def test_a_short_hint_stays_the_fields_placeholder() -> None:
    view = QuestionPromptView(QuestionRequest(id="que_1", session_id="ses_1", questions=[
        QuestionInfo(question="Which file?", options=[QuestionOption(label="a.csv")])]),
        lambda *_: None, lambda *_: None, lambda f, *a: f(*a))
    assert [w.placeholder for w in _walk(view.widget) if isinstance(w, widgets.Text)] == ["Type your own answer"]


async def test_the_cards_undo_button_and_the_stop_button_show_their_whole_label(tmp_path: Path) -> None:
    from .test_session import BASH, watched
    from .test_tool_card import python_part

    ws, _, _, view = watched(tmp_path, BASH)
    card = ToolCardView(python_part(created=["x"]), undo=lambda run_id: "Undone: removed x.")
    card.flush()
    assert card.undo_button is not None
    for button in (view.stop_button, card.undo_button):
        assert (button.layout.width, button.layout.min_width, button.layout.flex) == ("auto", "max-content",
                                                                                      "0 0 auto")
    assert contrast(view.stop_button.style.button_color, view.stop_button.style.text_color) >= 4.5
    await ws.aclose()


def _walk(widget: widgets.Widget) -> list[widgets.Widget]:
    found, stack = [], [widget]
    while stack:
        w = stack.pop()
        found.append(w)
        stack.extend(getattr(w, "children", ()) or ())
    return found
