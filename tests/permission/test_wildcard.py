import pytest

from opencode_nb.permission import wildcard_match


@pytest.mark.parametrize(
    ("text", "pattern", "expected"),
    [
        ("ls", "ls *", True),
        ("ls -la", "ls *", True),
        ("ls a b", "ls *", True),
        ("lstmeval", "ls *", False),
        ("lstmeval", "ls*", True),
        ("git", "git * *", False),
        ("git a b", "git * *", True),
        ("src/a/b.ts", "src/*", True),
        ("a.py", "?.py", True),
        ("ab.py", "?.py", False),
        ("line1\nline2", "line1*", True),
        ("ls\n", "ls", False),
    ],
)
def test_star_question_mark_and_the_optional_trailing_space_star(text, pattern, expected):
    assert wildcard_match(text, pattern) is expected


@pytest.mark.parametrize("meta", [".", "+", "(", ")", "[", "]", "$", "^", "|", "{", "}"])
def test_regex_metacharacters_are_literal(meta):
    assert wildcard_match(f"a{meta}b", f"a{meta}b")
    assert not wildcard_match("axb", f"a{meta}b")


def test_the_whole_text_must_match():
    assert not wildcard_match("rm -rf /", "rm")
    assert not wildcard_match("xls", "ls")


def test_backslashes_count_as_slashes_on_both_sides():
    assert wildcard_match("src\\a\\b.py", "src/*")
    assert wildcard_match("src/a.py", "src\\*")
